// What the size-bucketed buffer pool saves: a training-like loop of small recurrent steps
// (forward + backward through 20 tanh(linear) steps, batch 16, hidden 64), with the pool on and
// off, alternating A B A B so that machine noise hits both alike.
//   usage: buffer_pool [--seconds S]
#include <fmt/format.h>

#include <string>

#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/ops.h"

using namespace seqgrad;

int main(int argc, char** argv) {
    double seconds = argc > 2 && std::string(argv[1]) == "--seconds" ? std::stod(argv[2]) : 1.0;
    set_blas_threads(1);
    const int64_t B = 16, H = 64, T = 20;
    Rng rng(1);
    Tensor w = Tensor::zeros({H, H}, true), b = Tensor::zeros({H}, true);
    for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(rng.uniform(-0.1, 0.1));
    Tensor x = Tensor::full({B, H}, 0.5);
    auto step = [&] {
        Tensor h = x;
        for (int t = 0; t < T; ++t) h = tanh(add(linear(h, w, b), x));
        Tensor loss = mean(mul(h, h));
        loss.backward();
        w.zero_grad();
        b.zero_grad();
    };
    std::vector<double> on, off;
    for (int round = 0; round < 5; ++round) {
        buffer_pool_set_enabled(true);
        on.push_back(bench::time_it(step, seconds).median_ms);
        buffer_pool_set_enabled(false);
        off.push_back(bench::time_it(step, seconds).median_ms);
    }
    std::sort(on.begin(), on.end());
    std::sort(off.begin(), off.end());
    buffer_pool_set_enabled(true);
    for (int i = 0; i < 5; ++i) step();  // refill the pool after the "off" rounds
    BufferPoolStats before = buffer_pool_stats();
    for (int i = 0; i < 100; ++i) step();
    BufferPoolStats after = buffer_pool_stats();
    fmt::print(
        "step (20 recurrent steps fwd+bwd, B={}, H={}): pool on {:.4f} ms, pool off {:.4f} "
        "ms (medians of 5 rounds), off/on = {:.3f}\n",
        B, H, on[2], off[2], off[2] / on[2]);
    fmt::print("with the pool: {} system allocations and {} pool hits in 100 steps\n",
               after.system_allocations - before.system_allocations,
               after.pool_hits - before.pool_hits);
    return 0;
}
