#include "apps/cli/run_args.h"

#include <fmt/format.h>

#include <filesystem>

#include "seqgrad/data/dates.h"

namespace seqgrad {

LoadedRun load_run_from_args(const Args& args, const std::string& run_dir) {
    const std::string which = args.get("checkpoint", "best");
    if (which != "best" && which != "last")
        throw Error(fmt::format("--checkpoint: expected best or last, got \"{}\"", which));
    return load_run(run_dir, which);
}

DecodeOptions decode_options_from_args(const Args& args, const LoadedRun& run, int default_beam) {
    DecodeOptions options = decode_options_from(run.config.decode);
    options.beam_size = args.get_int("beam", default_beam > 0 ? default_beam : options.beam_size);
    if (options.beam_size < 1)
        throw Error(fmt::format("--beam: expected K >= 1, got {}", options.beam_size));
    return options;
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
        throw Error(fmt::format(
            "{}: no such file (data.test of the run's config.json, read relative to the run "
            "directory); give the test set with --test FILE.tsv",
            path));
    return read(path);
}

}  // namespace seqgrad
