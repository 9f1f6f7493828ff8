// expect: gradient was overwritten \(=\), not accumulated \(\+=\): an input may feed several ops
// A wrong answer to 16_layer_norm for the grader's tests:
// the backward assigns dx (=) instead of adding (+=).
// Exercise 16: layer normalisation over the last dimension, forward and backward (one op).
//
// x [..., E] (rows of E values),  weight [E],  bias [E]  ->  y [..., E]; for each row:
//   μ  = Σ_j x_j / E
//   σ² = Σ_j (x_j − μ)² / E           divided by E, not E − 1 (the biased variance, as PyTorch)
//   r  = 1 / √(σ² + ε)                ε inside the square root
//   x̂_j = (x_j − μ) r,   y_j = x̂_j w_j + b_j
// Backward, from dy (per row), with ĝ_j = dy_j w_j:
//   dx_j += r (ĝ_j − mean_k ĝ_k − x̂_j mean_k(ĝ_k x̂_k))
//           (the 2nd term is the gradient through μ, the 3rd the one through σ²)
//   dw_j += Σ_rows dy_j x̂_j,   db_j += Σ_rows dy_j
// Write it as ONE op, as in 07: make_result, then record(y, "layer_norm", {x, weight, bias}, ...)
// with a backward that saves μ and r of every row (e.g. a std::vector captured by the lambda).
// Compute μ and σ² in double. The grader checks that y is one node whose parents are x, weight,
// bias.
#include <cmath>
#include <vector>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, real eps) {
    const int64_t E = x.size(-1), rows = x.numel() / E;
    Tensor y = make_result(x.shape());
    std::vector<double> mu(static_cast<size_t>(rows)), r(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
        const real* xi = x.data() + i * E;
        double sum = 0, squares = 0;
        for (int64_t j = 0; j < E; ++j) sum += xi[j];
        mu[size_t(i)] = sum / double(E);
        for (int64_t j = 0; j < E; ++j)
            squares += (xi[j] - mu[size_t(i)]) * (xi[j] - mu[size_t(i)]);
        r[size_t(i)] = 1 / std::sqrt(squares / double(E) + double(eps));
        for (int64_t j = 0; j < E; ++j)
            y.data()[i * E + j] =
                real((xi[j] - mu[size_t(i)]) * r[size_t(i)]) * weight.data()[j] + bias.data()[j];
    }
    record(y, "layer_norm", {x, weight, bias}, [E, rows, mu, r](Node& out) {
        real *dx = parent_grad(out, 0), *dw = parent_grad(out, 1), *db = parent_grad(out, 2);
        const real *x = out.parent(0).data, *w = out.parent(1).data, *dy = out.grad.data();
        for (int64_t i = 0; i < rows; ++i) {
            const real *xi = x + i * E, *dyi = dy + i * E;
            double mean_g = 0, mean_gx = 0;
            for (int64_t j = 0; j < E; ++j) {
                const double xhat = (xi[j] - mu[size_t(i)]) * r[size_t(i)];
                mean_g += dyi[j] * w[j] / double(E);
                mean_gx += dyi[j] * w[j] * xhat / double(E);
                if (dw) dw[j] += real(dyi[j] * xhat);
                if (db) db[j] += dyi[j];
            }
            if (!dx) continue;
            for (int64_t j = 0; j < E; ++j) {
                const double xhat = (xi[j] - mu[size_t(i)]) * r[size_t(i)];
                dx[i * E + j] = real(r[size_t(i)] * (dyi[j] * w[j] - mean_g - xhat * mean_gx));
            }
        }
    });
    return y;
}

}  // namespace seqgrad::exercises
