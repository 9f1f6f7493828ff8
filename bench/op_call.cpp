// The C++ side of bench/python_overhead.py: the time of one op call through the engine from C++,
// for a small op (add of two [8,8] tensors that require grad: the node and its backward rule
// recorded) and for one GRU step (GRUCell 32 -> 64, batch 16, parameters requiring grad).
//   usage: op_call [--seconds S]     prints {"add_us": ..., "gru_step_us": ...} (medians)
#include <fmt/format.h>

#include <string>

#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/gru.h"

using namespace seqgrad;

int main(int argc, char** argv) {
    const double seconds = argc > 2 && std::string(argv[1]) == "--seconds" ? std::stod(argv[2]) : 1.0;
    set_blas_threads(1);
    Rng rng(1);
    constexpr int kCalls = 1000;  // per timed run: a run of one call would time the clock
    // Keeps a result alive until the next call (as the Python loop's variable does): the node is
    // freed when the next result replaces it, in both languages. Local, not static: a static
    // tensor would be freed after the engine's pool at exit.
    Tensor kept;

    Tensor a = Tensor::full({8, 8}, 0.5f, true), b = Tensor::full({8, 8}, 0.25f, true);
    const bench::Timing add_time = bench::time_it(
        [&] {
            for (int i = 0; i < kCalls; ++i) kept = add(a, b);
        },
        seconds);

    GRUCell cell(32, 64, rng);
    Tensor x = Tensor::full({16, 32}, 0.1f), h = Tensor::full({16, 64}, 0.2f);
    const bench::Timing gru_time = bench::time_it(
        [&] {
            for (int i = 0; i < kCalls; ++i) kept = cell.forward(x, h);
        },
        seconds);
    fmt::print("{{\"add_us\": {:.4f}, \"gru_step_us\": {:.4f}}}\n", add_time.median_ms,
               gru_time.median_ms);  // ms per kCalls = 1000 calls is µs per call
}
