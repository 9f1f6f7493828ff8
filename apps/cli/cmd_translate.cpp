// `seqgrad translate RUN_DIR`: sentences in (stdin or --input), translations out (stdout).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/cli/run_args.h"
#include "apps/explore/beam_trace.h"
#include "apps/plot/plot.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/data/text.h"
#include "seqgrad/data/utf8.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad translate RUN_DIR [--input FILE] [--beam K] [--alpha A] [--nbest N]
                         [--max-length L] [--checkpoint best|last|NAME] [--tokens]
                         [--prefix "target words"] [--trace FILE.jsonl]
                         [--long-input truncate|refuse]

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
  --checkpoint W    best (default; falls back to last when there is none), last, or a
                    checkpoint NAME of the run (averaged: `seqgrad average`)
  --tokens          print the tokens (BPE subwords) of each translation instead of its text
  --prefix TEXT     force every translation to start with TEXT (target language, through
                    the target text pipeline; words the model does not know become <unk>)
                    and decode the rest: "what would the model say after these words?"
  --trace FILE      write the beam-search tree of every input as one JSON line to FILE
                    (schema: docs/beam-search.md), written atomically at the end

With --nbest N > 1, each input gives a block of up to N lines
    RANK<TAB>SCORE<TAB>LOGPROB<TAB>translation
best first (RANK counts from 1; SCORE is the length-normalised log-probability the beam ranks
by; LOGPROB the total log-probability), and every block ends with a blank line, so blocks are
separated by blank lines and an empty input gives just the blank line.
)";

// --prefix, --trace and --long-input; `traced` collects the JSON lines of --trace.
struct TranslateRequest {
    std::vector<int32_t> forced_prefix;  // target ids, empty = none
    TranslateExtras input;               // --long-input and the trained length
    std::string name;                    // the input's name for the notes: a file or "stdin"
    size_t refused = 0;                  // lines refused as longer than the model reads
    bool trace = false;
    std::vector<std::string> traced;
    size_t lines_done = 0;  // input lines before this batch (for the line numbers)
};

// One --trace line: the input, its n-best and the beam-search tree.
std::string trace_line(const LoadedRun& run, size_t line, const std::string& source,
                       const Translation& t, const BeamTrace& trace) {
    nlohmann::json j;
    j["line"] = line;
    j["source"] = source;
    j["source_tokens"] = t.source_tokens;
    if (t.source_tokens.empty()) {
        j["empty"] = true;
        return j.dump() + "\n";
    }
    std::vector<std::string> text;
    for (size_t id = 0; id < run.task.target_vocab.size(); ++id)
        text.push_back(run.task.target_vocab.token(int32_t(id)));
    nlohmann::json nbest = nlohmann::json::array();
    for (const Hypothesis& h : t.nbest)
        nbest.push_back({{"tokens", h.tokens},
                         {"text", run.task.decode_target(h.tokens)},
                         {"score", h.score},
                         {"log_prob", h.log_prob},
                         {"finished", h.finished}});
    j["nbest"] = nbest;
    j["trace"] = beam_trace_json(trace, text);
    return j.dump() + "\n";
}

// Writes the translations of `lines`, as the help text above describes.
void print_translations(const LoadedRun& run, const DecodeOptions& options,
                        const std::vector<std::string>& lines, int nbest, bool tokens,
                        std::ostream& out, TranslateRequest& request) {
    TranslateExtras extras = request.input;
    BeamTraceRecorder recorder;
    if (request.trace) extras.observer = &recorder;
    if (!request.forced_prefix.empty())
        extras.forced_prefixes.assign(lines.size(), request.forced_prefix);
    std::vector<Translation> translations = translate(*run.model, run.task, lines, options, extras);
    request.refused += report_long_inputs(translations, request.name, request.lines_done + 1);
    recorder.traces.resize(lines.size());  // an empty or refused line was not searched
    if (request.trace)
        for (size_t i = 0; i < lines.size(); ++i)
            request.traced.push_back(trace_line(run, request.lines_done + i + 1, lines[i],
                                                translations[i], recorder.traces[i]));
    request.lines_done += lines.size();
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

namespace {

// The decoding options: the run's, then the command line's (--beam, --alpha, --nbest, ...).
DecodeOptions translate_options(const Args& args, const LoadedRun& run, int nbest) {
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
    return options;
}

// --trace and --prefix.
TranslateRequest translate_request(const Args& args, const LoadedRun& run) {
    TranslateRequest request;
    request.input = input_extras_from_args(args, run);
    request.trace = args.has("trace");
    if (args.has("prefix")) {
        const std::string prefix = args.get("prefix");
        if (size_t at = find_invalid_utf8(prefix); at != std::string::npos)
            throw Error(fmt::format("--prefix: not valid UTF-8 (byte {})", at + 1));
        request.forced_prefix =
            run.task.target_vocab.encode(run.task.pipeline.tokens(prefix), /*add_eos=*/false);
        if (request.forced_prefix.empty())
            throw Error("--prefix: the prefix is empty after normalisation");
    }
    return request;
}

// --trace FILE: the JSON lines collected, written at once.
void write_trace(const Args& args, const TranslateRequest& request) {
    if (!request.trace) return;
    std::string contents;
    for (const std::string& line : request.traced) contents += line;
    write_file_atomically(args.get("trace"), contents);
    fmt::print(stderr, "beam-search trace of {} lines written to {}\n", request.traced.size(),
               args.get("trace"));
}

// Interactive: translate each line of the terminal as soon as it is typed; an error is reported
// for its line and the next line is read.
void translate_interactively(const LoadedRun& run, const DecodeOptions& options, int nbest,
                             bool tokens, TranslateRequest& request) {
    std::string line;
    for (size_t number = 1; std::getline(std::cin, line); ++number) {
        std::istringstream one(line);
        std::vector<std::string> lines = read_utf8_lines(one, "stdin");
        if (lines.empty()) lines.push_back("");
        try {
            print_translations(run, options, lines, nbest, tokens, std::cout, request);
        } catch (const std::exception& e) {
            fmt::print(stderr, "line {}: {}\n", number, e.what());
        }
        std::cout.flush();
    }
}

}  // namespace

int cmd_translate(const Argv& argv) {
    Args args(argv,
              {"input", "beam", "alpha", "nbest", "max-length", "checkpoint", "prefix", "trace",
               "long-input"},
              {"help", "tokens"});
    if (args.has("help")) {
        fmt::print("{}{}", kHelp, kLongInputHelp);
        return 0;
    }
    if (args.positional().size() != 1) {
        fmt::print(stderr, "{}{}", kHelp, kLongInputHelp);
        return 2;
    }
    LoadedRun run = load_run_from_args(args, args.positional()[0]);
    const int nbest = args.get_int("nbest", 1);
    const DecodeOptions options = translate_options(args, run, nbest);
    const bool tokens = args.has("tokens");
    TranslateRequest request = translate_request(args, run);

    const bool from_file = args.has("input");
    std::ifstream file;
    if (from_file) {
        file.open(args.get("input"), std::ios::binary);
        if (!file) {
            const int error = errno;
            throw Error(fmt::format("{}: cannot open the input file", args.get("input")),
                        file_error_kind(error));
        }
    }
    std::istream& in = from_file ? static_cast<std::istream&>(file) : std::cin;
    const std::string name = from_file ? args.get("input") : "stdin";
    request.name = name + ":";
    // The exit status: 1 when a line was refused (--long-input refuse), after every other line.
    auto status = [&] {
        if (request.refused == 0) return 0;
        fmt::print(stderr, "{} line{} refused as longer than the model reads\n", request.refused,
                   request.refused == 1 ? "" : "s");
        return 1;
    };

    if (!from_file && isatty(STDIN_FILENO)) {
        translate_interactively(run, options, nbest, tokens, request);
        write_trace(args, request);
        return status();
    }

    std::vector<std::string> lines = read_utf8_lines(in, name);
    auto start = std::chrono::steady_clock::now();
    print_translations(run, options, lines, nbest, tokens, std::cout, request);
    std::cout.flush();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "translated {} lines in {:.2f}s ({:.1f} sentences/s, beam {})\n",
               lines.size(), seconds, double(lines.size()) / std::max(seconds, 1e-9),
               options.beam_size);
    write_trace(args, request);
    return status();
}

}  // namespace seqgrad
