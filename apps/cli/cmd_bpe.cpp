// `seqgrad bpe learn|apply|vocab|undo`: subword-nmt's BPE commands, with interchangeable files.
#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <iostream>
#include <map>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/bpe.h"
#include "seqgrad/data/reversible_tokenizer.h"
#include "seqgrad/data/text.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad bpe learn --merges N [--min-frequency F] [--input FILE ...] < corpus > codes
       seqgrad bpe apply CODES [--vocabulary FILE --vocabulary-threshold N]
                         [--glossary WORD ...] [--separator S] < text > segmented
       seqgrad bpe vocab < segmented > vocabulary
       seqgrad bpe undo [--separator S] < segmented > text
       seqgrad bpe tokenize < raw > tokens        seqgrad bpe detokenize < tokens > raw

Byte-pair encoding as subword-nmt's learn_bpe / apply_bpe / get_vocab do it; the files are
interchangeable with subword-nmt's. Words are the pieces between single spaces.

  learn   learns at most N merges from the corpus on stdin (or from every --input FILE, counted
          together: joint codes) and writes a codes file ("#version: 0.2", then one "left right"
          per line). Stops early, and says so on stderr, when no pair occurs F times (default 2).
  apply   segments every line of stdin with CODES, writing "@@ " after every segment but a
          word's last ("lowest" -> "low@@ est"). With --vocabulary (lines "token count", as
          `bpe vocab` writes them), segments seen fewer than --vocabulary-threshold times
          (default 1) are split back into known ones. --glossary words are never split.
  vocab   counts the tokens of stdin: "token count" lines, most frequent first.
  undo    removes the segmentation: every "@@ " and a "@@" at the end of a line.
  tokenize, detokenize
          the reversible pre-tokeniser a BPE run puts text through before `apply` (punctuation
          split off, "￭" where there was no space: "Hunger." -> "Hunger ￭."), and its inverse.
          So `bpe tokenize | bpe apply CODES` gives a run's subword tokens, and
          `bpe undo | bpe detokenize` its text.

A line that is not UTF-8, or a malformed codes or vocabulary file, is an error naming the file
and line.
)";

std::string get_separator(const Args& args) {
    std::string s = args.get("separator", "@@");
    if (s.empty() || s.find(' ') != std::string::npos)
        throw Error(
            fmt::format("--separator: expected a non-empty string without spaces, got \"{}\"", s));
    return s;
}

int learn(const Args& args) {
    const int merges = args.get_int("merges", 0);
    if (!args.has("merges")) throw Error("bpe learn: --merges N is required");
    if (merges <= 0) throw Error(fmt::format("--merges: expected N > 0, got {}", merges));
    const int min_frequency = args.get_int("min-frequency", 2);
    if (min_frequency < 1)
        throw Error(fmt::format("--min-frequency: expected F >= 1, got {}", min_frequency));
    WordCounts counts;
    if (args.has("input")) {
        for (const std::string& path : args.all("input")) {
            std::ifstream in(path, std::ios::binary);
            if (!in) {
                const int error = errno;
                throw Error(fmt::format("{}: cannot open the corpus file", path),
                            file_error_kind(error));
            }
            counts.add_lines(in, path);
        }
    } else {
        counts.add_lines(std::cin, "stdin");
    }
    BpeLearnResult result = learn_bpe(counts, {merges, min_frequency});
    std::cout << BpeCodes(result.merges).to_string();
    std::cout.flush();
    if (result.stopped_early)
        fmt::print(stderr, "learned {} of {} merges: no pair has frequency >= {}. Stopping\n",
                   result.merges.size(), merges, min_frequency);
    return std::cout ? 0 : 1;
}

int apply(const Args& args) {
    if (args.positional().size() != 2) throw Error("bpe apply: expected one CODES file");
    BpeApplyOptions options;
    options.separator = get_separator(args);
    options.glossary = args.all("glossary");
    if (args.has("vocabulary")) {
        const int threshold = args.get_int("vocabulary-threshold", 1);
        options.vocabulary = read_bpe_vocabulary(args.get("vocabulary"), threshold);
    } else if (args.has("vocabulary-threshold")) {
        throw Error("--vocabulary-threshold needs --vocabulary FILE");
    }
    Bpe bpe(BpeCodes::load(args.positional()[1]), options);
    std::string line;
    for (size_t number = 1; std::getline(std::cin, line); ++number) {
        try {
            std::cout << bpe.apply_line(line) << '\n';
        } catch (const std::invalid_argument& e) {
            throw Error(fmt::format("stdin:{}: {}", number, e.what()));
        }
    }
    std::cout.flush();
    return std::cout ? 0 : 1;
}

int vocab() {
    WordCounts counts;
    counts.add_lines(std::cin, "stdin");
    for (const auto& [token, count] : counts.by_frequency())
        std::cout << token << ' ' << count << '\n';
    std::cout.flush();
    return std::cout ? 0 : 1;
}

int tokenize_lines(bool inverse) {
    std::string line;
    for (size_t number = 1; std::getline(std::cin, line); ++number) {
        if (size_t at = find_invalid_utf8(line); at != std::string::npos)
            throw Error(fmt::format("stdin:{}: not valid UTF-8 (bad byte 0x{:02x} at byte {})",
                                    number, static_cast<unsigned char>(line[at]), at + 1));
        if (inverse)
            std::cout << reversible_detokenize(tokenize(line, TokenizerKind::word)) << '\n';
        else
            std::cout << detokenize(reversible_tokenize(line), TokenizerKind::word) << '\n';
    }
    std::cout.flush();
    return std::cout ? 0 : 1;
}

int undo(const Args& args) {
    const std::string separator = get_separator(args);
    std::string line;
    while (std::getline(std::cin, line)) std::cout << undo_bpe(line, separator) << '\n';
    std::cout.flush();
    return std::cout ? 0 : 1;
}

}  // namespace

int cmd_bpe(const Argv& argv) {
    Args args(argv,
              {"merges", "min-frequency", "input", "vocabulary", "vocabulary-threshold", "glossary",
               "separator"},
              {"help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().empty()) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    const std::string& what = args.positional()[0];
    if (what != "apply" && args.positional().size() != 1)
        throw Error(fmt::format("bpe {}: unexpected argument \"{}\"", what, args.positional()[1]));
    if (what == "learn") return learn(args);
    if (what == "apply") return apply(args);
    if (what == "vocab") return vocab();
    if (what == "undo") return undo(args);
    if (what == "tokenize") return tokenize_lines(false);
    if (what == "detokenize") return tokenize_lines(true);
    throw Error(fmt::format(
        "bpe: unknown action \"{}\" (expected learn, apply, vocab, undo, tokenize or detokenize)",
        what));
}

}  // namespace seqgrad
