#include "apps/cli/run_args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "seqgrad/data/dates.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

LoadedRun load_run_from_args(const Args& args, const std::string& run_dir) {
    const std::string which = args.get("checkpoint", "best");
    if (which.empty() || which.find('/') != std::string::npos || which == "." || which == "..")
        throw Error(fmt::format(
            "--checkpoint: expected best, last or the name of a checkpoint in the run directory "
            "(averaged: RUN_DIR/averaged.safetensors), got \"{}\"",
            which));
    return load_run(run_dir, which);
}

DecodeOptions decode_options_from_args(const Args& args, const LoadedRun& run, int default_beam) {
    DecodeOptions options = decode_options_from(run.config.decode);
    options.beam_size = args.get_int("beam", default_beam > 0 ? default_beam : options.beam_size);
    if (options.beam_size < 1)
        throw Error(fmt::format("--beam: expected K >= 1, got {}", options.beam_size));
    return options;
}

const char* kLongInputHelp =
    R"(  --long-input P    truncate (default) or refuse a line longer than the model reads (a
                    Transformer with learned positions: model.max_positions tokens, <eos>
                    included): truncate translates its first tokens, refuse leaves it
                    untranslated (an empty line; the exit status is then 1). Either way the
                    line's number and length are printed on stderr and the other lines are
                    translated. A Transformer with sinusoidal positions reads any length, and a
                    line longer than training's data.max_source_len gets a warning.
)";

TranslateExtras input_extras_from_args(const Args& args, const LoadedRun& run) {
    TranslateExtras extras;
    const std::string policy = args.get("long-input", "truncate");
    if (policy != "truncate" && policy != "refuse")
        throw Error(fmt::format("--long-input: expected truncate or refuse, got \"{}\"", policy));
    extras.long_input = policy == "refuse" ? LongInput::refuse : LongInput::truncate;
    extras.trained_source_length = run.config.data.max_source_len;
    return extras;
}

size_t report_long_inputs(const std::vector<Translation>& translations, const std::string& name,
                          size_t first_line) {
    size_t refused = 0;
    for (size_t i = 0; i < translations.size(); ++i) {
        if (translations[i].length_note.empty()) continue;
        fmt::print(stderr, "{}{}: {}\n", name, first_line + i, translations[i].length_note);
        refused += translations[i].refused;
    }
    return refused;
}

namespace {

// The words of `text`, split at spaces and tabs.
std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    for (char c : text + " ") {
        if (c != ' ' && c != '\t') {
            word += c;
        } else if (!word.empty()) {
            words.push_back(word);
            word.clear();
        }
    }
    return words;
}

// The longest prefix of whole code points of `word` whose length (length_of) fits `limit`, by
// bisection over the code points' starts.
template <class LengthOf>
std::string longest_fitting_characters(const std::string& word, int64_t limit,
                                       LengthOf&& length_of) {
    std::vector<size_t> ends;  // byte ends of the first 1, 2, ... code points
    for (size_t b = 1; b <= word.size(); ++b)
        if (b == word.size() || (static_cast<unsigned char>(word[b]) & 0xC0) != 0x80)
            ends.push_back(b);
    size_t lo = 0, hi = ends.size();  // the answer is in [lo, hi] code points
    while (lo < hi) {
        const size_t mid = (lo + hi + 1) / 2;
        if (length_of(word.substr(0, ends[mid - 1])) <= limit)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo == 0 ? std::string() : word.substr(0, ends[lo - 1]);
}

// The longest prefix of whole words of `text` that fits `limit` (at least one word's tokens):
// when the first word alone is too long (a character model), its longest fitting beginning.
template <class LengthOf>
std::string longest_fitting_prefix(const std::string& text, int64_t limit, LengthOf&& length_of) {
    const std::vector<std::string> words = split_words(text);
    std::string prefix;
    for (const std::string& w : words) {
        const std::string longer = prefix.empty() ? w : prefix + " " + w;
        if (length_of(longer) > limit) break;
        prefix = longer;
    }
    if (prefix.empty() && !words.empty())
        prefix = longest_fitting_characters(words[0], limit, length_of);
    return prefix;
}

}  // namespace

std::vector<size_t> fit_sources(const LoadedRun& run, const TranslateExtras& extras,
                                std::vector<std::string>& sources, const std::string& name,
                                size_t& refused) {
    const int64_t limit = readable_length(run.config.model);
    const bool sinusoidal =
        run.config.model.kind == "transformer" && run.config.model.positional == "sinusoidal";
    auto length_of = [&](const std::string& text) {
        return int64_t(run.task.encode_source(text).size());
    };
    std::vector<size_t> kept;
    refused = 0;
    for (size_t i = 0; i < sources.size(); ++i) {
        const int64_t length = length_of(sources[i]);
        if (limit > 0 && length > limit && extras.long_input == LongInput::refuse) {
            fmt::print(stderr,
                       "{} {}: refused: {} tokens with <eos>, longer than the {} the model reads "
                       "(model.max_positions)\n",
                       name, i + 1, length, limit);
            ++refused;
            continue;
        }
        if (limit > 0 && length > limit) {
            const std::string prefix = longest_fitting_prefix(sources[i], limit, length_of);
            fmt::print(stderr,
                       "{} {}: truncated: {} tokens with <eos>, longer than the {} the model "
                       "reads (model.max_positions); its beginning, {} tokens, is used\n",
                       name, i + 1, length, limit, length_of(prefix));
            sources[i] = prefix;
        } else if (sinusoidal && extras.trained_source_length > 0 &&
                   length > extras.trained_source_length) {
            fmt::print(stderr,
                       "{} {}: {} tokens with <eos>, longer than any in training "
                       "(data.max_source_len {}): the sinusoidal positions go past the trained "
                       "length\n",
                       name, i + 1, length, extras.trained_source_length);
        }
        kept.push_back(i);
    }
    return kept;
}

std::string sentence_from_args(const Args& args) {
    const std::vector<std::string> words(args.positional().begin() + 1, args.positional().end());
    const std::string sentence = fmt::format("{}", fmt::join(words, " "));
    if (size_t at = find_invalid_utf8(sentence); at != std::string::npos)
        throw Error(fmt::format("the sentence is not valid UTF-8 (byte {})", at + 1));
    return sentence;
}

void print_translation(const std::string& sentence, const Translation& t, const std::string& model,
                       int beam_size) {
    const Hypothesis& best = t.nbest.at(0);
    fmt::print("input:  {}\n", sentence);
    fmt::print("output: {}{}\n", t.text,
               best.finished ? "" : "   (stopped at the length limit: no <eos>)");
    fmt::print("model:  {}, {}, log-prob {:.4f}\n", model,
               beam_size == 1 ? std::string("greedy") : fmt::format("beam {}", beam_size),
               best.log_prob);
}

std::vector<SentencePair> load_test_set(const Args& args, const Config& c, std::string& origin) {
    CorpusOptions options;
    options.source_column = c.data.source_column;
    options.columns = size_t(c.data.columns);
    options.on_bad_line = on_bad_line_from_string(c.data.bad_lines);
    auto read = [&](const std::string& path) {
        CorpusReadResult r = read_parallel_corpus(path, options);
        origin = std::filesystem::path(path).lexically_normal().string();
        if (r.skipped > 0) {
            // Said apart and on both streams: the score leaves these lines out.
            origin += fmt::format(
                " ({} of its {} lines skipped as bad (data.bad_lines \"{}\"): the scores leave "
                "them out and are not comparable with scores on the whole file)",
                r.skipped, r.skipped + r.pairs.size(), c.data.bad_lines);
            fmt::print(stderr, "{}: skipped {} bad line{}:\n", path, r.skipped,
                       r.skipped == 1 ? "" : "s");
            for (const BadLine& bad : r.bad_lines)
                fmt::print(stderr, "  {}:{}: {}\n", path, bad.line, bad.reason);
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
        throw Error(
            fmt::format(
                "{}: no such file (data.test of the run's config.json, read relative to the run "
                "directory); give the test set with --test FILE.tsv",
                path),
            ErrorKind::not_found);
    return read(path);
}

}  // namespace seqgrad
