// Small-M matrix products C = alpha A Bᵀ + beta C (internal to autograd/kernels/fast/gemm.cpp; the
// unit tests include it to check both precisions).
//
// Why this exists. A decoder step multiplies a handful of rows — M = 1 for greedy decoding of
// one sentence, M = 5 for beam 5 — by weight matrices stored [out, in] (PyTorch's Linear and
// GRU layout): C[M, N] = A[M, K] · B[N, K]ᵀ. OpenBLAS's sgemm first copies ("packs") panels of
// both operands into its blocked layout, and for B that means reading all N·K weights and
// writing them out again before computing anything. For large M that copy is amortised over M
// rows; for M = 5 it costs as much as the product itself: profiles of beam search showed
// OpenBLAS at 8-9 GFLOP/s on [5,256]·[256,6000], about half of its time in the packing routine
// (sgemm_incopy). Here B is read exactly once, straight from where it lies.
//
// The maths. Both A's rows and B's rows are contiguous in k, so every C[i, j] is a dot product
//     C[i, j] = alpha Σ_k A[i, k] B[j, k] + beta C[i, j].
// A block of MR rows of A times NR rows of B keeps MR·NR accumulators of L lanes (L = 8 floats or
// 4 doubles in one 256-bit register): lane l of accumulator (i, j) collects A[i, k] B[j, k] over
// the k ≡ l (mod L). One step over L values of k loads NR vectors of B and MR of A and does MR·NR
// fused multiply-adds, so each B load feeds MR FMAs and each A load NR of them. At the end the
// lanes of each accumulator are summed (four accumulators at a time, see lane_sums), the last
// K mod L terms are added one by one, and alpha and beta are applied.
//
// Blocking. There must be enough independent accumulators (8-12) to hide the FMA latency, and
// accumulators plus loaded operands should fit AVX2's 16 registers, or the compiler re-loads
// operands from L1 inside the loop (loads, not FMAs, then set the pace). So MR·NR <= 12: MR = 1
// goes with NR = 8 rows of B, 2 with 6, 3 with 4, 4 with 3. A is cut into near-equal row
// blocks of at most 4 rows (M = 5: 3 + 2; 8: 4 + 4; 12: 4 + 4 + 4). For M = 5 this was measured
// against single blocks of 5 x 2 and 5 x 3 and against 4 + 1 with NR = 3: 3 + 2 with NR = 4 was
// the fastest with B in cache (31-32 GFLOP/s on the 2-core machine, ~80% of its FMA peak) and
// as fast as any with B coming from memory.
//
// Memory. In a decoder step every weight matrix was last touched a whole step (megabytes of
// other weights) ago, so B comes from L3 or DRAM, and for M <= 5 streaming B in costs about as
// much time as the FMAs. Two things keep the stream going:
//   - B is read once: the loops run over blocks of NR rows of B outermost; a block (NR·K
//     elements, a few KB) comes in once and stays in L1 while every row block of A (M·K
//     elements, in L1 too) meets it.
//   - the kernel prefetches the NEXT block of B, as one linear sweep, while it computes the
//     current one (NR interleaved rows of a few hundred bytes each are too short for the
//     hardware prefetcher to follow). Measured on [5,256]·[256,6000] with B coming from DRAM,
//     timed alternately with a plain sequential read of the same bytes: 0.89 ms without the
//     sweep, 0.69 ms with it, against 0.62 ms for the read alone; at M = 1 the product runs as
//     fast as the plain read.
//   - a B too large to stay cached until the next decoder step (the output projection, 6 MB in
//     config (a), against the 8 MB L3 both cores share) is swept with non-temporal prefetches
//     (Sweep::stream, chosen by the caller: prefetchnta instead of prefetcht0). Such lines are
//     fetched for one use and, on the Zen machine we measure on, do not displace what the L3
//     holds, so the stream no longer pushes out the smaller weights the step reads next time
//     (the attention's W_q, the GRU's W_ih and W_hh: 2.6 MB), which then come from the L3 instead
//     of DRAM. Measured on the four products of a config-(a) decoder step (W_q, W_ih, W_hh, the
//     output projection; medians of 21 alternated rounds in one process): beam 5 (M = 5) the
//     three small ones 0.52 -> 0.38 ms, the step 1.54 -> 1.42 ms; greedy (M = 1) the step
//     1.07 -> 0.79 ms.
//
// Everything is row-major with leading dimensions (lda, ldb >= K; ldc >= N); the prefetch sweep
// assumes ldb == K (contiguous B), as gemm() passes. beta == 0 never reads C, so C may be
// uninitialised (BLAS convention).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // 32-byte vectors in inline functions: no ABI at stake

namespace seqgrad::gemm_kernels {

// How nt_all's sweep brings the next block of B into the cache (see "Memory" above): `keep`
// for a B that may stay cached until it is used again, `stream` for one too large to.
enum class Sweep { keep, stream };

// One 256-bit register of T: 8 floats or 4 doubles.
template <class T>
struct Vec;
template <>
struct Vec<float> {
    using type = float __attribute__((vector_size(32)));
    static constexpr int lanes = 8;
};
template <>
struct Vec<double> {
    using type = double __attribute__((vector_size(32)));
    static constexpr int lanes = 4;
};

template <class T>
inline typename Vec<T>::type load(const T* p) {
    typename Vec<T>::type v;
    std::memcpy(&v, p, sizeof v);  // unaligned load
    return v;
}

// The shuffles are __builtin_shufflevector (GCC >= 12 and clang alike: the WebAssembly build
// compiles these kernels with emscripten's clang, 256-bit vectors becoming pairs of 128-bit ones).

// Σ of the lanes, as a tree: (l0 + l4) + (l2 + l6) + ... — the order only affects rounding.
inline float lane_sum(Vec<float>::type v) {
    using f32x4 = float __attribute__((vector_size(16)));
    f32x4 low, high;
    std::memcpy(&low, &v, sizeof low);
    std::memcpy(&high, reinterpret_cast<const char*>(&v) + sizeof low, sizeof high);
    const f32x4 four = low + high;
    return (four[0] + four[2]) + (four[1] + four[3]);
}
inline double lane_sum(Vec<double>::type v) {
    return (v[0] + v[2]) + (v[1] + v[3]);
}

// The lane sums of four registers at once, {lane_sum(v0), ..., lane_sum(v3)} up to rounding
// order, in a few whole-register operations instead of four separate trees. Each
// shuffle-shuffle-add sums neighbouring lanes pairwise (a "horizontal add"):
//   float:  [v0 v1] -> pairs, [v2 v3] -> pairs; those -> quads; the two 128-bit halves added.
//   double: [v0 v1] -> pairs, [v2 v3] -> pairs; the two 128-bit halves added.
template <class T>
struct Vec4;  // four T: the type of the result
template <>
struct Vec4<float> {
    using type = float __attribute__((vector_size(16)));
};
template <>
struct Vec4<double> {
    using type = double __attribute__((vector_size(32)));
};
inline Vec4<float>::type lane_sums(Vec<float>::type v0, Vec<float>::type v1, Vec<float>::type v2,
                                   Vec<float>::type v3) {
    using V = Vec<float>::type;
    // lanes (0 2 | 8 10 | 4 6 | 12 14) and (1 3 | 9 11 | 5 7 | 13 15) of [a b]
    auto even = [](V a, V b) { return __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12, 14); };
    auto odd = [](V a, V b) { return __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15); };
    const V p01 = even(v0, v1) + odd(v0, v1);
    const V p23 = even(v2, v3) + odd(v2, v3);
    // p01 = [v0 01, v0 23, v1 01, v1 23 | v0 45, v0 67, v1 45, v1 67], p23 likewise
    const V q = even(p01, p23) + odd(p01, p23);
    // q = [v0 0-3, v1 0-3, v2 0-3, v3 0-3 | v0 4-7, v1 4-7, v2 4-7, v3 4-7]
    Vec4<float>::type low, high;
    std::memcpy(&low, &q, sizeof low);
    std::memcpy(&high, reinterpret_cast<const char*>(&q) + sizeof low, sizeof high);
    return low + high;
}
inline Vec4<double>::type lane_sums(Vec<double>::type v0, Vec<double>::type v1,
                                    Vec<double>::type v2, Vec<double>::type v3) {
    using V = Vec<double>::type;
    auto even = [](V a, V b) { return __builtin_shufflevector(a, b, 0, 4, 2, 6); };
    auto odd = [](V a, V b) { return __builtin_shufflevector(a, b, 1, 5, 3, 7); };
    const V p01 = even(v0, v1) + odd(v0, v1);
    const V p23 = even(v2, v3) + odd(v2, v3);
    // p01 = [v0 01, v1 01, v0 23, v1 23], p23 likewise
    return __builtin_shufflevector(p01, p23, 0, 1, 4, 5) +
           __builtin_shufflevector(p01, p23, 2, 3, 6, 7);
}

// C[0:MR, 0:NR] = alpha A[0:MR, :] · B[0:NR, :]ᵀ + beta C[0:MR, 0:NR], one register block.
// PREFETCH: also sweep the NR·K elements starting at B + ahead into the cache (the next block
// of B, see "Memory" above), one cache line per row per 64 bytes of each row consumed;
// STREAM: with non-temporal prefetches.
template <class T, int MR, int NR, bool PREFETCH, bool STREAM>
inline void nt_block(int64_t K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta,
                     T* C, int64_t ldc, int64_t ahead) {
    using V = typename Vec<T>::type;
    constexpr int L = Vec<T>::lanes;
    V acc[MR][NR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) acc[i][j] = V{};
    // One step: acc[i][j] += A[i, k:k+L] * B[j, k:k+L] for every (i, j), each a single FMA
    // (-mfma, and GCC contracts a * b + c by default in C++).
    auto fma_step = [&](int64_t k) {
        V b[NR];
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) b[j] = load(B + j * ldb + k);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const V a = load(A + i * lda + k);
#pragma GCC unroll 16
            for (int j = 0; j < NR; ++j) acc[i][j] += a * b[j];
        }
    };
    // Two steps per iteration: 2L elements = 64 bytes = one cache line of each of the NR rows,
    // so NR lines of the next block are prefetched per iteration and the sweep ends with it.
    int64_t k = 0;
    for (; k + 2 * L <= K; k += 2 * L) {
        if constexpr (PREFETCH)
#pragma GCC unroll 16
            for (int j = 0; j < NR; ++j) {
                if constexpr (STREAM)  // locality 0: prefetchnta
                    __builtin_prefetch(B + ahead + k * NR + j * 2 * L, 0, 0);
                else
                    __builtin_prefetch(B + ahead + k * NR + j * 2 * L);
            }
        fma_step(k);
        fma_step(k + L);
    }
    if (k + L <= K) {
        fma_step(k);
        k += L;
    }
    // C = alpha (lane sums + the last K mod L products) + beta C, in registers: the loops are
    // unrolled, the tail and beta tests taken once per block, four columns at a time.
    T sums[MR][NR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
        int j = 0;
#pragma GCC unroll 16
        for (; j + 4 <= NR; j += 4) {
            const auto four = lane_sums(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
#pragma GCC unroll 4
            for (int q = 0; q < 4; ++q) sums[i][j + q] = four[q];
        }
#pragma GCC unroll 16
        for (; j < NR; ++j) sums[i][j] = lane_sum(acc[i][j]);
    }
    if (k < K)
        for (int i = 0; i < MR; ++i)
            for (int j = 0; j < NR; ++j)
                for (int64_t t = k; t < K; ++t) sums[i][j] += A[i * lda + t] * B[j * ldb + t];
    if (beta == T(0)) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
            for (int j = 0; j < NR; ++j) C[i * ldc + j] = alpha * sums[i][j];
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
            for (int j = 0; j < NR; ++j)
                C[i * ldc + j] = alpha * sums[i][j] + beta * C[i * ldc + j];
    }
}

// The largest row block of A, and how many rows of B go with a row block of MR rows of A and
// back (see "Blocking" above).
constexpr int kMaxBlockRows = 4;
constexpr int b_rows_for(int MR) {
    return MR == 1 ? 8 : MR == 2 ? 6 : MR == 3 ? 4 : 3;
}
constexpr int max_a_rows_for(int NR) {
    return NR >= 8 ? 1 : NR >= 6 ? 2 : NR >= 4 ? 3 : 4;
}

// nt_block<T, mr, NR, ahead != 0, sweep == stream> for a run-time mr <= MR (only the blocks
// that fit the registers are instantiated).
template <class T, int NR, int MR>
inline void nt_block_dispatch(int mr, int64_t ahead, Sweep sweep, int64_t K, T alpha, const T* A,
                              int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
    if constexpr (MR > 1)
        if (mr < MR)
            return nt_block_dispatch<T, NR, MR - 1>(mr, ahead, sweep, K, alpha, A, lda, B, ldb,
                                                    beta, C, ldc);
    if (ahead == 0)
        nt_block<T, MR, NR, false, false>(K, alpha, A, lda, B, ldb, beta, C, ldc, 0);
    else if (sweep == Sweep::stream)
        nt_block<T, MR, NR, true, true>(K, alpha, A, lda, B, ldb, beta, C, ldc, ahead);
    else
        nt_block<T, MR, NR, true, false>(K, alpha, A, lda, B, ldb, beta, C, ldc, ahead);
}

// The whole product with blocks of NR rows of B (NR suits the largest row block of A).
template <class T, int NR>
inline void nt_all(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                   int64_t ldb, T beta, T* C, int64_t ldc, Sweep sweep) {
    // Near-equal row blocks: the first M mod row_blocks of them get one row more.
    const int64_t row_blocks = (M + kMaxBlockRows - 1) / kMaxBlockRows;
    const int small_rows = int(M / row_blocks), larger_blocks = int(M % row_blocks);
    const int64_t next_block = NR * ldb;  // prefetch distance: one block of B ahead
    for (int64_t j0 = 0; j0 < N; j0 += NR) {
        const int64_t nr = std::min<int64_t>(NR, N - j0);
        const int64_t ahead = j0 + 2 * NR <= N ? next_block : 0;  // no sweep past B's end
        int64_t i0 = 0;
        for (int block = 0; block < row_blocks; ++block) {
            const int mr = small_rows + (block < larger_blocks ? 1 : 0);
            const T* a = A + i0 * lda;
            T* c = C + i0 * ldc + j0;
            if (nr == NR) {  // the first row block to meet this block of B prefetches the next
                nt_block_dispatch<T, NR, max_a_rows_for(NR)>(mr, block == 0 ? ahead : 0, sweep, K,
                                                             alpha, a, lda, B + j0 * ldb, ldb, beta,
                                                             c, ldc);
            } else {  // the last N mod NR rows of B, one at a time (at most NR - 1 per call)
                for (int64_t j = 0; j < nr; ++j)
                    nt_block_dispatch<T, 1, max_a_rows_for(1)>(
                        mr, 0, sweep, K, alpha, a, lda, B + (j0 + j) * ldb, ldb, beta, c + j, ldc);
            }
            i0 += mr;
        }
    }
}

// C[M, N] = alpha A[M, K] · B[N, K]ᵀ + beta C for any M >= 0 — but meant for small M: B is
// streamed once and A is re-read for every block of B, so A should stay in L1
// (M·K·sizeof(T) up to ~24 KB). `sweep`: see "Memory" above.
template <class T>
void gemm_nt_small_m(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                     int64_t ldb, T beta, T* C, int64_t ldc, Sweep sweep = Sweep::keep) {
    if (M <= 0 || N <= 0) return;
    const int64_t row_blocks = (M + kMaxBlockRows - 1) / kMaxBlockRows;
    switch ((M + row_blocks - 1) / row_blocks) {  // the largest row block
        case 1:
            return nt_all<T, b_rows_for(1)>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, sweep);
        case 2:
            return nt_all<T, b_rows_for(2)>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, sweep);
        case 3:
            return nt_all<T, b_rows_for(3)>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, sweep);
        default:
            return nt_all<T, b_rows_for(4)>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, sweep);
    }
}

// ---- products with a weight packed once (a recurrence's per-step products) -------------------
//
// A recurrence multiplies a few rows by the same W at every step, and OpenBLAS packs W again on
// every call: at 16 rows that packing costs about a third of the product. Here W [N, K] is packed
// once (pack_panels) into panels of PW = 2 registers' width of its rows, k-major:
//   panel p, element (k, j) = W[p·PW + j, k]        (rows past N are zeros)
// and each product runs a broadcast kernel over the panels: MR <= 6 rows of A at a time keep
// 2·MR accumulators; one step over k loads the panel's two registers once and multiplies them
// by A[i, k] for each row i. Reading a panel is one sequential stream. Measured in
// bench/packed_weights (a config-(a) decoder step's three products, weights in L3): 37 GFLOP/s
// at 16 rows against OpenBLAS's 12.
template <class T>
constexpr int64_t panel_width() {
    return 2 * Vec<T>::lanes;
}
template <class T>
constexpr int64_t packed_size(int64_t N, int64_t K) {
    return (N + panel_width<T>() - 1) / panel_width<T>() * K * panel_width<T>();
}

// Panels of PW outputs: element (d, j) of panel p = W[(p·PW + j)·output_stride + d·depth_stride]
// for the `outputs` x `depth` matrix W is read as (zeros past the last output).
template <class T>
void pack_strided(const T* W, int64_t outputs, int64_t depth, int64_t output_stride,
                  int64_t depth_stride, T* panels) {
    constexpr int64_t PW = panel_width<T>();
    for (int64_t p = 0; p * PW < outputs; ++p) {
        T* panel = panels + p * depth * PW;
        for (int64_t d = 0; d < depth; ++d)
            for (int64_t j = 0; j < PW; ++j)
                panel[d * PW + j] = p * PW + j < outputs
                                        ? W[(p * PW + j) * output_stride + d * depth_stride]
                                        : T(0);
    }
}

// columns[k][i] = rows[i][k] for an 8 x 8 block of floats, in registers: the classic three
// rounds of two-input shuffles (unpack pairs, then pairs of pairs, then 128-bit halves).
inline void transpose_8x8(const Vec<float>::type rows[8], Vec<float>::type columns[8]) {
    using V = Vec<float>::type;
    auto unpack_lo = [](V a, V b) {
        return __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13);
    };
    auto unpack_hi = [](V a, V b) {
        return __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15);
    };
    auto pairs_lo = [](V a, V b) {
        return __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13);
    };
    auto pairs_hi = [](V a, V b) {
        return __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
    };
    auto halves_lo = [](V a, V b) {
        return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11);
    };
    auto halves_hi = [](V a, V b) {
        return __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
    };
    V t[8], q[8];
    for (int i = 0; i < 8;
         i += 2) {  // t[i] = (r_i k, r_i+1 k) for k = 0,1 | 4,5; t[i+1]: 2,3 | 6,7
        t[i] = unpack_lo(rows[i], rows[i + 1]);
        t[i + 1] = unpack_hi(rows[i], rows[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {  // q[i + c]: rows i..i+3 of column c | of column c + 4
        q[i] = pairs_lo(t[i], t[i + 2]);
        q[i + 1] = pairs_hi(t[i], t[i + 2]);
        q[i + 2] = pairs_lo(t[i + 1], t[i + 3]);
        q[i + 3] = pairs_hi(t[i + 1], t[i + 3]);
    }
    for (int c = 0; c < 4; ++c) {
        columns[c] = halves_lo(q[c], q[c + 4]);
        columns[c + 4] = halves_hi(q[c], q[c + 4]);
    }
}

// For x Wᵀ: W [N, K] as N outputs of depth K. Element (d, j) of a panel is W[p·PW + j, d]: a
// transpose. The generic loop reads one element per row per d (~2.3 cycles per element); for
// float, full panels go by 8 x 8 blocks transposed in registers (~4x faster). Same values.
template <class T>
void pack_panels(const T* W, int64_t N, int64_t K, T* panels) {
    constexpr int64_t PW = panel_width<T>();
    int64_t full = 0;  // panels done by blocks
    if constexpr (std::is_same_v<T, float>) {
        using V = Vec<float>::type;
        full = N / PW;
        const int64_t K8 = K / 8 * 8;
        for (int64_t p = 0; p < full; ++p) {
            const float* w = W + p * PW * K;  // the panel's PW rows
            float* panel = panels + p * K * PW;
            for (int64_t d = 0; d < K8; d += 8)
                for (int64_t h = 0; h < PW; h += 8) {  // 8 rows of the panel
                    V rows[8], columns[8];
                    for (int i = 0; i < 8; ++i) rows[i] = load(w + (h + i) * K + d);
                    transpose_8x8(rows, columns);
                    for (int c = 0; c < 8; ++c)
                        std::memcpy(panel + (d + c) * PW + h, &columns[c], sizeof(V));
                }
            for (int64_t d = K8; d < K; ++d)
                for (int64_t j = 0; j < PW; ++j) panel[d * PW + j] = w[j * K + d];
        }
    }
    pack_strided(W + full * PW * K, N - full * PW, K, K, 1, panels + full * PW * K);
}

// For products by W itself (dX = dY W, the backward of x Wᵀ): W [N, K] read as the transposed
// weight Wᵀ [K, N], K outputs of depth N, i.e. panel q, element (n, j) = W[n, q·PW + j]: PW
// contiguous elements, copied row by row of W (full panels; the last one, padded, generically).
template <class T>
void pack_panels_of_transpose(const T* W, int64_t N, int64_t K, T* panels) {
    constexpr int64_t PW = panel_width<T>();
    const int64_t full = K / PW;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t q = 0; q < full; ++q)
            std::memcpy(panels + (q * N + n) * PW, W + n * K + q * PW, sizeof(T) * PW);
    pack_strided(W + full * PW, K - full * PW, N, 1, K, panels + full * PW * N);
}

// C[0:MR, 0:nc] = A[0:MR, :] · panelᵀ + beta C   (nc <= PW columns of C are written)
template <class T, int MR>
inline void packed_tile(int64_t K, const T* A, int64_t lda, const T* panel, T beta, T* C,
                        int64_t ldc, int64_t nc) {
    using V = typename Vec<T>::type;
    constexpr int L = Vec<T>::lanes;
    V acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = V{};
    for (int64_t k = 0; k < K; ++k) {
        const V b0 = load(panel + k * 2 * L), b1 = load(panel + k * 2 * L + L);
#pragma GCC unroll 6
        for (int i = 0; i < MR; ++i) {
            const T a = A[i * lda + k];
            acc[i][0] += a * b0;
            acc[i][1] += a * b1;
        }
    }
    for (int i = 0; i < MR; ++i) {
        T row[2 * L];
        std::memcpy(row, &acc[i][0], sizeof acc[i][0]);
        std::memcpy(row + L, &acc[i][1], sizeof acc[i][1]);
        T* c = C + i * ldc;
        if (beta == T(0))
            for (int64_t j = 0; j < nc; ++j) c[j] = row[j];
        else
            for (int64_t j = 0; j < nc; ++j) c[j] = row[j] + beta * c[j];
    }
}

// packed_tile<T, mr> for a run-time mr <= MR
template <class T, int MR>
inline void packed_tile_dispatch(int mr, int64_t K, const T* A, int64_t lda, const T* panel, T beta,
                                 T* C, int64_t ldc, int64_t nc) {
    if constexpr (MR > 1)
        if (mr < MR) return packed_tile_dispatch<T, MR - 1>(mr, K, A, lda, panel, beta, C, ldc, nc);
    packed_tile<T, MR>(K, A, lda, panel, beta, C, ldc, nc);
}

// C[M, N] = A[M, K] · Wᵀ + beta C, with W given as pack_panels(W, N, K). Row-major, lda = K,
// ldc = N. Meant for small M (a step's rows): A is re-read for every panel from L1.
template <class T>
void gemm_nt_packed(int64_t M, int64_t N, int64_t K, const T* A, const T* panels, T beta, T* C) {
    constexpr int64_t PW = panel_width<T>();
    for (int64_t p = 0; p * PW < N; ++p) {
        const T* panel = panels + p * K * PW;
        const int64_t nc = std::min(PW, N - p * PW);
        int64_t i = 0;
        for (; i + 6 <= M; i += 6)
            packed_tile<T, 6>(K, A + i * K, K, panel, beta, C + i * N + p * PW, N, nc);
        if (i < M)  // the last M mod 6 rows
            packed_tile_dispatch<T, 5>(int(M - i), K, A + i * K, K, panel, beta, C + i * N + p * PW,
                                       N, nc);
    }
}

}  // namespace seqgrad::gemm_kernels

#pragma GCC diagnostic pop
