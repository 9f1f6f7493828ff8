// `seqgrad translate RUN_DIR`: sentences in (stdin or --input), translations out (stdout).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/args.h"
#include "apps/commands.h"
#include "apps/run_args.h"
#include "autograd/tensor.h"
#include "data/text.h"
#include "data/utf8.h"
#include "models/run.h"
#include "models/translator.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad translate RUN_DIR [--input FILE] [--beam K] [--alpha A] [--nbest N]
                         [--max-length L] [--checkpoint best|last] [--tokens]

Translates sentences, one per line, read from stdin (or FILE) with the model trained in
RUN_DIR, and writes one translation per line to stdout, in input order. Input lines go through
the training text pipeline. With a BPE run (data.tokenizer "bpe") the output is real text:
cased, detokenised, punctuation attached; an input made only of characters seen in training
never holds an <unk>. With a char / word run the output is normalised text (e.g. lower-case)
and a word or character the model never saw becomes <unk>. An empty line gives an empty line;
a line that is not valid UTF-8 is an error naming its line number.
Lines are decoded in batches; from a terminal, each line is translated as it is typed.

options (defaults: the run's config, section "decode"):
  --input FILE      read sentences from FILE instead of stdin
  --beam K          beam width; 1 = greedy decoding        (decode.beam_size)
  --alpha A         length-penalty exponent                (decode.alpha, with
                    the penalty of decode.length_penalty)
  --nbest N         print the N best hypotheses per input; needs N <= K, and K defaults to N
  --max-length L    at most L output tokens, EOS included  (decode.max_length)
  --checkpoint W    best (default; falls back to last when there is none) or last

With --nbest N > 1, each input gives a block of up to N lines
    RANK<TAB>SCORE<TAB>LOGPROB<TAB>translation
best first (RANK counts from 1; SCORE is the length-normalised log-probability the beam ranks
by; LOGPROB the total log-probability), and every block ends with a blank line, so blocks are
separated by blank lines and an empty input gives just the blank line.
)";

// Writes the translations of `lines`, as the help text above describes.
void print_translations(const LoadedRun& run, const DecodeOptions& options,
                        const std::vector<std::string>& lines, int nbest, bool tokens,
                        std::ostream& out) {
    std::vector<Translation> translations = translate(*run.model, run.task, lines, options);
    // The text of a hypothesis, or with --tokens the tokens it is made of.
    auto text_of = [&](const Hypothesis& h) {
        if (!tokens) return run.task.decode_target(h.tokens);
        return detokenize(run.task.target_vocab.decode(h.tokens, /*strip_special=*/true),
                          TokenizerKind::word);
    };
    for (const Translation& t : translations) {
        if (nbest <= 1) {
            out << (tokens && !t.nbest.empty() ? text_of(t.nbest[0]) : t.text) << '\n';
            continue;
        }
        for (size_t k = 0; k < t.nbest.size(); ++k) {
            const Hypothesis& h = t.nbest[k];
            out << fmt::format("{}\t{:.4f}\t{:.4f}\t{}\n", k + 1, h.score, h.log_prob, text_of(h));
        }
        out << '\n';
    }
}

}  // namespace

std::vector<std::string> read_utf8_lines(std::istream& in, const std::string& name) {
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
        if (size_t at = find_invalid_utf8(line); at != std::string::npos)
            throw Error(fmt::format("{}:{}: not valid UTF-8 (bad byte 0x{:02x} at byte {})", name,
                                    lines.size() + 1, static_cast<unsigned char>(line[at]),
                                    at + 1));
        lines.push_back(line);
    }
    return lines;
}

int cmd_translate(const Argv& argv) {
    Args args(argv, {"input", "beam", "alpha", "nbest", "max-length", "checkpoint"},
              {"help", "tokens"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().size() != 1) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    LoadedRun run = load_run_from_args(args, args.positional()[0]);
    const int nbest = args.get_int("nbest", 1);
    const bool tokens = args.has("tokens");
    if (nbest < 1) throw Error(fmt::format("--nbest: expected N >= 1, got {}", nbest));
    DecodeOptions options = decode_options_from_args(
        args, run, std::max(decode_options_from(run.config.decode).beam_size, nbest));
    if (nbest > options.beam_size)
        throw Error(fmt::format("--nbest {} needs a beam at least as wide (--beam {})", nbest,
                                options.beam_size));
    options.nbest = nbest;
    options.alpha = args.get_double("alpha", options.alpha);
    options.max_length = args.get_int("max-length", options.max_length);
    if (options.max_length < 1)
        throw Error(fmt::format("--max-length: expected L >= 1, got {}", options.max_length));
    options.keep_attention = false;  // not printed; saves memory on long inputs

    const bool from_file = args.has("input");
    std::ifstream file;
    if (from_file) {
        file.open(args.get("input"), std::ios::binary);
        if (!file) throw Error(fmt::format("{}: cannot open the input file", args.get("input")));
    }
    std::istream& in = from_file ? static_cast<std::istream&>(file) : std::cin;
    const std::string name = from_file ? args.get("input") : "stdin";

    if (!from_file && isatty(STDIN_FILENO)) {
        // Interactive: translate each line as soon as it is typed.
        std::string line;
        for (size_t number = 1; std::getline(std::cin, line); ++number) {
            std::istringstream one(line);
            std::vector<std::string> lines = read_utf8_lines(one, name);
            if (lines.empty()) lines.push_back("");
            try {
                print_translations(run, options, lines, nbest, tokens, std::cout);
            } catch (const std::exception& e) {
                fmt::print(stderr, "line {}: {}\n", number, e.what());
            }
            std::cout.flush();
        }
        return 0;
    }

    std::vector<std::string> lines = read_utf8_lines(in, name);
    auto start = std::chrono::steady_clock::now();
    print_translations(run, options, lines, nbest, tokens, std::cout);
    std::cout.flush();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "translated {} lines in {:.2f}s ({:.1f} sentences/s, beam {})\n",
               lines.size(), seconds, double(lines.size()) / std::max(seconds, 1e-9),
               options.beam_size);
    return 0;
}

}  // namespace seqgrad
