// GRU layers, PyTorch's conventions (gates r, z, n; weight_ih [3H, in], weight_hh [3H, H],
// bias_ih [3H], bias_hh [3H]; all initialised U(-1/√H, 1/√H)). The cell's maths is in
// autograd/fused_gru.h; the layer is the shared recurrent driver (layers/recurrent.h).
//
//   GRUCell  one step: h' = cell(x, h), for a decoder that steps itself.
//   GRU      a whole padded batch [B, T, in] with per-sequence lengths, 1..n layers, optionally
//            bidirectional (an encoder).
#pragma once

#include <cstdint>

#include "seqgrad/layers/recurrent.h"

namespace seqgrad {

class GRUCell : public RecurrentCell {
  public:
    // Parameters "weight_ih" [3H, in], "weight_hh" [3H, H], "bias_ih" [3H], "bias_hh" [3H].
    // fused: the fused cell op, or (false) its composed twin (use_fused).
    GRUCell(int64_t input_size, int64_t hidden_size, Rng& rng, bool fused = true)
        : RecurrentCell(CellType::gru, input_size, hidden_size, rng, fused) {}

    // x [B, in], h [B, H], step_mask [B] (optional: 1 = step, 0 = keep h) -> h' [B, H].
    // The fused cell: gi = linear(x, W_ih, b_ih), then the gru_cell op (or, with use_fused off,
    // forward_composed). The same as step({h}).h.
    Tensor forward(const Tensor& x, const Tensor& h, const Tensor& step_mask = Tensor()) const;
    // The same from primitive ops (gru_cell_composed): many more graph nodes, same numbers.
    Tensor forward_composed(const Tensor& x, const Tensor& h,
                            const Tensor& step_mask = Tensor()) const;
};

// The GRU over a padded batch: Recurrent (layers/recurrent.h) with the GRU cell; parameters
// weight_ih_l{l}{_reverse} [3H, in_l], weight_hh_l{l}{_reverse} [3H, H], bias_ih_l..., bias_hh_l...
class GRU : public Recurrent {
  public:
    // fused: the fused cell ops, or (false) their composed twins (use_fused).
    GRU(int64_t input_size, int64_t hidden_size, int num_layers, bool bidirectional,
        real dropout_between_layers, Rng& rng, bool fused = true)
        : Recurrent(CellType::gru, input_size, hidden_size, num_layers, bidirectional,
                    dropout_between_layers, rng, fused) {}
};

using GRUOutput = RecurrentOutput;

}  // namespace seqgrad
