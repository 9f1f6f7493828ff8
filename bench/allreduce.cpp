// The gradient sum across ranks (models/distributed/communicator.h) for the gradient sizes of the benchmark
// models: one float per parameter, summed in rank order on every rank.
//
//   mpiexec -n 2 ./build/bench/allreduce [--configs a,c] [--reps 30]
//
// Every rank runs the same fixed number of sums (a time budget could differ between ranks and
// leave one waiting in a collective); each is preceded by a barrier, and rank 0 reports the
// median over the repetitions. Without MPI in the build it reports what it would have measured.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/synthetic.h"
#include "seqgrad/models/distributed/communicator.h"
#include "seqgrad/models/model/seq2seq.h"

using namespace seqgrad;

namespace {

size_t parameter_count(const bench::BenchConfig& c) {
    Rng rng(1);
    Seq2Seq model(bench::model_config(c), c.Vs, c.Vt, rng, bench::fused_layers(c));
    size_t count = 0;
    for (const Tensor& p : model.parameters()) count += size_t(p.numel());
    return count;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> configs = {"a", "c"};
    int reps = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
        if (!std::strcmp(argv[i], "--configs")) {
            configs.clear();
            for (const char* p = argv[i + 1]; *p; ++p)
                if (*p != ',') configs.emplace_back(1, *p);
        }
    }
    if (!mpi_available()) {
        std::printf("allreduce: this build has no MPI (cmake -DSEQGRAD_MPI=ON); nothing to time\n");
        return 0;
    }
    auto comm = mpi_communicator(120);
    if (comm->is_root())
        std::printf("%s; %d repetitions per size, median of rank 0\n", comm->description().c_str(),
                    reps);
    for (const std::string& name : configs) {
        const bench::BenchConfig c = bench::bench_config(name);
        const size_t count = parameter_count(c);
        std::vector<float> gradient(count);
        for (size_t i = 0; i < count; ++i) gradient[i] = float(i % 1000) * 1e-3f;
        std::vector<double> ms;
        for (int r = 0; r < reps + 3; ++r) {
            comm->barrier();
            const auto t0 = std::chrono::steady_clock::now();
            comm->sum(gradient.data(), gradient.size());
            const double t =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            if (r >= 3) ms.push_back(t);  // the first sums warm up buffers and connections
        }
        std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
        const double median = ms[ms.size() / 2];
        const double mb = double(count) * sizeof(float) / 1e6;
        if (comm->is_root())
            std::printf(
                "config (%s): %zu parameters, %.1f MB of gradient: sum %.2f ms (median), "
                "%.2f GB/s of gradient per rank\n",
                name.c_str(), count, mb, median, mb / median);
    }
    return 0;
}
