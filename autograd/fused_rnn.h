// The Elman RNN cell, in two forms (PyTorch's nn.RNN layout, nonlinearity tanh):
//
//   h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)        W_ih [H,in], W_hh [H,H]
//
// With a step mask m [B] (1 = still running, 0 = ended), h' = m ⊙ h' + (1 − m) ⊙ h: a finished
// sequence carries its state unchanged and its gradient passes straight through to h.
//
// * rnn_cell_composed builds the cell from primitive ops (linear, add, tanh): the definition.
// * rnn_cell (and rnn_cell_step) is the same function as ONE graph node with a hand-written
//   backward; the input part x W_ihᵀ + b_ih is computed outside the cell, so that a layer can
//   compute it for all time steps in one product (as for the GRU: autograd/fused_gru.h).
#pragma once

#include <cstdint>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// The composed twin, from primitive ops only. x [B,in], h [B,H], weight_ih [H,in],
// weight_hh [H,H], bias_ih [H], bias_hh [H], step_mask [B] / [B,1] (optional, no grad)
// -> h' [B,H].
Tensor rnn_cell_composed(const Tensor& x, const Tensor& h, const Tensor& weight_ih,
                         const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                         const Tensor& step_mask = Tensor());

// Fused cell. input_gates [B,H] = x W_ihᵀ + b_ih, h [B,H], weight_hh [H,H], bias_hh [H],
// step_mask [B] or [B,1] (optional, does not require grad) -> h' [B,H].
Tensor rnn_cell(const Tensor& input_gates, const Tensor& h, const Tensor& weight_hh,
                const Tensor& bias_hh, const Tensor& step_mask = Tensor());

// The same fused cell reading its input gates from step t of all_input_gates [B,T,H], with no
// slice copy: the gradient goes straight into rows [:, t, :] of all_input_gates.
Tensor rnn_cell_step(const Tensor& all_input_gates, int64_t t, const Tensor& h,
                     const Tensor& weight_hh, const Tensor& bias_hh,
                     const Tensor& step_mask = Tensor());

}  // namespace seqgrad
