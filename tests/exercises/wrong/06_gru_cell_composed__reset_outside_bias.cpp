// expect: r multiplies W_hn h only
// A wrong answer to 06_gru_cell_composed for the grader's tests: r ⊙ (W_hn h) + b_hn.
// Exercise 06: a GRU cell composed from ops (PyTorch's layout, gates in the order r, z, n).
//
//   x [B,in], h [B,H], weight_ih [3H,in], weight_hh [3H,H], bias_ih [3H], bias_hh [3H]
//   gi = x W_ihᵀ + b_ih   [B,3H] = gi_r | gi_z | gi_n     (linear(x, weight_ih, bias_ih))
//   gh = h W_hhᵀ + b_hh   [B,3H] = gh_r | gh_z | gh_n     (slice(t, 1, 0, H) ...)
//   r  = σ(gi_r + gh_r)                  reset gate
//   z  = σ(gi_z + gh_z)                  update gate
//   n  = tanh(gi_n + r ⊙ gh_n)           candidate (r gates the hidden part only)
//   h' = (1 − z) ⊙ n + z ⊙ h             [B,H]
// Compose it from the library's ops (autograd/ops.h); their backwards give the gradient.
#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor gru_cell_composed(const Tensor& x, const Tensor& h, const Tensor& weight_ih,
                         const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh) {
    const int64_t H = h.size(1);
    Tensor gi = linear(x, weight_ih, bias_ih), gh = linear(h, weight_hh, bias_hh);
    Tensor ghn = linear(h, slice(weight_hh, 0, 2 * H, 3 * H));
    Tensor r = seqgrad::sigmoid(slice(gi, 1, 0, H) + slice(gh, 1, 0, H));
    Tensor z = seqgrad::sigmoid(slice(gi, 1, H, 2 * H) + slice(gh, 1, H, 2 * H));
    Tensor n =
        seqgrad::tanh(slice(gi, 1, 2 * H, 3 * H) + r * ghn + slice(bias_hh, 0, 2 * H, 3 * H));
    return (1 - z) * n + z * h;
}

}  // namespace seqgrad::exercises
