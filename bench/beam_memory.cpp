// Peak memory of beam search (claim 9 of docs/claims.md): one decode of B random source
// sentences of S tokens with a randomly initialised Bahdanau model (E = H = A = --hidden,
// vocabularies of --vocab words), beam width K, every hypothesis forced to run exactly L tokens
// (min_length = max_length = L, so no beam stops early). Run it once per configuration, in a
// fresh process: the peak resident set size (VmHWM) only ever grows.
// Prints one JSON line:
//   {"bench":"beam_memory","beam":10,"length":100,"source_length":100,"hidden":512,
//    "vocab":10000,"batch":1,"keep_attention":true,"rss_before_mb":..,"peak_rss_mb":..,
//    "decode_mb":..,"seconds":..}
// where rss_before_mb is the peak after building the model and encoding the source, and
// decode_mb = peak_rss_mb - rss_before_mb is what decoding added on top.
// usage: beam_memory --beam K --length L [--source S (default L)] [--hidden H (512)]
//                    [--vocab V (10000)] [--batch B (1)] [--keep-attention 0|1 (1)]
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/cli/args.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/seq2seq.h"
#include "synthetic.h"

using namespace seqgrad;

// The process's peak resident set size so far, in MB (VmHWM of /proc/self/status).
static double peak_rss_mb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
    throw Error("/proc/self/status: no VmHWM line");
}

int main(int argc, char** argv) {
    try {
        Args args(std::vector<std::string>(argv + 1, argv + argc),
                  {"beam", "length", "source", "hidden", "vocab", "batch", "keep-attention"}, {});
        const int K = args.get_int("beam", 5), L = args.get_int("length", 50);
        const int S = args.get_int("source", L), H = args.get_int("hidden", 512);
        const int V = args.get_int("vocab", 10000), B = args.get_int("batch", 1);
        const bool keep_attention = args.get_int("keep-attention", 1) != 0;
        if (K < 1 || L < 1 || S < 2 || H < 1 || V < 5 || B < 1)
            throw Error(
                "expected --beam >= 1, --length >= 1, --source >= 2, --hidden >= 1, "
                "--vocab >= 5, --batch >= 1");

        bench::BenchConfig c{"memory", "bahdanau", H, H, H, B, V, V};
        Rng rng(1);
        Seq2Seq model(bench::model_config(c), V, V, rng, bench::fused_layers(c));
        model.eval();
        // Sources of exactly S tokens (EOS included); the targets are not used.
        const Batch batch = bench::batch_pool(c, 2, 1, S, S)[0];

        NoGradGuard no_grad;
        std::unique_ptr<DecoderState> state = model.start_decoding(batch);
        const double before = peak_rss_mb();

        DecodeOptions options;
        options.beam_size = K;
        options.min_length = L;
        options.max_length = L;
        options.keep_attention = keep_attention;
        const auto start = std::chrono::steady_clock::now();
        size_t tokens = 0;
        for (const auto& nbest : beam_search(model, std::move(state), options, batch.src_lengths))
            tokens += nbest.at(0).tokens.size();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (tokens != size_t(B) * size_t(L))
            throw Error(fmt::format("expected {} output tokens, got {}", B * L, tokens));

        const double peak = peak_rss_mb();
        nlohmann::json line{{"bench", "beam_memory"},
                            {"beam", K},
                            {"length", L},
                            {"source_length", S},
                            {"hidden", H},
                            {"vocab", V},
                            {"batch", B},
                            {"keep_attention", keep_attention},
                            {"rss_before_mb", before},
                            {"peak_rss_mb", peak},
                            {"decode_mb", peak - before},
                            {"seconds", seconds}};
        fmt::print("{}\n", line.dump());
        return 0;
    } catch (const std::exception& e) {
        fmt::print(stderr, "beam_memory: error: {}\n", e.what());
        return 1;
    }
}
