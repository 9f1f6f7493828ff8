// The WebAssembly build's matrix product (SEQGRAD_WASM; cmake/wasm.cmake): gemm's contract
// (autograd/kernels/gemm.h) computed with WebAssembly SIMD (128-bit lanes, four floats), since
// no BLAS exists there. In double (the gradient-check build) it is the reference loops.
//   C [M, N] = alpha op(A) op(B) + beta C;  beta == 0 overwrites C (NaN in C is not read).
// tests/wasm/test_wasm_kernels.cpp holds it equal to kernels::reference::gemm.
#pragma once

#include <cstdint>

#include "seqgrad/autograd/real.h"

namespace seqgrad::kernels::wasm {

void gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, const real* B, real beta, real* C);

}  // namespace seqgrad::kernels::wasm
