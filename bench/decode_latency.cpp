// The native side of the live page's decode latency (bench/live_page.sh): one sentence decoded by
// a trained run, greedy and with beam 5 (the run's α and length penalty, best hypothesis only, no
// attention kept), on one thread, as the page's latency check does in the browser
// (apps/explore/live/page/90_start.js: translate() of one sentence, median of 7).
// Prints one JSON line:
//   {"bench":"decode_latency","run":..,"sentence":..,"greedy_ms":..,"beam5_ms":..,
//    "greedy_tokens":..,"beam5_tokens":..}
// usage: decode_latency RUN_DIR SENTENCE [--repeats N] [--threads T]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "apps/cli/args.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

using namespace seqgrad;

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"repeats", "threads"}, {});
    if (args.positional().size() != 2) {
        fmt::print(stderr, "usage: decode_latency RUN_DIR SENTENCE [--repeats N] [--threads T]\n");
        return 2;
    }
    const int repeats = std::max(1, args.get_int("repeats", 7));
    const int threads = args.get_int("threads", 1);
    set_blas_threads(threads);
    set_num_threads(threads);
    const LoadedRun run = load_run(args.positional()[0]);
    const std::vector<std::string> sources = {args.positional()[1]};

    nlohmann::json line{{"bench", "decode_latency"},
                        {"run", args.positional()[0]},
                        {"sentence", sources[0]},
                        {"threads", threads}};
    for (const int beam : {1, 5}) {
        DecodeOptions options = decode_options_from(run.config.decode);
        options.beam_size = beam;
        options.nbest = 1;
        options.keep_attention = false;
        std::vector<double> ms;
        size_t tokens = 0;
        for (int k = 0; k <= repeats; ++k) {  // the first is a warm-up
            const auto start = std::chrono::steady_clock::now();
            const Translation t = translate(*run.model, run.task, sources, options)[0];
            const std::chrono::duration<double, std::milli> took =
                std::chrono::steady_clock::now() - start;
            if (k > 0) ms.push_back(took.count());
            tokens = t.nbest.empty() ? 0 : t.nbest[0].tokens.size();
        }
        std::sort(ms.begin(), ms.end());
        const std::string name = beam == 1 ? "greedy" : "beam5";
        line[name + "_ms"] = ms[ms.size() / 2];
        line[name + "_tokens"] = tokens;
    }
    fmt::print("{}\n", line.dump());
    return 0;
}
