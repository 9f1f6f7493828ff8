// The cost of recording the beam-search trace (BeamSearchExtras::observer,
// apps/explore/beam_trace.h): beam 5 on a config-(a)-sized Bahdanau model (random seeded weights,
// E=H=A=256, vocabularies 4000/6000, sources from the benchmark distribution, max length 20), plain
// and traced, in alternated rounds so that both see the same machine load. Prints one JSON line per
// batch size:
//   {"bench":"beam_trace","batch":B,"rounds":R,"plain_ms":..,"traced_ms":..,"overhead":..,
//    "nodes_per_sentence":..}
// plain_ms / traced_ms: the median over rounds of each round's median time to decode one batch;
// overhead = traced_ms / plain_ms - 1; the same for the process CPU time (less disturbed by
// other jobs on a shared machine).
// usage: beam_trace [--batch B[,B...]] [--rounds R] [--seconds S]   (S: per round and mode)
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "apps/cli/args.h"
#include "apps/explore/beam_trace.h"
#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/seq2seq.h"
#include "synthetic.h"

using namespace seqgrad;

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"batch", "rounds", "seconds"}, {});
    const int rounds = args.get_int("rounds", 5);
    const double seconds = args.get_double("seconds", 2);
    std::vector<int> batches;
    std::stringstream list(args.get("batch", "1,32"));
    for (std::string item; std::getline(list, item, ',');) batches.push_back(std::stoi(item));
    set_blas_threads(1);
    set_num_threads(1);

    for (int batch_size : batches) {
        bench::BenchConfig c = bench::bench_config("a");
        c.B = batch_size;
        Rng rng(0);
        Seq2Seq model(bench::model_config(c), c.Vs, c.Vt, rng, bench::fused_layers(c));
        model.eval();
        std::vector<Batch> pool = bench::batch_pool(c, 2, 64 / std::min(c.B, 64) + 1);
        DecodeOptions options;
        options.beam_size = 5;
        options.alpha = 0.6;
        options.length_penalty = DecodeOptions::average;
        options.max_length = 20;

        size_t next = 0;
        int64_t nodes = 0, sentences = 0;
        auto decode = [&](bool traced) {
            NoGradGuard no_grad;
            const Batch& batch = pool[next++ % pool.size()];
            std::unique_ptr<DecoderState> state = model.start_decoding(batch);
            BeamTraceRecorder recorder;
            std::vector<BeamTrace>& traces = recorder.traces;
            BeamSearchExtras extras;
            if (traced) extras.observer = &recorder;
            beam_search(model, std::move(state), options, batch.src_lengths, extras);
            for (const BeamTrace& t : traces) nodes += int64_t(t.nodes.size());
            if (traced) sentences += batch.batch_size;
        };
        bench::time_it([&] { decode(false); }, 0.5, 0, 2);  // warm up
        bench::time_it([&] { decode(true); }, 0.5, 0, 2);
        std::vector<double> plain, traced, plain_cpu, traced_cpu;
        for (int r = 0; r < rounds; ++r) {
            // Alternate which mode goes first, so neither always gets the quieter half.
            for (int k = 0; k < 2; ++k) {
                const bool trace = (r + k) % 2 == 1;
                next = 0;  // both modes decode the same batches
                const bench::Timing timing = bench::time_it([&] { decode(trace); }, seconds, 0, 3);
                (trace ? traced : plain).push_back(timing.median_ms);
                (trace ? traced_cpu : plain_cpu).push_back(timing.cpu_median_ms);
            }
        }
        const double p = median(plain), t = median(traced);
        nlohmann::json line{
            {"bench", "beam_trace"},
            {"batch", batch_size},
            {"rounds", rounds},
            {"plain_ms", p},
            {"traced_ms", t},
            {"overhead", t / p - 1},
            {"plain_cpu_ms", median(plain_cpu)},
            {"traced_cpu_ms", median(traced_cpu)},
            {"cpu_overhead", median(traced_cpu) / median(plain_cpu) - 1},
            {"plain_round_ms", plain},
            {"traced_round_ms", traced},
            {"nodes_per_sentence", double(nodes) / double(std::max<int64_t>(sentences, 1))}};
        fmt::print("{}\n", line.dump());
        std::fflush(stdout);
    }
    return 0;
}
