// What the engine adds around a matrix product: `matmul` through the graph vs one raw
// cblas_sgemm call, forward and forward+backward, on the model's two typical shapes.
//   usage: matmul_overhead [--seconds S]     (single-threaded BLAS)
#include <cblas.h>
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/ops.h"

using namespace seqgrad;

int main(int argc, char** argv) {
    double seconds = argc > 2 && std::string(argv[1]) == "--seconds" ? std::stod(argv[2]) : 2.0;
    set_blas_threads(1);
    Rng rng(1);
    fmt::print(
        "| shape | pass | raw sgemm ms | engine ms | engine / raw |\n|---|---|---|---|---|\n");
    for (auto [M, K, N] : {std::tuple<int, int, int>{32, 256, 768}, {32, 256, 6000}}) {
        Tensor a = Tensor::zeros({M, K}, true), b = Tensor::zeros({K, N}, true);
        for (int64_t i = 0; i < a.numel(); ++i) a.data()[i] = real(rng.uniform(-1, 1));
        for (int64_t i = 0; i < b.numel(); ++i) b.data()[i] = real(rng.uniform(-1, 1));
        std::vector<float> c(size_t(M) * N), dc(size_t(M) * N, 1.0f), da(size_t(M) * K),
            db(size_t(K) * N);
        Tensor upstream = Tensor::full({M, N}, 1);
        // forward: C = A B
        auto raw_fwd = bench::time_it(
            [&] {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, a.data(), K,
                            b.data(), N, 0, c.data(), N);
            },
            seconds);
        auto eng_fwd = bench::time_it(
            [&] {
                NoGradGuard g;
                Tensor out = matmul(a, b);
            },
            seconds);
        // forward + backward: C = A B, dA = dC Bᵀ, dB = Aᵀ dC
        auto raw_both = bench::time_it(
            [&] {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, a.data(), K,
                            b.data(), N, 0, c.data(), N);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, K, N, 1, dc.data(), N,
                            b.data(), N, 1, da.data(), K);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, M, 1, a.data(), K,
                            dc.data(), N, 1, db.data(), N);
            },
            seconds);
        auto eng_both = bench::time_it(
            [&] {
                Tensor out = matmul(a, b);
                out.backward(upstream);
            },
            seconds);
        std::string shape = fmt::format("[{},{}]x[{},{}]", M, K, K, N);
        fmt::print("| {} | forward | {:.4f} | {:.4f} | {:.3f} |\n", shape, raw_fwd.median_ms,
                   eng_fwd.median_ms, eng_fwd.median_ms / raw_fwd.median_ms);
        fmt::print("| {} | forward+backward | {:.4f} | {:.4f} | {:.3f} |\n", shape,
                   raw_both.median_ms, eng_both.median_ms, eng_both.median_ms / raw_both.median_ms);
    }
    return 0;
}
