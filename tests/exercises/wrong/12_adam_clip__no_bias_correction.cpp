// expect: no bias correction
// A wrong answer to 12_adam_clip for the grader's tests: m̂ = m.
// Exercise 12: Adam with bias correction, and clipping by the global gradient norm.
//
// adam_update: one parameter of n elements, at step t = 1, 2, ... (PyTorch's torch.optim.Adam):
//   m ← β1 m + (1 − β1) g                  (exp_avg, starts at 0)
//   v ← β2 v + (1 − β2) g²                 (exp_avg_sq, starts at 0)
//   m̂ = m / (1 − β1^t),  v̂ = v / (1 − β2^t)     bias correction: early m, v are biased to 0
//   p ← p − lr · m̂ / (√v̂ + eps)           eps AFTER the square root
//
// clip_grad_norm: the global norm over ALL gradients ‖g‖ = √(Σ_params Σ_i g_i²) (sum in double;
// a parameter without a gradient counts as 0: has_grad()). If ‖g‖ > max_norm, scale every
// gradient by max_norm / (‖g‖ + 1e-6). Return ‖g‖ before clipping. A non-finite norm is
// returned as it is and the gradients are left alone.
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

void adam_update(real* param, const real* grad, real* exp_avg, real* exp_avg_sq, int64_t n,
                 int64_t step, double lr, double beta1, double beta2, double eps) {
    const double bias_correction1 = 1;
    const double bias_correction2 = 1;
    for (int64_t i = 0; i < n; ++i) {
        exp_avg[i] = real(beta1 * exp_avg[i] + (1 - beta1) * grad[i]);
        exp_avg_sq[i] = real(beta2 * exp_avg_sq[i] + (1 - beta2) * grad[i] * grad[i]);
        double m_hat = exp_avg[i] / bias_correction1, v_hat = exp_avg_sq[i] / bias_correction2;
        param[i] = real(param[i] - lr * m_hat / (std::sqrt(v_hat) + eps));
    }
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
    double total = 0;
    for (const Tensor& p : params)
        if (p.has_grad())
            for (int64_t i = 0; i < p.numel(); ++i)
                total += double(p.grad_data()[i]) * p.grad_data()[i];
    const double norm = std::sqrt(total);
    if (!std::isfinite(norm) || norm <= max_norm) return norm;
    const real scale = real(max_norm / (norm + 1e-6));
    for (Tensor p : params)
        if (p.has_grad())
            for (int64_t i = 0; i < p.numel(); ++i) p.mutable_grad_data()[i] *= scale;
    return norm;
}

}  // namespace seqgrad::exercises
