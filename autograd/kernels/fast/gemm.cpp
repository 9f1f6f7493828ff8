// The fast product (autograd/kernels/fast/gemm.h): x Wᵀ of a few rows goes to the small-M kernel of
// autograd/kernels/fast/gemm_kernels.h (split by output column over seqgrad's threads), everything
// else to the reference product (one BLAS call; in the WebAssembly build, which has no BLAS, the
// SIMD product of autograd/kernels/wasm/gemm.h); and the products on weights packed once.
#include "seqgrad/autograd/kernels/fast/gemm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <tuple>

#include "seqgrad/autograd/kernels/fast/gemm_kernels.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/autograd/kernels/switches.h"
#if SEQGRAD_WASM
#include "seqgrad/autograd/kernels/wasm/gemm.h"
#endif

namespace seqgrad {
namespace {
// SEQGRAD_GEMM_PROFILE=1 (autograd/kernels/switches.h): time every product by shape and print a
// table at exit (stderr), to see which products a training step spends its time in. A product on
// packed panels is listed as "NP" (not transposed, packed), with M shown as it is.
struct GemmProfile {
    using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t>;
    struct Entry {
        int64_t calls = 0;
        double seconds = 0;
    };
    std::map<Key, Entry> entries;
    ~GemmProfile() {
        double total = 0;
        for (auto& [k, e] : entries) total += e.seconds;
        std::fprintf(stderr, "gemm profile: %.3f s in products\n", total);
        std::multimap<double, Key> by_time;
        for (auto& [k, e] : entries) by_time.emplace(-e.seconds, k);
        for (auto& [neg, k] : by_time) {
            const Entry& e = entries[k];
            auto [ta, tb, M, N, K] = k;
            const bool packed = M < 0;  // gemm_nt_packed records its rows as −M
            std::fprintf(stderr,
                         "  %6.2f%%  %8lld calls  %c%c M=%-6lld N=%-6lld K=%-6lld %6.1f GFLOP/s\n",
                         100 * e.seconds / total, (long long)e.calls, ta ? 'T' : 'N',
                         packed ? 'P' : (tb ? 'T' : 'N'), (long long)(packed ? -M : M),
                         (long long)N, (long long)K,
                         2.0 * double(packed ? -M : M) * double(N) * double(K) * double(e.calls) /
                             e.seconds / 1e9);
        }
    }
};
GemmProfile* gemm_profile() {
    static GemmProfile* profile = switches().gemm_profile ? new GemmProfile : nullptr;
    static struct Printer {
        ~Printer() { delete gemm_profile(); }
    } printer;
    return profile;
}

// x Wᵀ with at most this many rows x goes to gemm_kernels::gemm_nt_small_m instead of BLAS
// (see autograd/kernels/fast/gemm_kernels.h for why). Measured against OpenBLAS 0.3.21 on the
// 2-core machine, one thread, the two timed alternately (median of many calls), B cached or coming
// from memory, N x K = 6000 x 256, 768 x 512, 768 x 256, 256 x 256: the kernel is 2-6x faster at M
// = 1, 1.2-2.9x at M = 4-8, 1.1-6.6x at M = 12; from M = 16 on, OpenBLAS's packed panels start to
// pay on the small shapes (256 x 256: 0.7-1.1x at M = 16, ~1x at M = 32). The switch is at 8, not
// 12: decoding runs at M <= 5 (beam 5) or with rows dropping through every M, so 9..12 gain it
// little, while each product moved changes the rounding of training runs (docs/performance.md, "the
// small-M kernel").
constexpr int64_t kSmallM = 8;

// With seqgrad threads (set_num_threads > 1), a small-M product whose B has at least this many
// elements is split by output column: each thread streams its own rows of B (weights [out, in])
// and writes its own columns of C. A decoder step is bound by streaming its weights from memory,
// and one core alone does not reach the memory's bandwidth (measured: 7.9 GB/s reading 16 MB
// with one thread, 14 GB/s with two), so both cores streaming halves of B take about half the
// time. Waking the worker costs 7-25 µs (parallel_for timed on the 2-core machine), about what
// the split saves on a 512 KB B: the decoder's W_hh (768 x 256), W_ih and output projection are
// above the bar, the attention's 256 x 256 W_q below.
constexpr int64_t kParallelMinElements = 128 * 1024;
// Cuts between pieces fall on multiples of this many columns: 24 is a multiple of every register
// block width NR (8, 6, 4, 3) of gemm_kernels, so every column is computed by the same block
// shape, with the same order of summation, as without the split: the bits do not change. 48
// columns = 192 bytes of a C row, whole cache lines, so no two threads write to one line.
constexpr int64_t kColumnAlign = 48;
// Pieces per thread. The threads take pieces from a shared counter instead of one fixed half
// each: a worker that wakes late (the machine is shared, or its core is busy) then finds the
// caller has done more pieces, instead of the caller waiting for it to do a whole half.
constexpr int64_t kPiecesPerThread = 8;
// A B of at least this many bytes is streamed past the L3 (gemm_kernels::Sweep::stream, see
// "Memory" in gemm_kernels.h): at half of the 8 MB L3 it could not stay cached until the next
// decoder step anyway, and streaming it lets the smaller weights stay.
constexpr int64_t kStreamBytes = int64_t(4) << 20;

void small_m_product(int64_t M, int64_t N, int64_t K, real alpha, const real* A, const real* B,
                     real beta, real* C) {
    const auto sweep = N * K * int64_t(sizeof(real)) >= kStreamBytes ? gemm_kernels::Sweep::stream
                                                                     : gemm_kernels::Sweep::keep;
    // columns [begin, end) of C
    auto columns = [&](int64_t begin, int64_t end) {
        gemm_kernels::gemm_nt_small_m<real>(M, end - begin, K, alpha, A, K, B + begin * K, K, beta,
                                            C + begin, N, sweep);
    };
    const int threads = num_threads();
    if (threads == 1 || N * K < kParallelMinElements || N < 2 * kColumnAlign) {
        columns(0, N);
        return;
    }
    const int64_t aligned_pieces = (N + kColumnAlign - 1) / kColumnAlign;
    const int64_t piece = std::max<int64_t>(1, aligned_pieces / (threads * kPiecesPerThread)) *
                          kColumnAlign;  // columns per piece
    const int64_t pieces = (N + piece - 1) / piece;
    std::atomic<int64_t> next{0};
    parallel_run(threads, [&](int) {
        for (int64_t p = next++; p < pieces; p = next++)
            columns(p * piece, std::min(N, (p + 1) * piece));
    });
}
}  // namespace

void kernels::fast::gemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K,
                         real alpha, const real* A, const real* B, real beta, real* C) {
    if (M == 0 || N == 0) return;
    GemmProfile* profile = gemm_profile();
    const auto start =
        profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    if (!transpose_a && transpose_b && M <= kSmallM && K > 0 && switches().small_m)
        small_m_product(M, N, K, alpha, A, B, beta, C);
    else
#if SEQGRAD_WASM
        wasm::gemm(transpose_a, transpose_b, M, N, K, alpha, A, B, beta, C);
#else
        reference::gemm(transpose_a, transpose_b, M, N, K, alpha, A, B, beta, C);
#endif
    if (profile) {
        auto& e = profile->entries[{transpose_a, transpose_b, M, N, K}];
        e.calls++;
        e.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
}

int64_t kernels::fast::packed_weight_size(int64_t N, int64_t K) {
    return gemm_kernels::packed_size<real>(N, K);
}
void kernels::fast::pack_weight_panels(const real* W, int64_t N, int64_t K, real* panels) {
    gemm_kernels::pack_panels<real>(W, N, K, panels);
}
void kernels::fast::pack_weight_panels_of_transpose(const real* W, int64_t N, int64_t K,
                                                    real* panels) {
    gemm_kernels::pack_panels_of_transpose<real>(W, N, K, panels);
}
void kernels::fast::gemm_nt_packed(int64_t M, int64_t N, int64_t K, const real* A,
                                   const real* panels, real beta, real* C) {
    if (M == 0 || N == 0) return;
    GemmProfile* profile = gemm_profile();
    const auto start =
        profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    gemm_kernels::gemm_nt_packed<real>(M, N, K, A, panels, beta, C);
    if (profile) {
        auto& e = profile->entries[{false, true, -M, N, K}];
        e.calls++;
        e.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
}

}  // namespace seqgrad
