// The small-M kernel C = alpha A Bᵀ + beta C (autograd/kernels/fast/gemm_kernels.h), in both precisions,
// and gemm() on both sides of the size where it hands x Wᵀ to that kernel instead of BLAS.
// Reference: the naive triple loop in long double.
//
// Tolerance: a dot product of K terms computed in precision u (= epsilon / 2) in any order has
// an error of at most about K·u·Σ_k |a_k b_k| (the standard bound γ_K ≈ K u), so
//     |C - C_exact| <= (K + 2) · epsilon · (|alpha| Σ_k |A_ik B_jk| + |beta C_ij|)
// holds with a factor ~2 to spare (the + 2: the products with alpha and beta, and their sum).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "seqgrad/autograd/kernels/fast/gemm_kernels.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "test_util.h"

namespace {

// Deterministic values in [-1, 1) (a 64-bit LCG: the test needs no statistical quality).
struct Values {
    uint64_t state;
    double next() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return double(state >> 11) * 0x1.0p-52 - 1.0;
    }
    template <class T>
    std::vector<T> fill(size_t n) {
        std::vector<T> v(n);
        for (T& x : v) x = T(next());
        return v;
    }
};

// Checks C (leading dim ldc) against alpha A Bᵀ + beta C0 (A [M, K] leading dim lda, B [N, K]
// leading dim ldb) computed in long double; beta == 0 ignores C0 (which may hold NaN).
template <class T>
void expect_product(int64_t M, int64_t N, int64_t K, T alpha, const std::vector<T>& A, int64_t lda,
                    const std::vector<T>& B, int64_t ldb, T beta, const std::vector<T>& C0,
                    const std::vector<T>& C, int64_t ldc) {
    const long double epsilon = std::numeric_limits<T>::epsilon();
    for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
            long double dot = 0, magnitude = 0;
            for (int64_t k = 0; k < K; ++k) {
                const long double p = (long double)A[size_t(i * lda + k)] * B[size_t(j * ldb + k)];
                dot += p;
                magnitude += std::fabs(p);
            }
            long double expected = (long double)alpha * dot;
            magnitude *= std::fabs((long double)alpha);
            if (beta != T(0)) {
                const long double c0 = (long double)beta * C0[size_t(i * ldc + j)];
                expected += c0;
                magnitude += std::fabs(c0);
            }
            const T got = C[size_t(i * ldc + j)];
            INFO("M=" << M << " N=" << N << " K=" << K << " alpha=" << double(alpha)
                      << " beta=" << double(beta) << " at (" << i << ", " << j << ")");
            REQUIRE(std::isfinite(got));
            CHECK(std::fabs(got - expected) <=
                  (K + 2) * epsilon * magnitude + std::numeric_limits<T>::min());
        }
    }
}

// Both sweeps (the prefetch hint changes where lines are cached, never the arithmetic).
template <class T>
void check_small_m_kernel(seqgrad::gemm_kernels::Sweep sweep) {
    Values values{42};
    for (int64_t M = 1; M <= 12; ++M)
        for (int64_t N : {1, 2, 3, 7, 8, 17, 64})
            for (int64_t K : {1, 3, 8, 9, 31, 64, 257})
                for (T alpha : {T(1), T(0.5)})
                    for (T beta : {T(0), T(1), T(-0.25)}) {
                        const std::vector<T> A = values.fill<T>(size_t(M * K));
                        const std::vector<T> B = values.fill<T>(size_t(N * K));
                        // beta = 0 must not read C: NaN there would spread to the result
                        const std::vector<T> C0 =
                            beta == T(0)
                                ? std::vector<T>(size_t(M * N), std::numeric_limits<T>::quiet_NaN())
                                : values.fill<T>(size_t(M * N));
                        std::vector<T> C = C0;
                        seqgrad::gemm_kernels::gemm_nt_small_m<T>(
                            M, N, K, alpha, A.data(), K, B.data(), K, beta, C.data(), N, sweep);
                        expect_product(M, N, K, alpha, A, K, B, K, beta, C0, C, N);
                    }
}

// Leading dimensions larger than the rows: the padding is neither read into the result nor
// written.
template <class T>
void check_small_m_kernel_strided() {
    Values values{7};
    const T sentinel = T(1234.5);
    for (int64_t M : {1, 5, 8})
        for (int64_t N : {3, 17, 64})
            for (int64_t K : {9, 64}) {
                const int64_t lda = K + 3, ldb = K + 5, ldc = N + 2;
                std::vector<T> A = values.fill<T>(size_t(M * lda));
                std::vector<T> B = values.fill<T>(size_t(N * ldb));
                for (int64_t i = 0; i < M; ++i)  // padding that would show if it were summed
                    for (int64_t k = K; k < lda; ++k) A[size_t(i * lda + k)] = T(1e6);
                for (int64_t j = 0; j < N; ++j)
                    for (int64_t k = K; k < ldb; ++k) B[size_t(j * ldb + k)] = T(1e6);
                std::vector<T> C0(size_t(M * ldc), sentinel), C = C0;
                seqgrad::gemm_kernels::gemm_nt_small_m<T>(M, N, K, T(1), A.data(), lda, B.data(),
                                                          ldb, T(0), C.data(), ldc);
                expect_product(M, N, K, T(1), A, lda, B, ldb, T(0), C0, C, ldc);
                for (int64_t i = 0; i < M; ++i)
                    for (int64_t j = N; j < ldc; ++j) CHECK(C[size_t(i * ldc + j)] == sentinel);
            }
}

}  // namespace

TEST_CASE("gemm_nt_small_m float: matches the naive product for M 1..12, tails of N and K") {
    check_small_m_kernel<float>(seqgrad::gemm_kernels::Sweep::keep);
    check_small_m_kernel<float>(seqgrad::gemm_kernels::Sweep::stream);
}

TEST_CASE("gemm_nt_small_m double: matches the naive product for M 1..12, tails of N and K") {
    check_small_m_kernel<double>(seqgrad::gemm_kernels::Sweep::keep);
    check_small_m_kernel<double>(seqgrad::gemm_kernels::Sweep::stream);
}

TEST_CASE("gemm_nt_small_m: leading dims larger than the rows, padding untouched") {
    check_small_m_kernel_strided<float>();
    check_small_m_kernel_strided<double>();
}

// gemm() sends x Wᵀ with few rows to the kernel and everything else to BLAS: every transpose
// combination, with M on both sides of the switch (which lies well below 24).
TEST_CASE("gemm: agrees with the naive product for every transpose and M 1..24") {
    using seqgrad::real;
    Values values{3};
    const int64_t N = 37, K = 70;
    for (bool transpose_a : {false, true})
        for (bool transpose_b : {false, true})
            for (int64_t M = 1; M <= 24; ++M)
                for (real beta : {real(0), real(0.5)}) {
                    // stored A: [M, K] or [K, M]; stored B: [K, N] or [N, K]
                    const std::vector<real> A = values.fill<real>(size_t(M * K));
                    const std::vector<real> B = values.fill<real>(size_t(K * N));
                    const std::vector<real> C0 =
                        beta == 0 ? std::vector<real>(size_t(M * N),
                                                      std::numeric_limits<real>::quiet_NaN())
                                  : values.fill<real>(size_t(M * N));
                    std::vector<real> C = C0;
                    seqgrad::gemm(transpose_a, transpose_b, M, N, K, real(0.75), A.data(), B.data(),
                                  beta, C.data());
                    // the same product with A as [M, K] and B as [N, K], for expect_product
                    std::vector<real> a(size_t(M * K)), b(size_t(N * K));
                    for (int64_t i = 0; i < M; ++i)
                        for (int64_t k = 0; k < K; ++k)
                            a[size_t(i * K + k)] =
                                transpose_a ? A[size_t(k * M + i)] : A[size_t(i * K + k)];
                    for (int64_t j = 0; j < N; ++j)
                        for (int64_t k = 0; k < K; ++k)
                            b[size_t(j * K + k)] =
                                transpose_b ? B[size_t(j * K + k)] : B[size_t(k * N + j)];
                    INFO("transpose_a=" << transpose_a << " transpose_b=" << transpose_b);
                    expect_product(M, N, K, real(0.75), a, K, b, K, beta, C0, C, N);
                }
}

// With seqgrad threads, gemm() splits a small-M product with a large B by output column
// (autograd/kernels/gemm.cpp). The cuts fall on multiples of every register block width, so each column
// is summed exactly as without the split: the result must be bitwise the one of 1 thread, and
// right. Shapes: below and above the size that is split, N not a multiple of the cut alignment,
// one B large enough to be streamed past the cache (>= 4 MB), M = 1 (greedy) to 8.
TEST_CASE("gemm: small-M products split over threads give the bits of one thread") {
    using seqgrad::real;
    Values values{11};
    struct Shape {
        int64_t N, K;
    };
    for (const Shape shape : {Shape{37, 70}, Shape{256, 256}, Shape{1001, 160}, Shape{2101, 256}})
        for (int64_t M : {1, 2, 5, 8}) {
            const int64_t N = shape.N, K = shape.K;
            const std::vector<real> A = values.fill<real>(size_t(M * K));
            const std::vector<real> B = values.fill<real>(size_t(N * K));
            const std::vector<real> C0 = values.fill<real>(size_t(M * N));
            std::vector<real> one_thread = C0, two_threads = C0;
            seqgrad::set_num_threads(1);
            seqgrad::gemm(false, true, M, N, K, real(0.75), A.data(), B.data(), real(0.5),
                          one_thread.data());
            seqgrad::set_num_threads(2);
            seqgrad::gemm(false, true, M, N, K, real(0.75), A.data(), B.data(), real(0.5),
                          two_threads.data());
            seqgrad::set_num_threads(1);
            INFO("M=" << M << " N=" << N << " K=" << K);
            CHECK(two_threads == one_thread);
            expect_product(M, N, K, real(0.75), A, K, B, K, real(0.5), C0, two_threads, N);
        }
}

namespace {

// gemm_nt_packed on W packed both ways: C = A Wᵀ + beta C0 (pack_panels) and C = A W + beta C0
// (pack_panels_of_transpose), against the naive product, for tails of every dim.
template <class T>
void check_packed_kernel() {
    namespace gk = seqgrad::gemm_kernels;
    Values values{99};
    for (int64_t M : {1, 2, 5, 6, 7, 12, 13, 16, 20})
        for (int64_t N : {1, 3, 8, 9, 16, 17, 40})
            for (int64_t K : {1, 3, 8, 33})
                for (T beta : {T(0), T(1)}) {
                    const std::vector<T> A = values.fill<T>(size_t(M * K));
                    const std::vector<T> W = values.fill<T>(size_t(N * K));  // [N, K]
                    const std::vector<T> C0 =
                        beta == T(0)
                            ? std::vector<T>(size_t(M * N), std::numeric_limits<T>::quiet_NaN())
                            : values.fill<T>(size_t(M * N));
                    std::vector<T> panels(size_t(gk::packed_size<T>(N, K))), C = C0;
                    gk::pack_panels<T>(W.data(), N, K, panels.data());
                    gk::gemm_nt_packed<T>(M, N, K, A.data(), panels.data(), beta, C.data());
                    expect_product(M, N, K, T(1), A, K, W, K, beta, C0, C, N);
                    // A' [M, N] times W [N, K] itself: the reference wants W as rows of Wᵀ
                    const std::vector<T> A2 = values.fill<T>(size_t(M * N));
                    std::vector<T> Wt(size_t(K * N));
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t k = 0; k < K; ++k)
                            Wt[size_t(k * N + n)] = W[size_t(n * K + k)];
                    const std::vector<T> D0 =
                        beta == T(0)
                            ? std::vector<T>(size_t(M * K), std::numeric_limits<T>::quiet_NaN())
                            : values.fill<T>(size_t(M * K));
                    std::vector<T> panels_t(size_t(gk::packed_size<T>(K, N))), D = D0;
                    gk::pack_panels_of_transpose<T>(W.data(), N, K, panels_t.data());
                    gk::gemm_nt_packed<T>(M, K, N, A2.data(), panels_t.data(), beta, D.data());
                    expect_product(M, K, N, T(1), A2, N, Wt, N, beta, D0, D, K);
                }
}

}  // namespace

TEST_CASE("gemm_nt_packed: A Wᵀ and A W on packed panels match the naive product") {
    check_packed_kernel<float>();
    check_packed_kernel<double>();
}

TEST_CASE("pack_panels: the block transposes give the generic packer's panels") {
    // pack_panels (8 x 8 register transposes for float) and pack_panels_of_transpose (row
    // copies) against pack_strided's element-by-element loop, for tails of both dims.
    namespace gk = seqgrad::gemm_kernels;
    Values values{7};
    for (int64_t N : {1, 15, 16, 17, 40, 48})
        for (int64_t K : {1, 7, 8, 9, 33, 64}) {
            const std::vector<float> W = values.fill<float>(size_t(N * K));
            std::vector<float> fast(size_t(gk::packed_size<float>(N, K)), -1.0f), generic = fast;
            gk::pack_panels<float>(W.data(), N, K, fast.data());
            gk::pack_strided<float>(W.data(), N, K, K, 1, generic.data());
            CHECK(fast == generic);
            std::vector<float> fast_t(size_t(gk::packed_size<float>(K, N)), -1.0f),
                generic_t = fast_t;
            gk::pack_panels_of_transpose<float>(W.data(), N, K, fast_t.data());
            gk::pack_strided<float>(W.data(), K, N, 1, K, generic_t.data());
            CHECK(fast_t == generic_t);
        }
}
