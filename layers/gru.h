// GRU layers, PyTorch's conventions (gates r, z, n; weight_ih [3H, in], weight_hh [3H, H],
// bias_ih [3H], bias_hh [3H]; all initialised U(-1/√H, 1/√H)). The cell's maths is in
// autograd/fused_gru.h.
//
//   GRUCell  one step: h' = cell(x, h), for a decoder that steps itself.
//   GRU      a whole padded batch [B, T, in] with per-sequence lengths, 1..n layers, optionally
//            bidirectional (an encoder).
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/switches.h"
#include "seqgrad/layers/module.h"

namespace seqgrad {

class GRUCell : public Module {
  public:
    // Parameters "weight_ih" [3H, in], "weight_hh" [3H, H], "bias_ih" [3H], "bias_hh" [3H].
    GRUCell(int64_t input_size, int64_t hidden_size, Rng& rng);

    // x [B, in], h [B, H], step_mask [B] (optional: 1 = step, 0 = keep h) -> h' [B, H].
    // The fused cell: gi = linear(x, W_ih, b_ih), then the gru_cell op (or, with use_fused off,
    // forward_composed).
    Tensor forward(const Tensor& x, const Tensor& h, const Tensor& step_mask = Tensor()) const;
    // The same from primitive ops (gru_cell_composed): many more graph nodes, same numbers.
    Tensor forward_composed(const Tensor& x, const Tensor& h,
                            const Tensor& step_mask = Tensor()) const;

    int64_t input_size() const { return weight_ih.size(1); }
    int64_t hidden_size() const { return weight_hh.size(1); }

    Tensor weight_ih, weight_hh, bias_ih, bias_hh;
    // true: the fused gru_cell op; false: gru_cell_composed (same numbers, many more graph
    // nodes). Off by default only under SEQGRAD_DISABLE=fused_gru (autograd/switches.h).
    bool use_fused = switches().fused_gru;
};

struct GRUOutput {
    Tensor outputs;       // [B, T, directions*H], zero past each sequence's length
    Tensor final_hidden;  // [layers*directions, B, H] (PyTorch's h_n): each sequence's state
                          // at its own last token (for a reverse direction: at position 0)
    // Every step's state [B, H], index (layer*directions + direction)*T + t, for gradient-flow
    // studies: call retain_grad() on the ones to watch before backward. Past a sequence's
    // length a state holds that sequence's carried state. Their gradients are only those of
    // the loss when the GRU ran the rows in the given order: with GRU::sort_by_length on and
    // lengths not in decreasing order, the recurrence ran on sorted copies and these are
    // gathered from them (right values, no gradient reaches them).
    std::vector<Tensor> step_states;
};

class GRU : public Module {
  public:
    // Layer l > 0 reads the previous layer's outputs (directions*H features). In training mode
    // dropout with probability dropout_between_layers is applied to every layer's outputs
    // except the last one's (as PyTorch does), drawing from `rng`, which must outlive the GRU.
    // Parameters, for each layer l and direction (suffix "" or "_reverse"):
    //   weight_ih_l{l}{suffix} [3H, in_l], weight_hh_l{l}{suffix} [3H, H],
    //   bias_ih_l{l}{suffix} [3H], bias_hh_l{l}{suffix} [3H].
    GRU(int64_t input_size, int64_t hidden_size, int num_layers, bool bidirectional,
        real dropout_between_layers, Rng& rng);

    // inputs [B, T, in] (batch first), lengths [B] each in 1..T, h0 [layers*directions, B, H]
    // (optional, zeros when undefined). Positions t >= lengths[b] never change sequence b's
    // state; the reverse direction starts at each sequence's own last token. Any order of
    // lengths works: the fused path runs the rows sorted by decreasing length, so that the
    // finished sequences form the tail of the batch at every step and the cell skips their
    // rows (as PyTorch's pack_padded_sequence does), and returns everything in the given order.
    GRUOutput forward(const Tensor& inputs, const std::vector<int32_t>& lengths,
                      const Tensor& h0 = Tensor()) const;

    // true: input gates of all steps in one product, then the fused cell per step (training).
    // false: the composed cell per step (gru_cell_composed), to compare or study; same numbers.
    // Off by default only under SEQGRAD_DISABLE=fused_gru (autograd/switches.h).
    bool use_fused = switches().fused_gru;
    // true (fused path): rows run sorted by decreasing length (see forward); false: in the given
    // order, every step on every row, so that step_states are the recurrence's own tensors
    // (what gradient-flow studies need: apps/gradflow.cpp turns this off while it measures).
    // Off by default only under SEQGRAD_DISABLE=shrink_batch.
    bool sort_by_length = switches().shrink_batch;

    struct Weights {
        Tensor weight_ih, weight_hh, bias_ih, bias_hh;
    };
    const Weights& weights(int layer, int direction) const;

    int64_t input_size() const { return input_size_; }
    int64_t hidden_size() const { return hidden_size_; }
    int num_layers() const { return num_layers_; }
    int num_directions() const { return directions_; }

  private:
    GRUOutput forward_sorted_by_length(const Tensor& inputs, const std::vector<int32_t>& lengths,
                                       const Tensor& h0) const;

    int64_t input_size_, hidden_size_;
    int num_layers_, directions_;
    real dropout_;
    Rng& rng_;
    std::vector<Weights> weights_;  // index layer*directions + direction
};

}  // namespace seqgrad
