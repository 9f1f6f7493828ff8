// The GRU cell, in two forms (PyTorch's layout and gate order r, z, n):
//
//   gi = x W_ihᵀ + b_ih                    [B,3H]  input gates, split into gi_r | gi_z | gi_n
//   gh = h W_hhᵀ + b_hh                    [B,3H]  hidden gates, split into gh_r | gh_z | gh_n
//   r  = σ(gi_r + gh_r)                    reset gate
//   z  = σ(gi_z + gh_z)                    update gate
//   n  = tanh(gi_n + r ⊙ gh_n)             candidate state
//   h' = (1 − z) ⊙ n + z ⊙ h               new state
//
// and, with a step mask m [B] (1 = this sequence is still running at this step, 0 = it has
// ended), h' = m ⊙ h' + (1 − m) ⊙ h: a finished sequence carries its state unchanged and its
// gradient passes straight through to h.
//
// * gru_cell_composed builds the cell from primitive ops (linear, slice, sigmoid, tanh, mul,
//   add, sub): read it first, it is the definition.
// * gru_cell is the same function as ONE graph node with a hand-written backward: one gemm for
//   gh forward, one for dh and one for dW_hh backward, everything else in one pass over [B,H].
//   The input gates gi are computed OUTSIDE the cell, so that an encoder can compute them for
//   all time steps with one large product (see gru_cell_step and layers/gru.cpp).
// A test (tests/unit/test_gru.cpp) shows the two agree in value and every gradient to 1e-12.
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// Fused cell. input_gates [B,3H] = x W_ihᵀ + b_ih, h [B,H], weight_hh [3H,H], bias_hh [3H],
// step_mask [B] or [B,1] (optional, does not require grad) -> h' [B,H].
Tensor gru_cell(const Tensor& input_gates, const Tensor& h, const Tensor& weight_hh,
                const Tensor& bias_hh, const Tensor& step_mask = Tensor());

// The same fused cell reading its input gates from step t of all_input_gates [B,T,3H] (the
// input gates of every step, from one linear over [B*T, in]), with no slice copy and no extra
// graph node: the gradient goes straight into rows [:, t, :] of all_input_gates.
Tensor gru_cell_step(const Tensor& all_input_gates, int64_t t, const Tensor& h,
                     const Tensor& weight_hh, const Tensor& bias_hh,
                     const Tensor& step_mask = Tensor());

// The composed twin, from primitive ops only. x [B,in], h [B,H], weight_ih [3H,in],
// weight_hh [3H,H], bias_ih [3H], bias_hh [3H], step_mask as above -> h' [B,H].
Tensor gru_cell_composed(const Tensor& x, const Tensor& h, const Tensor& weight_ih,
                         const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                         const Tensor& step_mask = Tensor());

// Assembles the per-step states of a recurrence over a padded batch into one tensor:
//   out[b, t, d*H : (d+1)*H] = states[d*T + t][b, :]   if t < lengths[b],   0 otherwise.
// states: directions*T tensors [B,H], direction-major (all steps of direction 0 first, each
// in time order t = 0..T-1); lengths [B], each in 1..T -> [B, T, directions*H].
// Backward: d states[d*T + t][b, :] += d out[b, t, d*H : (d+1)*H] at valid positions.
// One graph node for the whole sequence (instead of a stack, a concat and a mask multiply).
Tensor gather_step_states(const std::vector<Tensor>& states, int directions,
                          const std::vector<int32_t>& lengths);

}  // namespace seqgrad
