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
#include "apps/cli/run_args.h"
#include "apps/plot/plot.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"
#include "seqgrad/data/corpus.h"
#include "seqgrad/data/dates.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/data/score_definitions.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad eval RUN_DIR [--test FILE.tsv [FILE.tsv ...]] [--beam K] [--alpha A] [--out FILE]
                    [--checkpoint best|last|NAME] [--limit N] [--length-penalty P]
                    [--coverage B] [--no-repeat-ngram N] [--summary-csv FILE]
                    [--metrics LIST] [--attention-stats] [--long-input P] [--tune-alpha]

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

BLEU is not one number: the definitions people publish with differ by more than a point on the
same output. --metrics all prints each on its own line, labelled, with sacreBLEU's signature:
  BLEU cased 13a          sacreBLEU's default (cased, 13a tokens): the number papers report
  BLEU lower-cased        the same lower-cased (case:lc; JoeyNMT's benchmarks)
  BLEU intl               cased, international tokenisation (every Unicode punctuation mark and
                          symbol is a token, as mteval-v14)
  BLEU tutorial protocol  the tutorials' protocol: lower-cased tokens, corpus BLEU-4 without
                          smoothing. The tutorials tokenise with spaCy, which seqgrad does not
                          have: sacreBLEU's 13a tokeniser makes the tokens here (punctuation split
                          off, "don't" kept whole), so the number is close to theirs, not equal
  chrF2                   character 1..6-grams, recall weighted beta = 2
  chrF++                  chrF2 plus word 1..2-grams

options (decoding defaults: the run's config, section "decode"):
  --test FILE.tsv   source<TAB>target pairs (columns as data.source_column says); default: the
                    held-out test split of the date task (generated as in training), or
                    data.test of a TSV task. Several files (--test A.tsv B.tsv, or --test
                    repeated): each is scored in turn, its hypotheses written to
                    RUN_DIR/hyps.CHECKPOINT.beamK.NAME.txt, then one table names each file with
                    its sentences, BLEU (sacreBLEU's default) and chrF2
  --beam K          beam width; 1 = greedy decoding (decode.beam_size)
  --alpha A         length-penalty exponent (decode.alpha)
  --tune-alpha      first search alpha in 0, 0.1, ..., 2 for the highest BLEU on the validation
                    split (the first --limit pairs) at the beam (needs K >= 2), write it into
                    RUN_DIR/config.json as decode.alpha, saying so, and evaluate with it
  --out FILE        where the hypotheses go (default RUN_DIR/hyps.CHECKPOINT.beamK.txt)
  --checkpoint W    best (default; falls back to last when there is none), last, or a
                    checkpoint NAME of the run (averaged: `seqgrad average`)
  --limit N         only the first N test pairs
  --length-penalty P  none, average (len^alpha) or gnmt (((5 + len) / 6)^alpha)
                    (decode.length_penalty; see models/decoding/decoding.h)
  --coverage B      GNMT's coverage penalty weight beta, 0 = off (beam search: it re-ranks the
                    finished hypotheses; greedy output does not change)
  --no-repeat-ngram N  forbid a token that would repeat an n-gram of the output, 0 = off
  --summary-csv FILE   append one CSV row (header first when FILE is new) with the settings and
                    numbers above, for sweeps and `seqgrad plot`
  --attention-stats keep the best hypothesis' attention and print the share of source tokens
                    (<eos> excluded; subwords with BPE) never attended above 0.3 at any output
                    step ("dropped words"; also in the --summary-csv row, empty without it)
  --metrics LIST    the score lines, labelled: comma-separated bleu, bleu-lc, bleu-intl,
                    bleu-tutorial, chrf, chrf++, or all (default: sacreBLEU's BLEU and chrF2
                    lines as the sacrebleu command prints them)
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

// The definitions --metrics names (none for ""); throws Error on an unknown name.
std::vector<ScoreDefinition> metric_definitions(const std::string& metrics) {
    try {
        return metrics.empty() ? std::vector<ScoreDefinition>{} : parse_score_definitions(metrics);
    } catch (const std::invalid_argument& e) {
        throw Error(fmt::format("--metrics: {}", e.what()));
    }
}

}  // namespace

std::string eval_scores_text(const Task& task, const std::string& pipeline_description,
                             const std::vector<std::string>& hypotheses,
                             const std::vector<std::string>& raw_references,
                             const std::string& metrics) {
    const std::vector<ScoreDefinition> definitions = metric_definitions(metrics);
    std::string out;
    auto score = [&](const std::vector<std::string>& refs) {
        for (const ScoreDefinition& d : definitions)
            out += defined_score(d, hypotheses, {refs}).line + "\n";
        if (!definitions.empty()) return;
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

double dropped_source_share(const std::vector<Translation>& translations, double threshold) {
    size_t tokens = 0, dropped = 0;
    for (const Translation& t : translations) {
        if (t.nbest.empty() || t.nbest[0].attention.empty()) continue;
        const auto& rows = t.nbest[0].attention;  // [output step][source position]
        const size_t S = std::min(rows[0].size(), t.source_tokens.size());
        for (size_t s = 0; s + 1 < S; ++s) {  // the last position is the source's <eos>
            float most = 0;
            for (const auto& row : rows) most = std::max(most, row[s]);
            ++tokens;
            dropped += most <= float(threshold);  // the weights are stored as float
        }
    }
    return tokens ? double(dropped) / double(tokens) : -1;
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

namespace {

// The decoding options: the run's config (section "decode") with the command line's changes.
DecodeOptions eval_decode_options(const Args& args, const LoadedRun& run) {
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
    options.keep_attention = args.has("attention-stats");  // else not paid for
    return options;
}

// What is evaluated: the model, the test set and where it came from, the decoding.
void print_setup(const LoadedRun& run, const std::string& origin, size_t pairs,
                 const DecodeOptions& options) {
    fmt::print("model: {}\n", run.checkpoint_path);
    fmt::print("test set: {}, {} pairs\n", origin, pairs);
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
}

// The date task's exact-match accuracy and a few of the mistakes: what a learner looks at next.
void print_date_accuracy(const std::vector<std::string>& sources,
                         const std::vector<std::string>& hypotheses,
                         const std::vector<std::string>& references) {
    const double accuracy = exact_match_accuracy(hypotheses, references);
    const size_t correct = size_t(std::lround(accuracy * double(sources.size())));
    fmt::print("exact-match accuracy: {:.2f}% ({} of {})\n", 100 * accuracy, correct,
               sources.size());
    int shown = 0;
    for (size_t i = 0; i < sources.size() && shown < 5; ++i) {
        if (hypotheses[i] == references[i]) continue;
        if (shown++ == 0) fmt::print("some errors (source -> output, expected):\n");
        fmt::print("  {:<36} -> {:<12} expected {}\n", sources[i], hypotheses[i], references[i]);
    }
}

// Every number of one evaluation, for --summary-csv.
struct EvalSummary {
    std::string checkpoint, origin;
    size_t sentences = 0;
    DecodeOptions options;
    double seconds = 0, bleu = 0, chrf = 0;
    double dropped = -1;  // --attention-stats: the dropped-words share (-1: not measured)
    RepeatCounts output, references;
};

// Appends the row of `s` to the CSV file `path` (header first when the file is new).
void append_summary_row(const std::string& path, const EvalSummary& s) {
    const double n = double(s.sentences);
    append_csv_row(
        path,
        {"checkpoint", "test", "sentences", "beam", "alpha", "length_penalty", "coverage",
         "no_repeat_ngram", "seconds", "sentences_per_s", "bleu", "mean_length",
         "reference_mean_length", "immediate_repeats_per_1000", "repeated_trigrams_per_1000",
         "chrf", "reference_immediate_repeats_per_1000", "reference_repeated_trigrams_per_1000",
         "dropped_source_share"},
        {s.checkpoint, s.origin, std::to_string(s.sentences), std::to_string(s.options.beam_size),
         fmt::format("{}", s.options.alpha), length_penalty_name(s.options.length_penalty),
         fmt::format("{}", s.options.coverage_penalty),
         std::to_string(s.options.no_repeat_ngram_size), fmt::format("{:.4f}", s.seconds),
         fmt::format("{:.2f}", n / std::max(s.seconds, 1e-9)), fmt::format("{:.2f}", s.bleu),
         fmt::format("{:.3f}", double(s.output.words) / n),
         fmt::format("{:.3f}", double(s.references.words) / n),
         fmt::format("{:.3f}", s.output.immediate_per_1000()),
         fmt::format("{:.3f}", s.output.trigrams_per_1000()), fmt::format("{:.2f}", s.chrf),
         fmt::format("{:.3f}", s.references.immediate_per_1000()),
         fmt::format("{:.3f}", s.references.trigrams_per_1000()),
         s.dropped < 0 ? std::string() : fmt::format("{:.4f}", s.dropped)});
}

}  // namespace

namespace {

// One test set's headline numbers, for the table of several.
struct TestSetScore {
    std::string name;
    size_t sentences = 0, refused = 0;
    double bleu = 0, chrf = 0;  // sacreBLEU's default BLEU and chrF2, on the raw references
};

// A test set's texts: the sources, the references as written, and what the model's pipeline
// makes of them (the normalised references).
struct TestTexts {
    std::vector<std::string> sources, raw_references, references;
};

TestTexts test_texts(const LoadedRun& run, const std::vector<SentencePair>& test) {
    TestTexts texts;
    for (const SentencePair& p : test) {
        texts.sources.push_back(p.source);
        texts.raw_references.push_back(p.target);
        texts.references.push_back(run.task.pipeline.join(run.task.pipeline.tokens(p.target)));
    }
    return texts;
}

// The repeats in the output and the references, and with --attention-stats the share of source
// tokens dropped, printed and kept in `summary`.
void print_output_statistics(const Args& args, const LoadedRun& run,
                             const std::vector<Translation>& translations,
                             const std::vector<std::string>& hypotheses, const TestTexts& texts,
                             EvalSummary& summary) {
    std::vector<std::vector<std::string>> output_words, reference_words;
    for (size_t i = 0; i < hypotheses.size(); ++i) {
        output_words.push_back(normalised_words(run.task, hypotheses[i]));
        reference_words.push_back(normalised_words(run.task, texts.raw_references[i]));
    }
    summary.output = count_repeats(output_words);
    summary.references = count_repeats(reference_words);
    fmt::print("{}", output_stats_text(summary.output, summary.references, hypotheses.size()));
    if (!args.has("attention-stats")) return;
    summary.dropped = dropped_source_share(translations);
    if (summary.dropped < 0)
        fmt::print(
            "dropped source tokens: no attention to measure (model.attention \"{}\")\n",
            run.config.model.kind == "rnn" ? run.config.model.attention : run.config.model.kind);
    else
        fmt::print("dropped source tokens (never attended above 0.3, <eos> excluded): {:.2f}%\n",
                   100 * summary.dropped);
}

// The hypotheses, one a line, to --out or RUN_DIR/hyps.<checkpoint>.beam<K><suffix>.txt.
void write_hypotheses(const Args& args, const LoadedRun& run, const std::string& run_dir,
                      int beam_size, const std::string& out_suffix,
                      const std::vector<std::string>& hypotheses) {
    // "best" may have fallen back to "last": name the file after the checkpoint really used.
    const std::string used = run.checkpoint_path.find("/last.safetensors") != std::string::npos
                                 ? "last"
                                 : args.get("checkpoint", "best");
    const std::string out = args.get(
        "out", fmt::format("{}/hyps.{}.beam{}{}.txt", run_dir, used, beam_size, out_suffix));
    std::string text;
    for (const std::string& h : hypotheses) text += h + "\n";
    write_file_atomically(out, text);
    fmt::print("hypotheses written to {}\n", out);
}

// Decodes and scores one test set (`test_args`: its --test, or none for the run's own) and
// prints everything `seqgrad eval` prints for it; `out`: where its hypotheses go.
TestSetScore evaluate_test_set(const Args& args, const Args& test_args, const LoadedRun& run,
                               const std::string& run_dir, const std::string& out_suffix) {
    const int limit = args.get_int("limit", 0);
    EvalSummary summary;
    summary.options = eval_decode_options(args, run);
    std::vector<SentencePair> test = load_test_set(test_args, run.config, summary.origin);
    if (limit > 0 && size_t(limit) < test.size()) test.resize(size_t(limit));
    if (test.empty()) throw Error("the test set is empty");
    summary.checkpoint = run.checkpoint_path;
    summary.sentences = test.size();
    const TestTexts texts = test_texts(run, test);
    print_setup(run, summary.origin, test.size(), summary.options);

    auto start = std::chrono::steady_clock::now();
    std::vector<std::string> hypotheses;
    const std::vector<Translation> translations = translate(
        *run.model, run.task, texts.sources, summary.options, input_extras_from_args(args, run));
    const size_t refused = report_long_inputs(translations, "test pair ");
    for (const Translation& t : translations) hypotheses.push_back(t.text);
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("decoded {} sentences in {:.2f}s: {:.1f} sentences/s\n", test.size(),
               summary.seconds, double(test.size()) / std::max(summary.seconds, 1e-9));
    fmt::print("{}", eval_scores_text(run.task, describe_pipeline(run.config.data), hypotheses,
                                      texts.raw_references, args.get("metrics", "")));
    fmt::print("{}", unknown_share_text(run.task, test));
    if (run.task.is_dates()) print_date_accuracy(texts.sources, hypotheses, texts.references);
    print_output_statistics(args, run, translations, hypotheses, texts, summary);

    if (args.has("summary-csv")) {
        // BLEU against the references as the output is written: normalised like it for a
        // char / word run (the second score above), raw for a reversible (BPE) one.
        const std::vector<std::string>& refs =
            run.task.pipeline.reversible() ? texts.raw_references : texts.references;
        summary.bleu = corpus_bleu(hypotheses, {refs}, BleuOptions{}).score;
        summary.chrf = corpus_chrf(hypotheses, {refs}, ChrfOptions{}).score;
        append_summary_row(args.get("summary-csv"), summary);
    }
    write_hypotheses(args, run, run_dir, summary.options.beam_size, out_suffix, hypotheses);
    if (refused > 0)
        fmt::print(stderr,
                   "{} test sentence{} refused as longer than the model reads: scored as empty "
                   "output\n",
                   refused, refused == 1 ? "" : "s");
    TestSetScore score;
    score.name = test_args.has("test") ? test_args.get("test") : summary.origin;
    score.sentences = test.size();
    score.refused = refused;
    score.bleu = corpus_bleu(hypotheses, {texts.raw_references}, BleuOptions{}).score;
    score.chrf = corpus_chrf(hypotheses, {texts.raw_references}, ChrfOptions{}).score;
    return score;
}

// The validation pairs of a run: the date task's split (generated as in training) or data.valid.
std::vector<SentencePair> validation_pairs(const Config& c) {
    if (c.data.task == "dates")
        return make_date_splits(size_t(c.data.dates_train), size_t(c.data.dates_valid),
                                size_t(c.data.dates_test), c.data.dates_seed)
            .valid;
    std::vector<std::string> argv = {"--test", c.resolve(c.data.valid)};
    std::string origin;
    return load_test_set(Args(argv, {"test"}, {}), c, origin);
}

// --tune-alpha: the length penalty's α of the highest BLEU on the validation split (the first
// --limit pairs), over 0, 0.1, ..., 2 at the run's beam; the smallest α wins ties. Written into
// RUN_DIR/config.json (decode.alpha) and into `run`, saying so.
double tune_alpha(const Args& args, LoadedRun& run, const std::string& run_dir) {
    DecodeOptions options = eval_decode_options(args, run);
    if (options.beam_size < 2)
        throw Error(
            "--tune-alpha: greedy decoding (beam 1) has no length penalty to tune; give "
            "--beam K with K >= 2");
    if (options.length_penalty == DecodeOptions::none)
        throw Error("--tune-alpha: the length penalty is \"none\"; give --length-penalty");
    std::vector<SentencePair> valid = validation_pairs(run.config);
    const int limit = args.get_int("limit", 0);
    if (limit > 0 && size_t(limit) < valid.size()) valid.resize(size_t(limit));
    if (valid.empty()) throw Error("--tune-alpha: the validation split is empty");
    std::vector<std::string> sources, references;
    for (const SentencePair& p : valid) {
        sources.push_back(p.source);
        // as --summary-csv: raw references for real text out, normalised ones otherwise
        references.push_back(run.task.pipeline.reversible()
                                 ? p.target
                                 : run.task.pipeline.join(run.task.pipeline.tokens(p.target)));
    }
    const TranslateExtras extras = input_extras_from_args(args, run);
    double best_alpha = 0, best_bleu = -1;
    fmt::print("tuning alpha on {} validation pairs, beam {}, {} length penalty:\n", sources.size(),
               options.beam_size, length_penalty_name(options.length_penalty));
    for (int tenth = 0; tenth <= 20; ++tenth) {
        options.alpha = tenth / 10.0;
        std::vector<std::string> hypotheses;
        for (const Translation& t : translate(*run.model, run.task, sources, options, extras))
            hypotheses.push_back(t.text);
        const double bleu = corpus_bleu(hypotheses, {references}, BleuOptions{}).score;
        fmt::print("  alpha {:.1f}: BLEU {:.2f}\n", options.alpha, bleu);
        if (bleu > best_bleu) best_alpha = options.alpha, best_bleu = bleu;
    }
    const std::string path = run_dir + "/config.json";
    nlohmann::json config = nlohmann::json::parse(read_file(path));
    const double before = run.config.decode.alpha;
    config["decode"]["alpha"] = best_alpha;
    write_file_atomically(path, config.dump(2) + "\n");
    run.config.decode.alpha = best_alpha;
    fmt::print("alpha {:.1f} (validation BLEU {:.2f}) written to {} as decode.alpha (was {})\n",
               best_alpha, best_bleu, path, before);
    return best_alpha;
}

}  // namespace

int cmd_eval(const Argv& argv) {
    Args args(argv,
              {"test", "beam", "alpha", "out", "checkpoint", "limit", "length-penalty", "coverage",
               "no-repeat-ngram", "summary-csv", "metrics", "long-input"},
              {"help", "attention-stats", "tune-alpha"});
    // --test A B C: the files after the run directory are further test sets
    std::vector<std::string> tests = args.all("test");
    if (args.positional().size() > 1) {
        if (tests.empty()) {
            fmt::print(stderr, "{}{}", kHelp, kLongInputHelp);
            return 2;
        }
        tests.insert(tests.end(), args.positional().begin() + 1, args.positional().end());
    }
    if (args.has("help") || args.positional().empty()) {
        fmt::print(args.has("help") ? stdout : stderr, "{}{}", kHelp, kLongInputHelp);
        return args.has("help") ? 0 : 2;
    }
    const std::string run_dir = args.positional()[0];
    const int limit = args.get_int("limit", 0);
    if (limit < 0) throw Error(fmt::format("--limit: expected N >= 0, got {}", limit));
    metric_definitions(args.get("metrics", ""));  // a bad name is an error before decoding
    if (tests.size() > 1 && args.has("out"))
        throw Error(fmt::format(
            "--out: one file for {} test sets; leave it out (each set's hypotheses go to "
            "RUN_DIR/hyps.CHECKPOINT.beamK.NAME.txt)",
            tests.size()));
    for (size_t i = 0; i < tests.size(); ++i)
        for (size_t k = 0; k < i; ++k)
            if (tests[i] == tests[k]) throw Error(fmt::format("--test {}: given twice", tests[i]));

    if (args.has("tune-alpha") && args.has("alpha"))
        throw Error("--tune-alpha and --alpha: give one (--tune-alpha chooses alpha)");
    LoadedRun run = load_run_from_args(args, run_dir);
    if (args.has("tune-alpha")) tune_alpha(args, run, run_dir);
    if (tests.size() <= 1) {
        const TestSetScore score = evaluate_test_set(args, args, run, run_dir, "");
        return score.refused > 0 ? 1 : 0;
    }
    std::vector<TestSetScore> scores;
    for (const std::string& file : tests) {
        fmt::print("\n== {}\n", file);
        const Args test_args({"--test", file}, {"test"}, {});
        const std::string stem = std::filesystem::path(file).stem().string();
        scores.push_back(evaluate_test_set(args, test_args, run, run_dir, "." + stem));
    }
    // The table: one row per test set, sacreBLEU's default BLEU and chrF2 on the raw references.
    size_t width = 8;
    for (const TestSetScore& s : scores) width = std::max(width, s.name.size());
    fmt::print("\n{:<{}}  {:>9}  {:>6}  {:>6}\n", "test set", width, "sentences", "BLEU", "chrF2");
    size_t refused = 0;
    for (const TestSetScore& s : scores) {
        fmt::print("{:<{}}  {:>9}  {:>6.2f}  {:>6.2f}\n", s.name, width, s.sentences, s.bleu,
                   s.chrf);
        refused += s.refused;
    }
    fmt::print("(BLEU: {}; chrF2 of the same output)\n", bleu_signature(BleuOptions{}, 1));
    return refused > 0 ? 1 : 0;
}

}  // namespace seqgrad
