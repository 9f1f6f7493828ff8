// WebAssembly SIMD products (autograd/kernels/wasm/gemm.h). Two shapes of inner loop:
//   op(B) = B [K, N] (x W, dYᵀ X): C's rows are sums of B's rows, C_i· += a_ik B_k·, four rows of
//     C and eight columns at a time (8 accumulators of 4 lanes; each B load serves 4 rows);
//   op(B) = Bᵀ, B [N, K] (x Wᵀ, the forward of every layer): C_ij = A_i· · B_j·, dot products of
//     contiguous rows, one row of A against four rows of B (each A load serves 4 columns).
// Both transposed (no op asks for it) goes to the reference loops.
#include "seqgrad/autograd/kernels/wasm/gemm.h"

#include "seqgrad/autograd/kernels/gemm.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace seqgrad::kernels::wasm {
namespace {

#if defined(__wasm_simd128__)
// C = alpha · acc + beta · C for one element (beta == 0: C is not read)
inline float finish(float acc, float alpha, float beta, const float* c) {
    return beta == 0 ? alpha * acc : alpha * acc + beta * *c;
}

// lanes 0..3 of v summed
inline float lane_sum(v128_t v) {
    return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) +
           wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

// op(B) = B [K, N]; a(i, k) reads op(A) (A [M, K], or A [K, M] when transpose_a).
void rows_of_b(bool transpose_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
               const float* B, float beta, float* C) {
    auto a = [&](int64_t i, int64_t k) { return transpose_a ? A[k * M + i] : A[i * K + k]; };
    int64_t i = 0;
    for (; i + 4 <= M; i += 4) {
        int64_t j = 0;
        for (; j + 8 <= N; j += 8) {  // a 4 × 8 block of C
            v128_t acc[4][2];
            for (auto& row : acc) row[0] = row[1] = wasm_f32x4_splat(0);
            for (int64_t k = 0; k < K; ++k) {
                const v128_t b0 = wasm_v128_load(B + k * N + j);
                const v128_t b1 = wasm_v128_load(B + k * N + j + 4);
                for (int r = 0; r < 4; ++r) {
                    const v128_t ar = wasm_f32x4_splat(a(i + r, k));
                    acc[r][0] = wasm_f32x4_add(acc[r][0], wasm_f32x4_mul(ar, b0));
                    acc[r][1] = wasm_f32x4_add(acc[r][1], wasm_f32x4_mul(ar, b1));
                }
            }
            for (int r = 0; r < 4; ++r)
                for (int h = 0; h < 2; ++h) {
                    float* c = C + (i + r) * N + j + 4 * h;
                    v128_t out = wasm_f32x4_mul(wasm_f32x4_splat(alpha), acc[r][h]);
                    if (beta != 0)
                        out = wasm_f32x4_add(
                            out, wasm_f32x4_mul(wasm_f32x4_splat(beta), wasm_v128_load(c)));
                    wasm_v128_store(c, out);
                }
        }
        for (; j < N; ++j)  // the last columns, one at a time
            for (int r = 0; r < 4; ++r) {
                float acc = 0;
                for (int64_t k = 0; k < K; ++k) acc += a(i + r, k) * B[k * N + j];
                float* c = C + (i + r) * N + j;
                *c = finish(acc, alpha, beta, c);
            }
    }
    for (; i < M; ++i) {  // the last rows, one at a time, four columns at a time
        int64_t j = 0;
        for (; j + 4 <= N; j += 4) {
            v128_t acc = wasm_f32x4_splat(0);
            for (int64_t k = 0; k < K; ++k)
                acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_splat(a(i, k)),
                                                         wasm_v128_load(B + k * N + j)));
            float* c = C + i * N + j;
            v128_t out = wasm_f32x4_mul(wasm_f32x4_splat(alpha), acc);
            if (beta != 0)
                out = wasm_f32x4_add(out, wasm_f32x4_mul(wasm_f32x4_splat(beta), wasm_v128_load(c)));
            wasm_v128_store(c, out);
        }
        for (; j < N; ++j) {
            float acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += a(i, k) * B[k * N + j];
            float* c = C + i * N + j;
            *c = finish(acc, alpha, beta, c);
        }
    }
}

// op(A) = A [M, K], op(B) = Bᵀ with B [N, K]: C_ij = A_i· · B_j·.
void dots_of_rows(int64_t M, int64_t N, int64_t K, float alpha, const float* A, const float* B,
                  float beta, float* C) {
    const int64_t K4 = K / 4 * 4;
    for (int64_t i = 0; i < M; ++i) {
        const float* a = A + i * K;
        int64_t j = 0;
        for (; j + 4 <= N; j += 4) {  // four dot products sharing the loads of A's row
            v128_t acc[4];
            for (v128_t& v : acc) v = wasm_f32x4_splat(0);
            for (int64_t k = 0; k < K4; k += 4) {
                const v128_t av = wasm_v128_load(a + k);
                for (int q = 0; q < 4; ++q)
                    acc[q] = wasm_f32x4_add(acc[q],
                                            wasm_f32x4_mul(av, wasm_v128_load(B + (j + q) * K + k)));
            }
            for (int q = 0; q < 4; ++q) {
                float sum = lane_sum(acc[q]);
                for (int64_t k = K4; k < K; ++k) sum += a[k] * B[(j + q) * K + k];
                float* c = C + i * N + j + q;
                *c = finish(sum, alpha, beta, c);
            }
        }
        for (; j < N; ++j) {
            v128_t acc = wasm_f32x4_splat(0);
            for (int64_t k = 0; k < K4; k += 4)
                acc = wasm_f32x4_add(acc,
                                     wasm_f32x4_mul(wasm_v128_load(a + k), wasm_v128_load(B + j * K + k)));
            float sum = lane_sum(acc);
            for (int64_t k = K4; k < K; ++k) sum += a[k] * B[j * K + k];
            float* c = C + i * N + j;
            *c = finish(sum, alpha, beta, c);
        }
    }
}
#endif

// true when a SIMD loop took the product (float only: double, the gradient-check build, goes to
// the reference)
[[maybe_unused]] bool simd_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                                const float* A, const float* B, float beta, float* C) {
#if defined(__wasm_simd128__)
    if (!tb) return rows_of_b(ta, M, N, K, alpha, A, B, beta, C), true;
    if (!ta) return dots_of_rows(M, N, K, alpha, A, B, beta, C), true;
#endif
    return false;
}
[[maybe_unused]] bool simd_gemm(bool, bool, int64_t, int64_t, int64_t, double, const double*,
                                const double*, double, double*) {
    return false;
}

}  // namespace

void gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, const real* B, real beta, real* C) {
    if (M == 0 || N == 0) return;
    if (K > 0 && simd_gemm(transpose_a, transpose_b, M, N, K, alpha, A, B, beta, C)) return;
    reference::gemm(transpose_a, transpose_b, M, N, K, alpha, A, B, beta, C);
}

}  // namespace seqgrad::kernels::wasm
