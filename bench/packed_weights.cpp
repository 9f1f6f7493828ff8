// Would a kernel on weights packed once per sequence beat OpenBLAS on a decoder step's thin
// products? (bench/RESULTS.md, "Where (a) with 2 threads stands".)
//
// A data-parallel shard of config (a) multiplies 16 rows by the same weights at every step:
// x W_ihᵀ ([16,512] x [512,768]ᵀ), h W_hhᵀ ([16,256] x [256,768]ᵀ), h W_qᵀ ([16,256] x
// [256,256]ᵀ). OpenBLAS packs each W again on every call. The alternative measured here packs
// each W once into panels of 16 of its rows, k-major (panel[k][j] = W[16p + j][k]), and runs a
// 6 x 16 broadcast kernel over the panels (6 rows of x at a time: 12 accumulators of 8 floats):
// gemm_kernels::gemm_nt_packed, which training now uses for such products.
// The three weights (2.5 MB) do not fit the 512 KB L2, so step after step they come from L3, as
// in a training step's recurrence. --evict-mb 6 also streams through 6 MB between steps (what a
// decoding step's output projection does), which pushes them out to DRAM.
//
// usage: packed_weights [--seconds S] [--rows M] [--evict-mb MB]   (prints one JSON line)
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/cli/args.h"
#include "bench_util.h"
#include "seqgrad/autograd/kernels/fast/gemm_kernels.h"
#include "seqgrad/autograd/rng.h"

#pragma GCC diagnostic ignored "-Wpsabi"

extern "C" void openblas_set_num_threads(int);

namespace {

struct Shape {
    const char* name;
    int N, K;
};

}  // namespace

int main(int argc, char** argv) {
    using namespace seqgrad;
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"seconds", "rows", "evict-mb"}, {});
    const double seconds = args.get_double("seconds", 2);
    const int M = args.get_int("rows", 16);
    const int evict_mb = args.get_int("evict-mb", 0);
    openblas_set_num_threads(1);
    const std::vector<Shape> shapes{
        {"decoder W_ih", 768, 512}, {"decoder W_hh", 768, 256}, {"attention W_q", 256, 256}};
    Rng rng(1);
    auto random_vector = [&](size_t n) {
        std::vector<float> v(n);
        for (float& x : v) x = float(rng.uniform(-1, 1));
        return v;
    };
    std::vector<std::vector<float>> weights, packed, inputs, outputs_blas, outputs_packed;
    for (const Shape& s : shapes) {
        weights.push_back(random_vector(size_t(s.N) * size_t(s.K)));
        packed.emplace_back(size_t(gemm_kernels::packed_size<float>(s.N, s.K)));
        gemm_kernels::pack_panels<float>(weights.back().data(), s.N, s.K, packed.back().data());
        inputs.push_back(random_vector(size_t(M) * size_t(s.K)));
        outputs_blas.emplace_back(size_t(M) * size_t(s.N));
        outputs_packed.emplace_back(size_t(M) * size_t(s.N));
    }
    std::vector<float> output_projection = random_vector(size_t(evict_mb) << 18);
    float sink = 0;
    auto evict = [&] {  // what the step's output projection does to the caches
        for (size_t i = 0; i < output_projection.size(); i += 16) sink += output_projection[i];
    };
    // the three products of one step after the eviction (its own time is subtracted below)
    auto step_time = [&](bool use_packed) {
        return bench::time_it(
            [&] {
                evict();
                for (size_t s = 0; s < shapes.size(); ++s) {
                    const int N = shapes[s].N, K = shapes[s].K;
                    if (use_packed)
                        gemm_kernels::gemm_nt_packed<float>(M, N, K, inputs[s].data(),
                                                            packed[s].data(), 0,
                                                            outputs_packed[s].data());
                    else
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1,
                                    inputs[s].data(), K, weights[s].data(), K, 0,
                                    outputs_blas[s].data(), N);
                }
            },
            seconds, 0.2, 20);
    };
    // alternate, 5 rounds each; the median of the rounds' medians (the eviction is inside the
    // timed function, so each figure is products + eviction; the eviction alone is timed too)
    std::vector<double> blas_ms, packed_ms, evict_ms;
    for (int round = 0; round < 5; ++round) {
        blas_ms.push_back(step_time(false).median_ms);
        packed_ms.push_back(step_time(true).median_ms);
        evict_ms.push_back(bench::time_it(evict, seconds / 2, 0.1, 20).median_ms);
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    double max_difference = 0;
    for (size_t s = 0; s < shapes.size(); ++s)
        for (size_t i = 0; i < outputs_blas[s].size(); ++i)
            max_difference = std::max(max_difference,
                                      double(std::fabs(outputs_blas[s][i] - outputs_packed[s][i])));
    double flops = 0;
    for (const Shape& s : shapes) flops += 2.0 * M * s.N * s.K;
    const double evict_alone = median(evict_ms);
    const double blas = median(blas_ms) - evict_alone,
                 packed_only = median(packed_ms) - evict_alone;
    const auto pack_timing = bench::time_it(
        [&] {
            for (size_t s = 0; s < shapes.size(); ++s)
                gemm_kernels::pack_panels<float>(weights[s].data(), shapes[s].N, shapes[s].K,
                                                 packed[s].data());
        },
        seconds / 2, 0.1, 5);
    nlohmann::json line{{"bench", "packed_weights"},
                        {"rows", M},
                        {"openblas_step_products_ms", blas},
                        {"packed_step_products_ms", packed_only},
                        {"openblas_gflops", flops / (blas / 1e3) / 1e9},
                        {"packed_gflops", flops / (packed_only / 1e3) / 1e9},
                        {"packing_once_ms", pack_timing.median_ms},
                        {"evict_mb", evict_mb},
                        {"eviction_ms", evict_alone},
                        {"max_abs_difference", max_difference},
                        {"sink", sink != 0}};
    fmt::print("{}\n", line.dump());
    return 0;
}
