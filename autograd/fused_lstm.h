// The LSTM cell, in two forms (PyTorch's nn.LSTM layout and gate order i, f, g, o):
//
//   a  = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh   [B,4H] = a_i | a_f | a_g | a_o
//   i  = σ(a_i)                            input gate
//   f  = σ(a_f)                            forget gate
//   g  = tanh(a_g)                         candidate cell state
//   o  = σ(a_o)                            output gate
//   c' = f ⊙ c + i ⊙ g                     new cell state
//   h' = o ⊙ tanh(c')                      new hidden state
//
// The state is the pair (h, c). With a step mask m [B] (1 = still running, 0 = ended):
// h' = m ⊙ h' + (1 − m) ⊙ h and c' = m ⊙ c' + (1 − m) ⊙ c, so a finished sequence carries both
// unchanged and their gradients pass straight through.
//
// Both forms return the new state as ONE tensor hc' [2,B,H]: hc'[0] = h', hc'[1] = c' (slices of
// it along dim 0 are views, so taking h' and c' apart copies nothing).
//
// * lstm_cell_composed builds the cell from primitive ops: read it first, it is the definition.
// * lstm_cell (and lstm_cell_step) is the same function as ONE graph node with a hand-written
//   backward; the input gates x W_ihᵀ + b_ih are computed outside the cell, so that a layer can
//   compute them for all time steps in one product (as for the GRU: autograd/fused_gru.h).
#pragma once

#include <cstdint>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// The composed twin, from primitive ops only. x [B,in], h [B,H], c [B,H], weight_ih [4H,in],
// weight_hh [4H,H], bias_ih [4H], bias_hh [4H], step_mask [B] / [B,1] (optional, no grad)
// -> hc' [2,B,H].
Tensor lstm_cell_composed(const Tensor& x, const Tensor& h, const Tensor& c,
                          const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih,
                          const Tensor& bias_hh, const Tensor& step_mask = Tensor());

// Fused cell. input_gates [B,4H] = x W_ihᵀ + b_ih, h [B,H], c [B,H], weight_hh [4H,H],
// bias_hh [4H], step_mask [B] or [B,1] (optional, does not require grad) -> hc' [2,B,H].
Tensor lstm_cell(const Tensor& input_gates, const Tensor& h, const Tensor& c,
                 const Tensor& weight_hh, const Tensor& bias_hh,
                 const Tensor& step_mask = Tensor());

// The same fused cell reading its input gates from step t of all_input_gates [B,T,4H] (the
// input gates of every step, from one linear over [B*T, in]), with no slice copy: the gradient
// goes straight into rows [:, t, :] of all_input_gates.
Tensor lstm_cell_step(const Tensor& all_input_gates, int64_t t, const Tensor& h, const Tensor& c,
                      const Tensor& weight_hh, const Tensor& bias_hh,
                      const Tensor& step_mask = Tensor());

}  // namespace seqgrad
