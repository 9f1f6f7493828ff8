#include "apps/run_args.h"

#include <fmt/format.h>

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

}  // namespace seqgrad
