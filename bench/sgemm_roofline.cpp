// cblas_sgemm GFLOP/s on the GEMM shapes of a training step of config (a)/(c), so that a
// step's useful GFLOP/s can be stated as a fraction of what BLAS reaches on the same shapes.
// usage: sgemm_roofline [--threads N] [--seconds S]
#include <cblas.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "apps/args.h"
#include "autograd/rng.h"
#include "autograd/gemm.h"
#include "bench_util.h"

using namespace seqgrad;

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"threads", "seconds"}, {});
    const int threads = args.get_int("threads", 1);
    const double seconds = args.get_double("seconds", 1);
    set_blas_threads(threads);
    struct Shape {
        const char* what;
        int M, N, K;
        bool ta, tb;
    };
    // M x K times K x N, as the engine calls them (x Wᵀ: tb = true)
    const Shape shapes[] = {
        {"(a) output projection, all real tokens: [274,256] x [256,6000]", 274, 6000, 256, false, true},
        {"(a) output dW: [6000,274] x [274,256]", 6000, 256, 274, true, false},
        {"(a) GRU hidden gates per step: [32,256] x [256,768]", 32, 768, 256, false, true},
        {"(a) encoder input gates, all steps: [384,256] x [256,768]", 384, 768, 256, false, true},
        {"(a) output per step: [32,256] x [256,6000]", 32, 6000, 256, false, true},
        {"(c) output projection: [548,512] x [512,6000]", 548, 6000, 512, false, true},
        {"(c) GRU hidden gates per step: [64,512] x [512,1536]", 64, 1536, 512, false, true},
        {"(c) encoder input gates: [768,512] x [512,1536]", 768, 1536, 512, false, true},
        {"square 1024", 1024, 1024, 1024, false, false},
    };
    Rng rng(1);
    for (const Shape& s : shapes) {
        std::vector<float> a(size_t(s.M) * s.K), b(size_t(s.K) * s.N), c(size_t(s.M) * s.N);
        for (auto& x : a) x = float(rng.uniform(-1, 1));
        for (auto& x : b) x = float(rng.uniform(-1, 1));
        auto t = bench::time_it([&] {
            cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                        s.tb ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, 1, a.data(),
                        s.ta ? s.M : s.K, b.data(), s.tb ? s.K : s.N, 0, c.data(), s.N);
        }, seconds);
        double gflops = 2.0 * s.M * s.N * s.K / (t.median_ms / 1e3) / 1e9;
        fmt::print("{}\n", nlohmann::json{{"impl", "openblas"}, {"bench", "sgemm"},
                                          {"shape", s.what}, {"threads", threads},
                                          {"gflops", gflops}, {"ms", t.median_ms}}
                               .dump());
    }
    return 0;
}
