// The fast product and the products on weights packed once (the fast build's kernels).
#pragma once

#include <cstdint>

#include "seqgrad/autograd/real.h"

namespace seqgrad::kernels::fast {

// gemm (autograd/kernels/gemm.h): x Wᵀ with at most 8 rows goes to the small-M kernel
// (autograd/kernels/fast/gemm_kernels.h; SEQGRAD_DISABLE=small_m sends it to BLAS), the rest to BLAS.
void gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, const real* B, real beta, real* C);

// C [M, N] = A [M, K] Wᵀ + beta C for a weight W [N, K] packed once by pack_weight_panels into
// packed_weight_size(N, K) elements (see "products with a weight packed once" in
// autograd/kernels/fast/gemm_kernels.h): for the few rows of a recurrence's step, where OpenBLAS would
// pack W again on every call.
int64_t packed_weight_size(int64_t N, int64_t K);
void pack_weight_panels(const real* W, int64_t N, int64_t K, real* panels);
// The same for products by W itself, C [M, K] = A [M, N] W + beta C: W packed as its transpose
// (packed_weight_size(K, N) elements), then gemm_nt_packed(M, K, N, A, panels, beta, C).
void pack_weight_panels_of_transpose(const real* W, int64_t N, int64_t K, real* panels);
void gemm_nt_packed(int64_t M, int64_t N, int64_t K, const real* A, const real* panels, real beta,
                    real* C);

}  // namespace seqgrad::kernels::fast
