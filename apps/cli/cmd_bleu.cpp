// `seqgrad bleu REF [REF2 ...] < HYPS`: score plain-text hypotheses like the sacrebleu command.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"
#include "seqgrad/data/sacrebleu_text.h"
#include "seqgrad/data/score_definitions.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {
namespace {

const char* kHelp = R"(usage: seqgrad bleu REF [REF2 ...] [options] < HYPS

Scores the hypotheses read from stdin, one segment per line, against one or more reference
files, each with one line per segment (REF2... are further references of the same segments),
as the sacrebleu command does. Trailing white space is removed from every line; line counts
must agree. By default prints corpus BLEU and its signature:
    BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)
    BLEU signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x-seqgrad
(the four numbers after the score are the 1- to 4-gram precisions, in percent).

BLEU is not one number: the definitions people publish with differ by more than a point on
the same output. --metrics all prints each of them on its own line, labelled, with sacreBLEU's
signature (sacrebleu prints the same number with the same options):
  BLEU cased 13a          bleu           sacreBLEU's default (cased, 13a tokens, exp smoothing):
                                         the number papers report
  BLEU lower-cased        bleu-lc        the same, lower-cased (case:lc; JoeyNMT's benchmarks)
  BLEU intl               bleu-intl      cased, international tokenisation (mteval-v14: every
                                         Unicode punctuation mark and symbol is a token)
  BLEU tutorial protocol  bleu-tutorial  the tutorials' protocol: lower-cased tokens, corpus
                                         BLEU-4 without smoothing. The tutorials tokenise with
                                         spaCy, which seqgrad does not have; here sacreBLEU's 13a
                                         tokeniser makes the tokens (punctuation split off,
                                         "don't" kept whole), so the number is close to theirs,
                                         not equal (sacrebleu -lc --smooth-method none)
  chrF2                   chrf           character 1..6-grams, recall weighted beta = 2
  chrF++                  chrf++         chrF2 plus word 1..2-grams
bleu, chrf and chrf++ given by name take the options below and print sacrebleu's two lines;
the other names and all print the fixed definitions above, one labelled line each.

options:
  --tokenize 13a|intl|char|none  BLEU tokenizer (default 13a, sacreBLEU's default)
  --smooth-method M           exp (default), floor, add-k or none
  --smooth-value V            the floor value (default 0.1) or k of add-k (default 1)
  --lowercase                 case-insensitive BLEU and chrF (as sacrebleu's -lc)
  --metrics LIST              comma-separated, in this order (default bleu): bleu, chrf, chrf++,
                              bleu-lc, bleu-intl, bleu-tutorial, or all
  --sentence-level            one line per segment: sentence BLEU (with effective order, as
                              sacreBLEU's sentence_bleu) and/or sentence chrF, separated by a
                              tab; no signature lines, so the output stays parallel to HYPS
  --score-only                print only the numbers (one per metric and line)
  --width N                   decimals of the scores (default 2)
)";

// The lines of `in` with trailing white space removed (sacreBLEU rstrips every line).
std::vector<std::string> read_segments(std::istream& in, const std::string& name) {
    std::vector<std::string> lines = read_utf8_lines(in, name);
    for (std::string& line : lines) line = std::string(rstrip_whitespace(line));
    return lines;
}

// One metric of --metrics: a definition (data/score_definitions.h), and whether the command
// line's options shape it (bleu, chrf, chrf++ named on their own) or it is printed as defined.
struct Metric {
    ScoreDefinition definition;
    bool from_options = false;
};

std::vector<Metric> parse_metrics(const std::string& list, const BleuOptions& bleu_options,
                                  const ChrfOptions& chrf_options) {
    std::vector<Metric> metrics;
    std::stringstream in(list);
    std::string name;
    while (std::getline(in, name, ',')) {
        std::vector<ScoreDefinition> definitions;
        try {
            definitions = parse_score_definitions(name);
        } catch (const std::invalid_argument& e) {
            throw Error(fmt::format("--metrics: {}", e.what()));
        }
        const bool from_options = name == "bleu" || name == "chrf" || name == "chrf++";
        for (ScoreDefinition& d : definitions) {
            if (from_options) {
                const int word_order = d.chrf.word_order;
                d.bleu = bleu_options;
                d.chrf = chrf_options;
                d.chrf.word_order = word_order;
            }
            metrics.push_back({d, from_options});
        }
    }
    if (metrics.empty()) throw Error("--metrics: expected a list such as bleu,chrf");
    return metrics;
}

// One line per segment: each metric's sentence score, separated by tabs.
std::string sentence_level_output(const std::vector<Metric>& metrics,
                                  const std::vector<std::string>& hypotheses,
                                  const std::vector<std::vector<std::string>>& references,
                                  bool score_only, int width) {
    std::string out;
    for (size_t i = 0; i < hypotheses.size(); ++i) {
        std::vector<std::string> refs;
        for (const auto& stream : references) refs.push_back(stream[i]);
        std::vector<std::string> fields;
        for (const Metric& m : metrics) {
            if (m.definition.is_bleu) {
                BleuOptions options = m.definition.bleu;
                options.effective_order = true;  // as sacreBLEU's sentence_bleu()
                BleuScore s = sentence_bleu(hypotheses[i], refs, options);
                fields.push_back(score_only ? format_score_only(s.score, width) : s.format(width));
            } else {
                ChrfScore s = sentence_chrf(hypotheses[i], refs, m.definition.chrf);
                fields.push_back(score_only ? format_score_only(s.score, width) : s.format(width));
            }
        }
        out += fmt::format("{}\n", fmt::join(fields, "\t"));
    }
    return out;
}

// One metric's corpus score: sacrebleu's two lines (score, signature) for a metric shaped by
// the options, one labelled line for a fixed definition, or only the number.
std::string corpus_output(const Metric& m, const std::vector<std::string>& hypotheses,
                          const std::vector<std::vector<std::string>>& references, bool score_only,
                          int width) {
    const int num_refs = int(references.size());
    if (!m.from_options) {
        const DefinedScore s = defined_score(m.definition, hypotheses, references, width);
        return (score_only ? format_score_only(s.score, width) : s.line) + "\n";
    }
    if (m.definition.is_bleu) {
        const BleuScore s = corpus_bleu(hypotheses, references, m.definition.bleu);
        if (score_only) return format_score_only(s.score, width) + "\n";
        return s.format(width) +
               "\nBLEU signature: " + bleu_signature(m.definition.bleu, num_refs) + "\n";
    }
    const ChrfScore s = corpus_chrf(hypotheses, references, m.definition.chrf);
    if (score_only) return format_score_only(s.score, width) + "\n";
    return s.format(width) + "\n" + s.name +
           " signature: " + chrf_signature(m.definition.chrf, num_refs) + "\n";
}

}  // namespace

void check_line_counts(const std::string& hyp_name, size_t hyp_lines, const std::string& ref_name,
                       size_t ref_lines) {
    if (hyp_lines != ref_lines)
        throw Error(fmt::format(
            "line counts differ: the hypotheses ({}) have {} lines, the reference {} has {}",
            hyp_name, hyp_lines, ref_name, ref_lines));
}

std::string format_score_only(double score, int width) {
    return fmt::format("{:.{}f}", score, width);
}

std::string bleu_command_output(const Argv& argv, std::istream& hypotheses_in) {
    Args args(argv, {"tokenize", "smooth-method", "smooth-value", "width", "metrics"},
              {"lowercase", "sentence-level", "score-only", "help"});
    if (args.has("help")) return kHelp;
    if (args.positional().empty())
        throw Error("give at least one reference file (seqgrad bleu REF [REF2 ...] < HYPS)");
    const int width = args.get_int("width", 2);
    if (width < 0 || width > 12)
        throw Error(fmt::format("--width: expected 0..12 decimals, got {}", width));
    const bool score_only = args.has("score-only");
    const bool sentence_level = args.has("sentence-level");

    BleuOptions bleu_options;
    bleu_options.tokenize = args.get("tokenize", "13a");
    bleu_options.smooth_method = args.get("smooth-method", "exp");
    if (args.has("smooth-value")) bleu_options.smooth_value = args.get_double("smooth-value", 0);
    bleu_options.lowercase = args.has("lowercase");
    check_bleu_options(bleu_options);
    ChrfOptions chrf_options;
    chrf_options.lowercase = args.has("lowercase");
    const std::vector<Metric> metrics =
        parse_metrics(args.get("metrics", "bleu"), bleu_options, chrf_options);

    // Read everything first: a mismatch is reported before any score.
    const std::vector<std::string> hypotheses = read_segments(hypotheses_in, "stdin");
    std::vector<std::vector<std::string>> references;
    for (const std::string& path : args.positional()) {
        std::ifstream file(path, std::ios::binary);
        if (!file) {
            const int error = errno;
            throw Error(fmt::format("{}: cannot open the reference file", path),
                        file_error_kind(error));
        }
        references.push_back(read_segments(file, path));
        check_line_counts("stdin", hypotheses.size(), path, references.back().size());
    }

    if (sentence_level)
        return sentence_level_output(metrics, hypotheses, references, score_only, width);
    std::string out;
    for (const Metric& m : metrics)
        out += corpus_output(m, hypotheses, references, score_only, width);
    return out;
}

int cmd_bleu(const Argv& argv) {
    fmt::print("{}", bleu_command_output(argv, std::cin));
    return 0;
}

}  // namespace seqgrad
