// The primitive ops. Each computes its result at once and, when an input requires grad, records
// how to push the result's gradient back (forward and backward sit side by side in the .cpp
// files, grouped by kind: ops_elementwise, ops_matmul, ops_reduce, ops_shape, ops_random).
//
// Shapes: binary elementwise ops broadcast as NumPy does (dims aligned from the right, a size-1
// or missing dim stretches), which covers a bias [H] added to [B,H] and a scalar operand.
// A shape error throws seqgrad::Error naming the op and both shapes.
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// ---- elementwise (ops_elementwise.cpp) --------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b
Tensor add(const Tensor& a, real b);
Tensor mul(const Tensor& a, real b);
Tensor neg(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // x Φ(x), the exact (erf) form, as PyTorch's default
Tensor sqrt(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor clamp(const Tensor& x, real lo, real hi);
// x where mask == 0, `value` where mask != 0. mask (no grad) broadcasts against x.
Tensor masked_fill(const Tensor& x, const Tensor& mask, real value);

inline Tensor operator+(const Tensor& a, const Tensor& b) {
    return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
    return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
    return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
    return div(a, b);
}
inline Tensor operator-(const Tensor& x) {
    return neg(x);
}
inline Tensor operator+(const Tensor& a, real b) {
    return add(a, b);
}
inline Tensor operator+(real a, const Tensor& b) {
    return add(b, a);
}
inline Tensor operator-(const Tensor& a, real b) {
    return add(a, -b);
}
inline Tensor operator-(real a, const Tensor& b) {
    return add(neg(b), a);
}
inline Tensor operator*(const Tensor& a, real b) {
    return mul(a, b);
}
inline Tensor operator*(real a, const Tensor& b) {
    return mul(b, a);
}

// ---- matrix products (ops_matmul.cpp) ---------------------------------------------------------
// C = op(A) op(B), op = identity or transpose of the last two dims, through cblas_?gemm with
// transpose flags (never a transposed copy). Ranks: [n,m]x[m,p]; batched [B,n,m]x[B,m,p];
// and [B,n,m]x[m,p] (one gemm over B*n rows). 3-D ⊗ 2-D allows only transpose_b.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// y = x Wᵀ + b (PyTorch's Linear layout: weight [out, in], bias [out] or undefined); x [..., in].
// Inside a kernels::SharedOverStepsScope that lists `weight`, the scope's view of it is used.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ---- reductions and normalisations (ops_reduce.cpp) ------------------------------------------
Tensor sum(const Tensor& x);                                  // over all elements -> []
Tensor mean(const Tensor& x);                                 // over all elements -> []
Tensor sum(const Tensor& x, int dim, bool keepdim = false);   // along one dim
Tensor mean(const Tensor& x, int dim, bool keepdim = false);  // along one dim
// Along the last dim, stable (the row max is subtracted). A row whose entries are all -inf
// (everything masked) is an error, not NaN.
Tensor softmax(const Tensor& x);
Tensor log_softmax(const Tensor& x);

// ---- shapes and indexing (ops_shape.cpp) -----------------------------------------------------
// A view with the same data; one size may be -1 (inferred).
Tensor reshape(const Tensor& x, std::initializer_list<int64_t> sizes);
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor transpose(const Tensor& x);  // swaps the last two dims (a copy: results are contiguous)
// swaps dims dim0 and dim1 (PyTorch's x.transpose(dim0, dim1)), e.g. [B,T,h,d] -> [B,h,T,d]; a copy
Tensor transpose(const Tensor& x, int dim0, int dim1);
Tensor concat(const std::vector<Tensor>& xs, int dim);
// [start, end) along dim. When the slice is one contiguous block (every dim before `dim` has
// size 1, e.g. the first n rows of a batch) the result is a view sharing x's data, as reshape.
Tensor slice(const Tensor& x, int dim, int64_t start, int64_t end);
Tensor stack(const std::vector<Tensor>& xs, int dim);  // new dim of size xs.size()
// Rows of `weight` [V, E] picked by `ids` (shape ids_shape) -> [ids_shape..., E]. Backward
// scatter-adds (repeated ids accumulate); the row `padding_idx` (if >= 0) gets no gradient.
Tensor embedding(const Tensor& weight, const std::vector<int32_t>& ids, const Shape& ids_shape,
                 int32_t padding_idx = -1);

// Rows of x along its first dim: out[i] = x[rows[i]] -> [rows.size(), x's other dims...].
// Backward scatter-adds (a repeated row accumulates). To reorder a batch, e.g. by length.
Tensor gather_rows(const Tensor& x, const std::vector<int32_t>& rows);

// ---- randomness (ops_random.cpp) -------------------------------------------------------------
// Inverted dropout: in training, zero each element with probability p and scale the rest by
// 1/(1-p), so that eval mode is the identity.
Tensor dropout(const Tensor& x, real p, bool training, Rng& rng);

}  // namespace seqgrad
