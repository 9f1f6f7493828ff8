// Recurrent layers: the Elman RNN, the GRU and the LSTM, in PyTorch's layouts, with ONE driver
// for all three (Recurrent::forward: layers, directions, padded batches, finished rows skipped).
//
// The cells, with their gates in PyTorch's order (the maths of each is in its autograd header):
//   rnn   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)                 autograd/fused_rnn.h
//   gru   r, z, n;  h' = (1 − z) ⊙ n + z ⊙ h                       autograd/fused_gru.h
//   lstm  i, f, g, o;  c' = f ⊙ c + i ⊙ g,  h' = o ⊙ tanh(c')      autograd/fused_lstm.h
// Each has weight_ih [G,in], weight_hh [G,H], bias_ih [G], bias_hh [G] with G = gates·H (gates =
// 1, 3, 4), all initialised U(-1/√H, 1/√H) as PyTorch does. The state is h, and for the LSTM
// the pair (h, c).
//
//   RecurrentCell  one step, for a decoder that steps itself: GRUCell (layers/gru.h), LSTMCell
//                  (layers/lstm.h), RNNCell (layers/rnn.h); make_cell picks one by type.
//   Recurrent      a whole padded batch [B, T, in] with per-sequence lengths, 1..n layers,
//                  optionally bidirectional (an encoder): GRU, LSTM, RNN; make_recurrent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seqgrad/autograd/kernels/switches.h"
#include "seqgrad/layers/module.h"

namespace seqgrad {

enum class CellType { rnn, gru, lstm };

// "rnn" | "gru" | "lstm"; anything else is an Error naming it and the known names.
CellType parse_cell_type(const std::string& name);
const char* cell_type_name(CellType type);   // "rnn", "gru", "lstm"
const char* cell_layer_name(CellType type);  // "RNN", "GRU", "LSTM": the layers' names
// Gates per hidden unit, the G/H of the weights: rnn 1, gru 3, lstm 4.
int64_t cell_gate_count(CellType type);

// A cell's state: h [B,H], and the LSTM's cell state c [B,H] (undefined for RNN and GRU).
struct RecurrentState {
    Tensor h;
    Tensor c;
};

// The four weights of one cell (or of one layer and direction of a Recurrent).
struct CellWeights {
    Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};

// One step of a `type` cell from primitive ops (gru_cell_composed, lstm_cell_composed,
// rnn_cell_composed): x [B,in], state [B,H] each, step_mask [B] (optional: 1 = step, 0 = keep
// the state) -> the new state.
RecurrentState cell_step_composed(CellType type, const CellWeights& w, const Tensor& x,
                                  const RecurrentState& state, const Tensor& step_mask = Tensor());
// The same with the fused op, reading the input gates x W_ihᵀ + b_ih from step t of
// all_input_gates [B,T,G] (gru_cell_step, lstm_cell_step, rnn_cell_step).
RecurrentState cell_step_fused(CellType type, const CellWeights& w, const Tensor& all_input_gates,
                               int64_t t, const RecurrentState& state,
                               const Tensor& step_mask = Tensor());

// One step of a cell: GRUCell, LSTMCell and RNNCell are this class with their type.
// Parameters "weight_ih" [G,in], "weight_hh" [G,H], "bias_ih" [G], "bias_hh" [G].
class RecurrentCell : public Module {
  public:
    // x [B,in], state.h (and for the LSTM state.c) [B,H], step_mask [B] (optional: 1 = step,
    // 0 = keep the state) -> the new state. Fused: gi = linear(x, W_ih, b_ih), then the fused
    // cell; with use_fused off, the composed cell (same numbers, many more graph nodes).
    virtual RecurrentState step(const Tensor& x, const RecurrentState& state,
                                const Tensor& step_mask = Tensor()) const;
    virtual CellType type() const { return type_; }
    // zeros [B,H] (and c for the LSTM): the state a sequence starts from by default
    RecurrentState zero_state(int64_t batch) const;

    int64_t input_size() const { return weight_ih.size(1); }
    int64_t hidden_size() const { return weight_hh.size(1); }
    // The weights every step multiplies by (for kernels::SharedOverStepsScope).
    virtual std::vector<Tensor> step_weights() const { return {weight_ih, weight_hh}; }
    CellWeights weights() const { return {weight_ih, weight_hh, bias_ih, bias_hh}; }

    Tensor weight_ih, weight_hh, bias_ih, bias_hh;
    // true: the fused op; false: the composed twin. Off by default only under
    // SEQGRAD_DISABLE=fused_gru / fused_lstm / fused_rnn (autograd/kernels/switches.h).
    bool use_fused;

  protected:
    RecurrentCell(CellType type, int64_t input_size, int64_t hidden_size, Rng& rng);
    // "GRUCell(3 -> 4)", for errors
    std::string describe() const;

  private:
    CellType type_;
};

std::unique_ptr<RecurrentCell> make_cell(CellType type, int64_t input_size, int64_t hidden_size,
                                         Rng& rng);

struct RecurrentOutput {
    Tensor outputs;       // [B, T, directions*H], zero past each sequence's length
    Tensor final_hidden;  // [layers*directions, B, H] (PyTorch's h_n): each sequence's state
                          // at its own last token (for a reverse direction: at position 0)
    Tensor final_cell;    // [layers*directions, B, H] (PyTorch's c_n): the LSTM's cell state,
                          // as final_hidden (undefined for RNN and GRU)
    // Every step's h [B, H], index (layer*directions + direction)*T + t, for gradient-flow
    // studies: call retain_grad() on the ones to watch before backward. Past a sequence's
    // length a state holds that sequence's carried state. Their gradients are only those of
    // the loss when the layer ran the rows in the given order: with sort_by_length on and
    // lengths not in decreasing order, the recurrence ran on sorted copies and these are
    // gathered from them (right values, no gradient reaches them).
    std::vector<Tensor> step_states;
};

// A recurrent layer over a padded batch: GRU (layers/gru.h), LSTM (layers/lstm.h) and RNN
// (layers/rnn.h) are this class with their cell type.
class Recurrent : public Module {
  public:
    // Layer l > 0 reads the previous layer's outputs (directions*H features). In training mode
    // dropout with probability dropout_between_layers is applied to every layer's outputs
    // except the last one's (as PyTorch does), drawing from `rng`, which must outlive the layer.
    // Parameters, for each layer l and direction (suffix "" or "_reverse"):
    //   weight_ih_l{l}{suffix} [G, in_l], weight_hh_l{l}{suffix} [G, H],
    //   bias_ih_l{l}{suffix} [G], bias_hh_l{l}{suffix} [G].
    Recurrent(CellType type, int64_t input_size, int64_t hidden_size, int num_layers,
              bool bidirectional, real dropout_between_layers, Rng& rng);

    // inputs [B, T, in] (batch first), lengths [B] each in 1..T, h0 [layers*directions, B, H]
    // (optional, zeros when undefined), c0 likewise (LSTM only). Positions t >= lengths[b]
    // never change sequence b's state; the reverse direction starts at each sequence's own last
    // token. Any order of lengths works: the fused path runs the rows sorted by decreasing
    // length, so that the finished sequences form the tail of the batch at every step and the
    // cell skips their rows (as PyTorch's pack_padded_sequence does), and returns everything in
    // the given order.
    RecurrentOutput forward(const Tensor& inputs, const std::vector<int32_t>& lengths,
                            const Tensor& h0 = Tensor(), const Tensor& c0 = Tensor()) const;

    // true: input gates of all steps in one product, then the fused cell per step (training).
    // false: the composed cell per step, to compare or study; same numbers.
    // Off by default only under SEQGRAD_DISABLE=fused_gru / fused_lstm / fused_rnn.
    bool use_fused;
    // true (fused path): rows run sorted by decreasing length (see forward); false: in the given
    // order, every step on every row, so that step_states are the recurrence's own tensors
    // (what gradient-flow studies need: apps/studies/gradflow.cpp turns this off while it measures).
    // Off by default only under SEQGRAD_DISABLE=shrink_batch.
    bool sort_by_length = switches().shrink_batch;

    using Weights = CellWeights;
    const Weights& weights(int layer, int direction) const;

    CellType type() const { return type_; }
    int64_t input_size() const { return input_size_; }
    int64_t hidden_size() const { return hidden_size_; }
    int num_layers() const { return num_layers_; }
    int num_directions() const { return directions_; }

  private:
    RecurrentOutput forward_sorted_by_length(const Tensor& inputs,
                                             const std::vector<int32_t>& lengths, const Tensor& h0,
                                             const Tensor& c0) const;
    // Errors naming the layer and the shapes for inputs forward cannot run
    void check_forward(const Tensor& inputs, const std::vector<int32_t>& lengths, const Tensor& h0,
                       const Tensor& c0) const;
    // "GRU(input 2, hidden 3, 2 layers, bidirectional)", for errors
    std::string describe() const;

    CellType type_;
    int64_t input_size_, hidden_size_;
    int num_layers_, directions_;
    real dropout_;
    Rng& rng_;
    std::vector<Weights> weights_;  // index layer*directions + direction
};

std::unique_ptr<Recurrent> make_recurrent(CellType type, int64_t input_size, int64_t hidden_size,
                                          int num_layers, bool bidirectional,
                                          real dropout_between_layers, Rng& rng);

}  // namespace seqgrad
