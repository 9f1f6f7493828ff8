// `seqgrad eval RUN_DIR`: decode a test set, score it (BLEU, chrF, exact match for dates).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "apps/args.h"
#include "apps/commands.h"
#include "apps/plot.h"
#include "apps/run_args.h"
#include "autograd/tensor.h"
#include "data/accuracy.h"
#include "data/bleu.h"
#include "data/chrf.h"
#include "data/corpus.h"
#include "data/dates.h"
#include "data/file_io.h"
#include "models/run.h"
#include "models/translator.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad eval RUN_DIR [--test FILE.tsv] [--beam K] [--alpha A] [--out FILE]
                    [--checkpoint best|last] [--limit N]

Decodes a test set with the model trained in RUN_DIR and prints sacreBLEU-compatible corpus
BLEU (with its signature) and chrF, plus exact-match accuracy for the date task, and the
decoding speed in sentences/s. The hypotheses are written one per line to FILE.

The model reads and writes normalised text (the training pipeline: e.g. lower-case, punctuation
split off), so the references are put through the same normalisation before scoring; the
scores are therefore on normalised text, not on raw detokenised output.

options (decoding defaults: the run's config, section "decode"):
  --test FILE.tsv   source<TAB>target pairs (columns as data.source_column says); default: the
                    held-out test split of the date task (generated as in training), or
                    data.test of a TSV task
  --beam K          beam width; 1 = greedy decoding (decode.beam_size)
  --alpha A         length-penalty exponent (decode.alpha)
  --out FILE        where the hypotheses go (default RUN_DIR/hyps.CHECKPOINT.beamK.txt)
  --checkpoint W    best (default; falls back to last when there is none) or last
  --limit N         only the first N test pairs
)";

// "lower-cased, punctuation split off, character tokens": what the pipeline does to text.
std::string describe_pipeline(const DataConfig& d) {
    std::vector<std::string> steps;
    if (d.lowercase) steps.push_back("lower-cased");
    if (d.strip_accents) steps.push_back("accents stripped");
    if (d.separate_punctuation) steps.push_back("punctuation split off");
    steps.push_back("white space collapsed");
    steps.push_back(d.tokenizer == "word" ? "word tokens" : "character tokens");
    return fmt::format("{}", fmt::join(steps, ", "));
}

// The test pairs and a description of where they came from.
std::vector<SentencePair> load_test_set(const Args& args, const Config& c, std::string& origin) {
    CorpusOptions options;
    options.source_column = c.data.source_column;
    options.columns = size_t(c.data.columns);
    options.on_bad_line = on_bad_line_from_string(c.data.bad_lines);
    auto read = [&](const std::string& path) {
        CorpusReadResult r = read_parallel_corpus(path, options);
        origin = path;
        if (r.skipped > 0) {
            origin += fmt::format(" ({} bad lines skipped)", r.skipped);
            for (const auto& m : r.messages) fmt::print(stderr, "  {}\n", m);
        }
        return r.pairs;
    };
    if (args.has("test")) return read(args.get("test"));
    if (c.data.task == "dates") {
        origin = fmt::format("the date task's held-out test split (seed {})", c.data.dates_seed);
        return make_date_splits(size_t(c.data.dates_train), size_t(c.data.dates_valid),
                                size_t(c.data.dates_test), c.data.dates_seed)
            .test;
    }
    if (c.data.test.empty())
        throw Error("the run's config has no data.test: give a test set with --test FILE.tsv");
    const std::string path = c.resolve(c.data.test);
    if (!std::filesystem::exists(path))
        throw Error(fmt::format(
            "{}: no such file (data.test of the run's config.json, read relative to the run "
            "directory); give the test set with --test FILE.tsv",
            path));
    return read(path);
}

}  // namespace

int cmd_eval(const Argv& argv) {
    Args args(argv, {"test", "beam", "alpha", "out", "checkpoint", "limit"}, {"help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().size() != 1) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    const std::string run_dir = args.positional()[0];
    const int limit = args.get_int("limit", 0);
    if (limit < 0) throw Error(fmt::format("--limit: expected N >= 0, got {}", limit));

    LoadedRun run = load_run_from_args(args, run_dir);
    const std::string which = args.get("checkpoint", "best");
    DecodeOptions options = decode_options_from_args(args, run);
    options.alpha = args.get_double("alpha", options.alpha);
    options.nbest = 1;
    options.keep_attention = false;

    std::string origin;
    std::vector<SentencePair> test = load_test_set(args, run.config, origin);
    if (limit > 0 && size_t(limit) < test.size()) test.resize(size_t(limit));
    if (test.empty()) throw Error("the test set is empty");

    std::vector<std::string> sources, references;
    for (const SentencePair& p : test) {
        sources.push_back(p.source);
        // The model's output is normalised text; score against references normalised alike.
        references.push_back(run.task.pipeline.join(run.task.pipeline.tokens(p.target)));
    }

    // "best" may have fallen back to "last": name the file after the checkpoint really used.
    const std::string used =
        run.checkpoint_path.find("/last.safetensors") != std::string::npos ? "last" : which;
    fmt::print("model: {}\n", run.checkpoint_path);
    fmt::print("test set: {}, {} pairs\n", origin, test.size());
    fmt::print(
        "decoding: {}, alpha {} ({} length penalty), max length {}\n",
        options.beam_size == 1 ? std::string("greedy") : fmt::format("beam {}", options.beam_size),
        options.alpha, run.config.decode.length_penalty, options.max_length);
    std::fflush(stdout);

    auto start = std::chrono::steady_clock::now();
    std::vector<Translation> translations = translate(*run.model, run.task, sources, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<std::string> hypotheses;
    for (const Translation& t : translations) hypotheses.push_back(t.text);

    fmt::print("decoded {} sentences in {:.2f}s: {:.1f} sentences/s\n", test.size(), seconds,
               double(test.size()) / std::max(seconds, 1e-9));
    fmt::print("references normalised like the model's output ({})\n",
               describe_pipeline(run.config.data));

    BleuOptions bleu_options;
    BleuScore bleu = corpus_bleu(hypotheses, {references}, bleu_options);
    fmt::print("{}\n", bleu.format(2));
    fmt::print("BLEU signature: {}\n", bleu_signature(bleu_options, 1));
    ChrfOptions chrf_options;
    ChrfScore chrf = corpus_chrf(hypotheses, {references}, chrf_options);
    fmt::print("{}\n", chrf.format(2));
    fmt::print("{} signature: {}\n", chrf.name, chrf_signature(chrf_options, 1));

    if (run.task.is_dates()) {
        double accuracy = exact_match_accuracy(hypotheses, references);
        size_t correct = size_t(std::lround(accuracy * double(test.size())));
        fmt::print("exact-match accuracy: {:.2f}% ({} of {})\n", 100 * accuracy, correct,
                   test.size());
        // A few of the mistakes: what a learner looks at next.
        int shown = 0;
        for (size_t i = 0; i < test.size() && shown < 5; ++i) {
            if (hypotheses[i] == references[i]) continue;
            if (shown++ == 0) fmt::print("some errors (source -> output, expected):\n");
            fmt::print("  {:<36} -> {:<12} expected {}\n", sources[i], hypotheses[i],
                       references[i]);
        }
    }

    std::string out =
        args.get("out", fmt::format("{}/hyps.{}.beam{}.txt", run_dir, used, options.beam_size));
    std::string text;
    for (const std::string& h : hypotheses) text += h + "\n";
    write_file_atomically(out, text);
    fmt::print("hypotheses written to {}\n", out);
    return 0;
}

}  // namespace seqgrad
