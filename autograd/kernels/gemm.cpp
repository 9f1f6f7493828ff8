// The reference product: one BLAS call (cblas_sgemm or cblas_dgemm, chosen by `real`); in the
// WebAssembly build, where no BLAS exists, the triple loop that defines it.
#include "seqgrad/autograd/kernels/gemm.h"

#if SEQGRAD_WASM

namespace seqgrad {

// C_ij = alpha Σ_k op(A)_ik op(B)_kj + beta C_ij, summed in the order k = 0, 1, ...
void kernels::reference::gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K,
                              real alpha, const real* A, const real* B, real beta, real* C) {
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            real sum = 0;
            for (int64_t k = 0; k < K; ++k)
                sum += (transpose_a ? A[k * M + i] : A[i * K + k]) *
                       (transpose_b ? B[j * K + k] : B[k * N + j]);
            real& c = C[i * N + j];
            c = beta == 0 ? alpha * sum : alpha * sum + beta * c;
        }
}

void set_blas_threads(int) {}  // one thread, no BLAS

}  // namespace seqgrad

#else

#include <cblas.h>

extern "C" void openblas_set_num_threads(int);

namespace seqgrad {
namespace {
// The overload matching `real` picks single or double precision.
template <class... Args>
void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
               float alpha, const float* A, Args... rest) {
    cblas_sgemm(o, ta, tb, M, N, K, alpha, A, rest...);
}
template <class... Args>
void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
               double alpha, const double* A, Args... rest) {
    cblas_dgemm(o, ta, tb, M, N, K, alpha, A, rest...);
}
}  // namespace

void kernels::reference::gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K,
                              real alpha, const real* A, const real* B, real beta, real* C) {
    if (M == 0 || N == 0) return;
    if (K == 0) {  // an empty sum: C = beta C (BLAS leaves this case to the caller's care)
        for (int64_t i = 0; i < M * N; ++i) C[i] = beta == 0 ? real(0) : beta * C[i];
        return;
    }
    const int lda = int(transpose_a ? M : K);
    const int ldb = int(transpose_b ? K : N);
    blas_gemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), alpha, A, lda, B,
              ldb, beta, C, int(N));
}

void set_blas_threads(int threads) {
    if (threads > 0) openblas_set_num_threads(threads);
}

}  // namespace seqgrad

#endif
