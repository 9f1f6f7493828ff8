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
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
