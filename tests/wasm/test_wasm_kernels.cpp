// The WebAssembly build's SIMD product (autograd/kernels/wasm/gemm.h) against the reference loops
// (kernels::reference::gemm), in float, for every pair of transposes, beta 0 / 1 / −0.5, and
// shapes on both sides of the SIMD blocks (4 rows, 8 and 4 columns, 4 terms). Built and run only
// in the WebAssembly build (cmake/wasm.cmake), under node.
//
// Tolerance: both sum K products in float in different orders, so they differ by at most about
// 2 K ε Σ_k |a_ik b_kj| (plus the beta term); a wrong index or a missed remainder is off by a
// whole term, far above it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/wasm/gemm.h"
#include "seqgrad/autograd/rng.h"

using namespace seqgrad;

namespace {

std::vector<float> uniform(size_t n, Rng& rng) {
    std::vector<float> v(n);
    for (float& x : v) x = float(rng.uniform(-1, 1));
    return v;
}

void check_product(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                   uint64_t seed) {
    Rng rng(seed);
    const std::vector<float> A = uniform(size_t(M * K), rng), B = uniform(size_t(K * N), rng);
    std::vector<float> C0 = uniform(size_t(M * N), rng);
    if (beta == 0) C0.assign(C0.size(), std::numeric_limits<float>::quiet_NaN());  // never read
    std::vector<float> expected = C0, got = C0;
    kernels::reference::gemm(ta, tb, M, N, K, alpha, A.data(), B.data(), beta, expected.data());
    kernels::wasm::gemm(ta, tb, M, N, K, alpha, A.data(), B.data(), beta, got.data());
    const double epsilon = std::numeric_limits<float>::epsilon();
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double magnitude = 0;
            for (int64_t k = 0; k < K; ++k)
                magnitude += std::fabs(double(ta ? A[size_t(k * M + i)] : A[size_t(i * K + k)]) *
                                       double(tb ? B[size_t(j * K + k)] : B[size_t(k * N + j)]));
            magnitude = std::fabs(alpha) * magnitude +
                        (beta == 0 ? 0 : std::fabs(beta * C0[size_t(i * N + j)]));
            const size_t at = size_t(i * N + j);
            INFO("ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K
                       << " beta=" << beta << " at (" << i << ", " << j << ")");
            REQUIRE(std::isfinite(got[at]));
            CHECK(std::fabs(double(got[at]) - double(expected[at])) <=
                  2 * double(K + 2) * epsilon * magnitude + 1e-30);
        }
}

}  // namespace

TEST_CASE("wasm gemm equals the reference product for every transpose, beta and edge shape") {
    uint64_t seed = 1;
    for (bool ta : {false, true})
        for (bool tb : {false, true})
            for (float beta : {0.0f, 1.0f, -0.5f})
                for (int64_t M : {1, 3, 4, 9})
                    for (int64_t N : {1, 4, 7, 8, 19})
                        for (int64_t K : {1, 4, 6, 33}) check_product(ta, tb, M, N, K, 0.75f, beta, ++seed);
}

TEST_CASE("wasm gemm: an empty sum scales C by beta, and empty C is left alone") {
    std::vector<float> C = {1, 2, 3, 4};
    kernels::wasm::gemm(false, true, 2, 2, 0, 1, nullptr, nullptr, 0.5f, C.data());
    CHECK(C == std::vector<float>{0.5f, 1, 1.5f, 2});
    kernels::wasm::gemm(false, false, 0, 2, 3, 1, nullptr, nullptr, 0, C.data());
    CHECK(C == std::vector<float>{0.5f, 1, 1.5f, 2});
}

TEST_CASE("gemm() of the WebAssembly build is the SIMD product") {
    Rng rng(7);
    const std::vector<float> A = uniform(5 * 12, rng), B = uniform(12 * 10, rng);
    std::vector<float> via_gemm(5 * 10), direct(5 * 10);
    gemm(false, false, 5, 10, 12, 1, A.data(), B.data(), 0, via_gemm.data());
    kernels::wasm::gemm(false, false, 5, 10, 12, 1, A.data(), B.data(), 0, direct.data());
    CHECK(via_gemm == direct);
}
