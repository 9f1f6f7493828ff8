// `seqgrad bleu REF [REF2 ...] < HYPS`: score plain-text hypotheses like the sacrebleu command.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"
#include "seqgrad/data/sacrebleu_text.h"
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

options:
  --tokenize 13a|none         BLEU tokenizer (default 13a, sacreBLEU's default)
  --smooth-method M           exp (default), floor, add-k or none
  --smooth-value V            the floor value (default 0.1) or k of add-k (default 1)
  --lowercase                 case-insensitive BLEU (as sacrebleu's -lc; chrF keeps case)
  --metrics bleu,chrf         which metrics, in this order (default bleu)
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

std::vector<std::string> parse_metrics(const std::string& list) {
    std::vector<std::string> metrics;
    std::stringstream in(list);
    std::string name;
    while (std::getline(in, name, ',')) {
        if (name != "bleu" && name != "chrf")
            throw Error(fmt::format("--metrics: unknown metric \"{}\" (known: bleu, chrf)", name));
        metrics.push_back(name);
    }
    if (metrics.empty()) throw Error("--metrics: expected a list such as bleu,chrf");
    return metrics;
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
    const std::vector<std::string> metrics = parse_metrics(args.get("metrics", "bleu"));
    const bool score_only = args.has("score-only");
    const bool sentence_level = args.has("sentence-level");

    BleuOptions bleu_options;
    bleu_options.tokenize = args.get("tokenize", "13a");
    bleu_options.smooth_method = args.get("smooth-method", "exp");
    if (args.has("smooth-value")) bleu_options.smooth_value = args.get_double("smooth-value", 0);
    bleu_options.lowercase = args.has("lowercase");
    bleu_options.effective_order = sentence_level;  // as sacreBLEU's sentence_bleu()
    check_bleu_options(bleu_options);
    const ChrfOptions chrf_options;

    // Read everything first: a mismatch is reported before any score.
    const std::vector<std::string> hypotheses = read_segments(hypotheses_in, "stdin");
    std::vector<std::vector<std::string>> references;
    for (const std::string& path : args.positional()) {
        std::ifstream file(path, std::ios::binary);
        if (!file) throw Error(fmt::format("{}: cannot open the reference file", path));
        references.push_back(read_segments(file, path));
        check_line_counts("stdin", hypotheses.size(), path, references.back().size());
    }
    const int num_refs = int(references.size());

    std::string out;
    if (sentence_level) {
        for (size_t i = 0; i < hypotheses.size(); ++i) {
            std::vector<std::string> refs;
            for (const auto& stream : references) refs.push_back(stream[i]);
            std::vector<std::string> fields;
            for (const std::string& metric : metrics) {
                if (metric == "bleu") {
                    BleuScore s = sentence_bleu(hypotheses[i], refs, bleu_options);
                    fields.push_back(score_only ? format_score_only(s.score, width)
                                                : s.format(width));
                } else {
                    ChrfScore s = sentence_chrf(hypotheses[i], refs, chrf_options);
                    fields.push_back(score_only ? format_score_only(s.score, width)
                                                : s.format(width));
                }
            }
            out += fmt::format("{}\n", fmt::join(fields, "\t"));
        }
        return out;
    }
    for (const std::string& metric : metrics) {
        if (metric == "bleu") {
            BleuScore s = corpus_bleu(hypotheses, references, bleu_options);
            if (score_only) {
                out += format_score_only(s.score, width) + "\n";
            } else {
                out += s.format(width) + "\n";
                out += "BLEU signature: " + bleu_signature(bleu_options, num_refs) + "\n";
            }
        } else {
            ChrfScore s = corpus_chrf(hypotheses, references, chrf_options);
            if (score_only) {
                out += format_score_only(s.score, width) + "\n";
            } else {
                out += s.format(width) + "\n";
                out += s.name + " signature: " + chrf_signature(chrf_options, num_refs) + "\n";
            }
        }
    }
    return out;
}

int cmd_bleu(const Argv& argv) {
    fmt::print("{}", bleu_command_output(argv, std::cin));
    return 0;
}

}  // namespace seqgrad
