// gemm: C = alpha op(A) op(B) + beta C for row-major matrices, op = identity or transpose, so
// that every matrix product in seqgrad — forward and backward — is one call with transpose
// flags, never a transposed copy.
//   op(A): [M, K]  (A stored [M, K], or [K, M] when transpose_a)
//   op(B): [K, N]  (B stored [K, N], or [N, K] when transpose_b)
//   C:     [M, N]
// The reference version (kernels::reference::gemm, autograd/kernels/gemm.cpp) is one cblas_sgemm /
// cblas_dgemm call; the fast one (autograd/kernels/fast/gemm.cpp) sends products of a few rows to a
// kernel of its own (see autograd/kernels/kernels.h for how the build picks one).
#pragma once

#include <cstdint>

#include "seqgrad/autograd/real.h"

namespace seqgrad {

void gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, const real* B, real beta, real* C);

// Number of threads BLAS may use (OpenBLAS). 0 leaves OpenBLAS's own default.
void set_blas_threads(int threads);

namespace kernels::reference {
// gemm's reference version: one cblas_sgemm / cblas_dgemm call (autograd/kernels/gemm.cpp).
void gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, const real* B, real beta, real* C);
}  // namespace kernels::reference

}  // namespace seqgrad
