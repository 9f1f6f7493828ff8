// expect: gradient was overwritten \(=\), not accumulated \(\+=\): an input may feed several ops
// A wrong answer to 04_log_softmax for the grader's tests:
// the backward assigns dx (=) instead of adding (+=).
// Exercise 04: the stable log_softmax and its backward, along the last dim.
//
//   x [..., n] seen as rows of n:
//   m_r   = max_j x_rj                        (subtract it: e^x overflows for x ~ 1000)
//   lse_r = m_r + ln Σ_j e^(x_rj − m_r)
//   y_rj  = x_rj − lse_r
//   dx_rj += dy_rj − softmax_rj Σ_k dy_rk,    softmax_rj = e^(y_rj)
// A row may hold −inf entries (masked positions); they get y = −inf.
#include <algorithm>
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor log_softmax(const Tensor& x) {
    const int64_t n = x.size(-1), rows = x.numel() / n;
    Tensor y = make_result(x.shape());
    for (int64_t r = 0; r < rows; ++r) {
        const real* xr = x.data() + r * n;
        real* yr = y.data() + r * n;
        real m = *std::max_element(xr, xr + n);
        double total = 0;
        for (int64_t j = 0; j < n; ++j) total += std::exp(xr[j] - m);
        real lse = m + real(std::log(total));
        for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - lse;
    }
    record(y, "exercise_log_softmax", {x}, [n, rows](Node& out) {
        real* dx = parent_grad(out, 0);
        if (!dx) return;
        for (int64_t r = 0; r < rows; ++r) {
            const real *yr = out.data + r * n, *dy = out.grad.data() + r * n;
            real total = 0;
            for (int64_t j = 0; j < n; ++j) total += dy[j];
            for (int64_t j = 0; j < n; ++j) dx[r * n + j] = dy[j] - std::exp(yr[j]) * total;
        }
    });
    return y;
}

}  // namespace seqgrad::exercises
