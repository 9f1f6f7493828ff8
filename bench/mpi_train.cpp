// Training steps across processes: the step of bench/train_throughput (forward, backward,
// clip_grad_norm(1.0), Adam) with the batch's rows split over ranks x threads
// (models/training/data_parallel.h) and the gradients summed across ranks
// (models/distributed/communicator.h).
//
//   ./build/bench/mpi_train --config a [--threads T] [--steps 40]               one process
//   mpiexec -n N ./build/bench/mpi_train --config a [--threads T] [--steps 40]  N processes
//
// Every rank runs the same fixed number of steps (a time budget could end on different steps and
// leave a rank waiting in a sum); rank 0 prints one JSON line with the median step time and the
// median time of the step's gradient sum.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "apps/cli/args.h"
#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/models/distributed/communicator.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/training/data_parallel.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "synthetic.h"

using namespace seqgrad;

namespace {
double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"config", "threads", "steps"}, {});
    const bench::BenchConfig c = bench::bench_config(args.get("config", "a"));
    const int threads = args.get_int("threads", 1);
    const int steps = std::max(3, args.get_int("steps", 40));
    std::unique_ptr<Communicator> comm = launched_by_mpi() ? mpi_communicator() : single_process();

    Rng rng(0);
    Seq2Seq model(bench::model_config(c), c.Vs, c.Vt, rng, bench::fused_layers(c));
    AdamOptions o;
    o.lr = 1e-3;
    Adam adam(model.named_parameters(), o);
    adam.set_zero_grads_in_step(true);
    adam.zero_grad();
    DataParallel parallel(threads);  // sets seqgrad's threads
    set_blas_threads(1);             // each shard runs its own products (also with 1 thread)
    std::vector<Batch> pool = bench::batch_pool(c, 1, 16, 5, 12);
    std::vector<Tensor> params = model.parameters();
    size_t gradient_bytes = 0;
    for (const Tensor& p : params) gradient_bytes += size_t(p.numel()) * sizeof(real);

    std::vector<double> step_ms, sum_ms, wait_ms;
    const int warmup = 5;
    for (int s = 0; s < warmup + steps; ++s) {
        comm->barrier();
        const auto start = std::chrono::steady_clock::now();
        adam.zero_grad();
        parallel.forward_backward(model, pool[size_t(s) % pool.size()], LossOptions{}, rng,
                                  comm.get());
        clip_grad_norm(adam, 1.0);
        adam.step();
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        if (s < warmup) continue;
        step_ms.push_back(ms);
        sum_ms.push_back(1e3 * parallel.last_communication_seconds());
        wait_ms.push_back(1e3 * parallel.last_wait_seconds());
    }
    if (comm->is_root())
        fmt::print("{}\n", nlohmann::json{{"impl", "seqgrad"},
                                          {"bench", "mpi_train"},
                                          {"config", c.name},
                                          {"ranks", comm->size()},
                                          {"threads_per_rank", threads},
                                          {"batch", c.B},
                                          {"steps", steps},
                                          {"ms_per_step", median(step_ms)},
                                          {"gradient_sum_ms", median(sum_ms)},
                                          {"wait_for_slowest_rank_ms", median(wait_ms)},
                                          {"gradient_mb", double(gradient_bytes) / 1e6},
                                          {"peak_rss_mb_rank0", bench::peak_rss_mb()}}
                               .dump());
    return 0;
}
