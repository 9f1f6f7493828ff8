// Decoding speed of a config-(a)-sized Bahdanau model (random seeded weights, E=H=A=256,
// vocabularies 4000/6000) or, --config t, of the config-(t) Transformer (bench/synthetic.h), on
// sources from the benchmark distribution: greedy and beam 5 (alpha 0.6, score / len^alpha, max
// length 20), sentence by sentence (batch 1) or batched. The Transformer decodes incrementally:
// each step attends over the cached keys and values of the steps before it.
// Prints one JSON line:
//   {"impl":"seqgrad","bench":"decode","config":"a","mode":"beam5","batch":1,"threads":1,
//    "sentences_per_s":..,"sentences":..,"cpu_ms_per_sentence":..,"mean_len":..,"peak_rss_mb":..}
// usage: decode_throughput --mode greedy|beam5 [--config a|t] [--batch B] [--threads N]
//                          [--seconds S]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <ctime>

#include "apps/cli/args.h"
#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/translation_model.h"
#include "synthetic.h"

using namespace seqgrad;

// CPU time of all threads of the process. On a machine shared with other jobs, CPU time per
// sentence moves less than wall time (time spent waiting for a core is not counted), which
// helps comparing two builds; it is the total over threads, so with --threads 2 it also shows
// what the second thread costs.
static double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc),
              {"mode", "config", "batch", "threads", "seconds", "seed"}, {});
    const std::string mode = args.get("mode", "greedy");
    if (mode != "greedy" && mode != "beam5") throw Error("--mode: greedy or beam5");
    const int threads = args.get_int("threads", 1);
    const double seconds = args.get_double("seconds", 10);
    bench::BenchConfig c = bench::bench_config(args.get("config", "a"));
    if (c.name != "a" && c.name != "t") throw Error("--config: a or t");
    c.B = args.get_int("batch", 1);
    set_blas_threads(threads);  // the encoder's products over all source positions
    set_num_threads(
        threads);  // the decoder's small products, split by column (autograd/kernels/gemm.cpp)

    Rng rng(uint64_t(args.get_int("seed", 0)));
    std::unique_ptr<TranslationModel> model = make_model(bench::model_config(c), c.Vs, c.Vt, rng,
                                                         bench::fused_layers(c));
    model->eval();
    std::vector<Batch> pool = bench::batch_pool(c, 2, 64 / std::min(c.B, 64) + 1);
    DecodeOptions options;
    options.beam_size = mode == "beam5" ? 5 : 1;
    options.alpha = 0.6;
    options.length_penalty = DecodeOptions::average;
    options.max_length = 20;

    size_t next = 0;
    int64_t sentences = 0, output_tokens = 0;
    auto decode = [&] {
        NoGradGuard no_grad;
        const Batch& batch = pool[next++ % pool.size()];
        std::unique_ptr<DecoderState> state = model->start_decoding(batch);
        if (options.beam_size == 1) {
            for (const Hypothesis& h : greedy_decode(*model, std::move(state), options, batch.src_lengths))
                output_tokens += int64_t(h.tokens.size());
        } else {
            for (const auto& nbest : beam_search(*model, std::move(state), options, batch.src_lengths))
                output_tokens += int64_t(nbest[0].tokens.size());
        }
        sentences += batch.batch_size;
    };
    bench::time_it(decode, 1.0, 0, 3);
    sentences = output_tokens = 0;
    const double cpu_start = process_cpu_seconds();
    bench::Timing t = bench::time_it(decode, seconds, 0, 3);
    const double cpu_seconds = process_cpu_seconds() - cpu_start;
    double seconds_per_sentence = t.median_ms / 1e3 / c.B;
    nlohmann::json line{{"impl", "seqgrad"},
                        {"bench", "decode"},
                        {"config", c.name},
                        {"mode", mode},
                        {"batch", c.B},
                        {"threads", threads},
                        {"sentences_per_s", 1.0 / seconds_per_sentence},
                        {"sentences", sentences},
                        {"cpu_ms_per_sentence", cpu_seconds * 1e3 / double(sentences)},
                        {"mean_len", double(output_tokens) / double(sentences)},
                        {"peak_rss_mb", bench::peak_rss_mb()}};
    fmt::print("{}\n", line.dump());
    return 0;
}
