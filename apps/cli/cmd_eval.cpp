// `seqgrad eval RUN_DIR`: decode a test set, score it (BLEU, chrF, exact match for dates).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/plot/plot.h"
#include "apps/cli/run_args.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"
#include "seqgrad/data/corpus.h"
#include "seqgrad/data/dates.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/decoding/translator.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad eval RUN_DIR [--test FILE.tsv] [--beam K] [--alpha A] [--out FILE]
                    [--checkpoint best|last] [--limit N] [--length-penalty P]
                    [--coverage B] [--no-repeat-ngram N] [--summary-csv FILE]

Decodes a test set with the model trained in RUN_DIR and prints, first, sacreBLEU's default
corpus BLEU (13a tokenisation, cased) with its signature and chrF, of the output against the
raw reference side of the test file: the protocol papers report. With a BPE run (data.tokenizer
"bpe", cased) the output is real, detokenised text, so this is the number to set beside
published ones. A char / word run writes normalised text (e.g. lower-cased, punctuation split
off); its raw-reference score counts those differences as errors, so the scores on normalised
text (references put through the same normalisation) follow, labelled as such. Then the share
of test sentences holding a token outside the vocabulary (<unk>), exact-match accuracy for the
date task, the decoding speed, the mean output length and how often the output repeats itself
(words, after the pipeline's normalisation; the references' numbers beside them). The
hypotheses are written one per line to FILE.

options (decoding defaults: the run's config, section "decode"):
  --test FILE.tsv   source<TAB>target pairs (columns as data.source_column says); default: the
                    held-out test split of the date task (generated as in training), or
                    data.test of a TSV task
  --beam K          beam width; 1 = greedy decoding (decode.beam_size)
  --alpha A         length-penalty exponent (decode.alpha)
  --out FILE        where the hypotheses go (default RUN_DIR/hyps.CHECKPOINT.beamK.txt)
  --checkpoint W    best (default; falls back to last when there is none) or last
  --limit N         only the first N test pairs
  --length-penalty P  none, average (len^alpha) or gnmt (((5 + len) / 6)^alpha)
                    (decode.length_penalty; see models/decoding/decoding.h)
  --coverage B      GNMT's coverage penalty weight beta, 0 = off (beam search: it re-ranks the
                    finished hypotheses; greedy output does not change)
  --no-repeat-ngram N  forbid a token that would repeat an n-gram of the output, 0 = off
  --summary-csv FILE   append one CSV row (header first when FILE is new) with the settings and
                    numbers above, for sweeps and `seqgrad plot`
)";

DecodeOptions::LengthPenalty length_penalty_named(const std::string& name) {
    if (name == "none") return DecodeOptions::none;
    if (name == "average") return DecodeOptions::average;
    if (name == "gnmt") return DecodeOptions::gnmt;
    throw Error(fmt::format("--length-penalty: expected none, average or gnmt, got \"{}\"", name));
}

const char* length_penalty_name(DecodeOptions::LengthPenalty p) {
    return p == DecodeOptions::none ? "none" : p == DecodeOptions::average ? "average" : "gnmt";
}

// The words of `text` as the run's pipeline normalises it (white space separated).
std::vector<std::string> normalised_words(const Task& task, const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    for (char c : task.pipeline.join(task.pipeline.tokens(text)) + " ") {
        if (c != ' ') {
            word += c;
        } else if (!word.empty()) {
            words.push_back(word);
            word.clear();
        }
    }
    return words;
}

// Appends `row` to the CSV file `path` (with `header` first when the file is new or empty),
// rewriting the whole file atomically so a crash never leaves half a row.
void append_csv_row(const std::string& path, const std::vector<std::string>& header,
                    const std::vector<std::string>& row) {
    std::string text;
    if (std::filesystem::exists(path)) text = read_file(path);
    if (text.empty()) {
        text = plot::to_csv(header, {});
    } else if (text.substr(0, text.find('\n') + 1) != plot::to_csv(header, {})) {
        throw Error(
            fmt::format("--summary-csv {}: its first line is not the header this version "
                        "writes ({}); give a new file",
                        path, fmt::join(header, ",")));
    }
    write_file_atomically(path, text + plot::to_csv({}, {row}));
}

// "lower-cased, punctuation split off, character tokens": what the pipeline does to text.
std::string describe_pipeline(const DataConfig& d) {
    std::vector<std::string> steps;
    if (d.lowercase) steps.push_back("lower-cased");
    if (d.strip_accents) steps.push_back("accents stripped");
    if (d.separate_punctuation) steps.push_back("punctuation split off");
    steps.push_back("white space collapsed");
    if (d.tokenizer == "bpe")
        steps.push_back("BPE subwords");
    else
        steps.push_back(d.tokenizer == "word" ? "word tokens" : "character tokens");
    return fmt::format("{}", fmt::join(steps, ", "));
}

}  // namespace

std::string eval_scores_text(const Task& task, const std::string& pipeline_description,
                             const std::vector<std::string>& hypotheses,
                             const std::vector<std::string>& raw_references) {
    std::string out;
    auto score = [&](const std::vector<std::string>& refs) {
        BleuOptions bleu_options;
        ChrfOptions chrf_options;
        BleuScore bleu = corpus_bleu(hypotheses, {refs}, bleu_options);
        ChrfScore chrf = corpus_chrf(hypotheses, {refs}, chrf_options);
        out += fmt::format("{}\nBLEU signature: {}\n", bleu.format(2),
                           bleu_signature(bleu_options, 1));
        out += fmt::format("{}\n{} signature: {}\n", chrf.format(2), chrf.name,
                           chrf_signature(chrf_options, 1));
    };
    if (task.pipeline.reversible()) {
        out += "sacreBLEU on the detokenised, cased output against the raw references:\n";
        score(raw_references);
        return out;
    }
    out += fmt::format(
        "sacreBLEU of the output against the raw references (the output is normalised text: "
        "{}; differences from the raw text count as errors):\n",
        pipeline_description);
    score(raw_references);
    std::vector<std::string> normalized;
    for (const std::string& r : raw_references)
        normalized.push_back(task.pipeline.join(task.pipeline.tokens(r)));
    out +=
        "on normalised text (references normalised like the output; not comparable with "
        "published scores):\n";
    score(normalized);
    return out;
}

std::string unknown_share_text(const Task& task, const std::vector<SentencePair>& pairs) {
    size_t sources = 0, targets = 0;
    auto has_unknown = [](const Vocab& vocab, const std::vector<std::string>& tokens) {
        for (const std::string& t : tokens)
            if (!vocab.contains(t)) return true;
        return false;
    };
    for (const SentencePair& p : pairs) {
        sources += has_unknown(task.source_vocab, task.pipeline.source_tokens(p.source));
        targets += has_unknown(task.target_vocab, task.pipeline.tokens(p.target));
    }
    const double n = double(std::max<size_t>(pairs.size(), 1));
    return fmt::format(
        "sentences with a token outside the vocabulary (<unk>): {} of {} sources ({:.1f}%), {} "
        "of {} references ({:.1f}%)\n",
        sources, pairs.size(), 100.0 * double(sources) / n, targets, pairs.size(),
        100.0 * double(targets) / n);
}

RepeatCounts count_repeats(const std::vector<std::vector<std::string>>& sentences) {
    RepeatCounts counts;
    for (const std::vector<std::string>& words : sentences) {
        counts.words += words.size();
        std::set<std::vector<std::string>> trigrams;
        for (size_t i = 0; i < words.size(); ++i) {
            if (i >= 1 && words[i] == words[i - 1]) ++counts.immediate;
            if (i >= 2 && !trigrams.insert({words[i - 2], words[i - 1], words[i]}).second)
                ++counts.repeated_trigrams;
        }
    }
    return counts;
}

std::string output_stats_text(const RepeatCounts& output, const RepeatCounts& references,
                              size_t sentences) {
    const double n = double(std::max<size_t>(sentences, 1));
    return fmt::format(
        "output length: mean {:.2f} words (references {:.2f})\n"
        "repeats per 1,000 output words: {:.2f} immediate (\"the the\"), {:.2f} repeated "
        "3-grams (references {:.2f}, {:.2f})\n",
        double(output.words) / n, double(references.words) / n, output.immediate_per_1000(),
        output.trigrams_per_1000(), references.immediate_per_1000(),
        references.trigrams_per_1000());
}

int cmd_eval(const Argv& argv) {
    Args args(argv,
              {"test", "beam", "alpha", "out", "checkpoint", "limit", "length-penalty", "coverage",
               "no-repeat-ngram", "summary-csv"},
              {"help"});
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
    if (args.has("length-penalty"))
        options.length_penalty = length_penalty_named(args.get("length-penalty"));
    options.coverage_penalty = args.get_double("coverage", 0);
    if (!(options.coverage_penalty >= 0))
        throw Error(fmt::format("--coverage: expected B >= 0, got {}", args.get("coverage")));
    options.no_repeat_ngram_size = args.get_int("no-repeat-ngram", 0);
    if (options.no_repeat_ngram_size < 0)
        throw Error(fmt::format("--no-repeat-ngram: expected N >= 0, got {}",
                                options.no_repeat_ngram_size));
    options.nbest = 1;
    options.keep_attention = false;

    std::string origin;
    std::vector<SentencePair> test = load_test_set(args, run.config, origin);
    if (limit > 0 && size_t(limit) < test.size()) test.resize(size_t(limit));
    if (test.empty()) throw Error("the test set is empty");

    std::vector<std::string> sources, raw_references, references;
    for (const SentencePair& p : test) {
        sources.push_back(p.source);
        raw_references.push_back(p.target);
        // What the model's pipeline makes of the reference: the normalised reference.
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
        options.alpha, length_penalty_name(options.length_penalty), options.max_length);
    if (options.coverage_penalty > 0 || options.no_repeat_ngram_size > 0)
        fmt::print("decoding extras: coverage penalty {}, {}\n", options.coverage_penalty,
                   options.no_repeat_ngram_size > 0
                       ? fmt::format("no repeated {}-grams", options.no_repeat_ngram_size)
                       : std::string("n-gram blocking off"));
    std::fflush(stdout);

    auto start = std::chrono::steady_clock::now();
    std::vector<Translation> translations = translate(*run.model, run.task, sources, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<std::string> hypotheses;
    for (const Translation& t : translations) hypotheses.push_back(t.text);

    fmt::print("decoded {} sentences in {:.2f}s: {:.1f} sentences/s\n", test.size(), seconds,
               double(test.size()) / std::max(seconds, 1e-9));
    fmt::print("{}", eval_scores_text(run.task, describe_pipeline(run.config.data), hypotheses,
                                      raw_references));
    fmt::print("{}", unknown_share_text(run.task, test));

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

    std::vector<std::vector<std::string>> output_words, reference_words;
    for (size_t i = 0; i < test.size(); ++i) {
        output_words.push_back(normalised_words(run.task, hypotheses[i]));
        reference_words.push_back(normalised_words(run.task, raw_references[i]));
    }
    const RepeatCounts output_repeats = count_repeats(output_words);
    const RepeatCounts reference_repeats = count_repeats(reference_words);
    fmt::print("{}", output_stats_text(output_repeats, reference_repeats, test.size()));

    if (args.has("summary-csv")) {
        // BLEU against the references as the output is written: normalised like it for a
        // char / word run (the second score above), raw for a reversible (BPE) one.
        const BleuScore bleu =
            corpus_bleu(hypotheses, {run.task.pipeline.reversible() ? raw_references : references},
                        BleuOptions{});
        const double n = double(test.size());
        append_csv_row(
            args.get("summary-csv"),
            {"checkpoint", "test", "sentences", "beam", "alpha", "length_penalty", "coverage",
             "no_repeat_ngram", "seconds", "sentences_per_s", "bleu", "mean_length",
             "reference_mean_length", "immediate_repeats_per_1000", "repeated_trigrams_per_1000"},
            {run.checkpoint_path, origin, std::to_string(test.size()),
             std::to_string(options.beam_size), fmt::format("{}", options.alpha),
             length_penalty_name(options.length_penalty),
             fmt::format("{}", options.coverage_penalty),
             std::to_string(options.no_repeat_ngram_size), fmt::format("{:.4f}", seconds),
             fmt::format("{:.2f}", n / std::max(seconds, 1e-9)), fmt::format("{:.2f}", bleu.score),
             fmt::format("{:.3f}", double(output_repeats.words) / n),
             fmt::format("{:.3f}", double(reference_repeats.words) / n),
             fmt::format("{:.3f}", output_repeats.immediate_per_1000()),
             fmt::format("{:.3f}", output_repeats.trigrams_per_1000())});
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
