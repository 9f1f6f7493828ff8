// Exercise 03: matmul and its backward.
//
//   2-D:      A [n,m] × B [m,p] -> C [n,p],      C_ij = Σ_k A_ik B_kj
//   batched:  A [N,n,m] × B [N,m,p] -> C [N,n,p] (one product per batch entry)
//   backward: dA = dC Bᵀ   (dA_ik += Σ_j dC_ij B_kj)
//             dB = Aᵀ dC   (dB_kj += Σ_i A_ik dC_ij)
// Any other shapes: throw seqgrad::Error naming both shapes. Plain loops are fine here (the
// library calls BLAS: autograd/ops_matmul.cpp).
#include <fmt/format.h>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor matmul(const Tensor& a, const Tensor& b) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
