// How long `seqgrad explore` takes and how big its file is: run_explore on a trained run
// directory (100 sentences at beam 5 by default), `rounds` times, one BLAS thread.
// Prints one JSON line:
//   {"bench":"explore","run_dir":..,"sentences":..,"beam":..,"rounds":..,"median_s":..,
//    "cpu_median_s":..,"bytes":..}
// usage: explore_time RUN_DIR [--limit N] [--beam K] [--rounds R] [--out FILE.html]
//                     [--gradient-sentences N] [--ig-sentences N] [--ig-steps K] [--no-gradients]
//                     [--tape-sentences N]
// (the last five as `seqgrad explore` has them: what the saliency, gradient-flow and tape views
// cost)
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"

using namespace seqgrad;

static double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc),
              {"limit", "beam", "rounds", "out", "ig-sentences", "ig-steps", "gradient-sentences",
               "tape-sentences"},
              {"no-gradients"});
    if (args.positional().size() != 1) {
        fmt::print(stderr, "usage: explore_time RUN_DIR [--limit N] [--beam K] [--rounds R]\n");
        return 2;
    }
    set_blas_threads(1);
    set_num_threads(1);
    ExploreRequest request;
    request.run_dir = args.positional()[0];
    request.limit = args.get_int("limit", 100);
    request.beam = args.get_int("beam", 5);
    request.out = args.get("out", "/tmp/seqgrad_explore_time.html");
    request.progress = false;
    request.gradients = !args.has("no-gradients");
    request.integrated_sentences = args.get_int("ig-sentences", request.integrated_sentences);
    request.integrated_steps = args.get_int("ig-steps", request.integrated_steps);
    request.gradient_sentences = args.get_int("gradient-sentences", request.gradient_sentences);
    request.tape_sentences = args.get_int("tape-sentences", request.tape_sentences);
    const int rounds = args.get_int("rounds", 5);
    std::vector<double> wall, cpu;
    ExploreReport report;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_seconds();
        report = run_explore(request);
        cpu.push_back(cpu_seconds() - c0);
        wall.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    nlohmann::json line{{"bench", "explore"},
                        {"run_dir", request.run_dir},
                        {"sentences", report.sentences},
                        {"beam", request.beam},
                        {"rounds", rounds},
                        {"median_s", median(wall)},
                        {"cpu_median_s", median(cpu)},
                        {"wall_s", wall},
                        {"bytes", report.bytes},
                        {"gradients", request.gradients},
                        {"ig_sentences", request.gradients ? request.integrated_sentences : 0},
                        {"ig_steps", request.integrated_steps},
                        {"gradient_sentences", request.gradients ? request.gradient_sentences : 0},
                        {"tape_sentences", request.gradients ? request.tape_sentences : 0}};
    fmt::print("{}\n", line.dump());
    return 0;
}
