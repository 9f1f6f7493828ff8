// Layer normalisation over the last dimension (PyTorch's nn.LayerNorm(E), F.layer_norm), fused
// into one pass with a hand-written backward.
//
// Shapes:  x [..., E] (any rank up to 4),  weight [E],  bias [E],  y [..., E]
//
// Maths, for each row x of E values:
//   μ = Σ_j x_j / E,   σ² = Σ_j (x_j − μ)² / E   (biased, as PyTorch),   r = 1 / √(σ² + ε)
//   x̂_j = (x_j − μ) r,   y_j = x̂_j w_j + b_j
// Backward, with ĝ_j = dy_j w_j:
//   dx_j += r (ĝ_j − mean_k ĝ_k − x̂_j mean_k(ĝ_k x̂_k))
//   dw_j += Σ_rows dy_j x̂_j,   db_j += Σ_rows dy_j
//
// The composed twin (mean, sub, mul, sqrt, div, add with broadcasting) is layer_norm_composed in
// layers/layer_norm.h; tests/unit/test_transformer_ops.cpp shows they agree. The fused op makes two
// passes over x instead of about nine ops' worth, and keeps only μ and r per row for the backward.
#pragma once

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// y = (x − μ) / √(σ² + ε) ⊙ weight + bias over the last dim. weight and bias may be undefined
// (then 1 and 0).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, real eps = 1e-5);

}  // namespace seqgrad
