// The options eval, translate and attention share (apps/cli/run_args.h).
#include "apps/cli/run_args.h"

#include <doctest/doctest.h>

using namespace seqgrad;

TEST_CASE("run options: --checkpoint must be a plain name, before any file is read") {
    const Args args({"no/such/run", "--checkpoint", "../best"}, {"checkpoint"}, {});
    CHECK_THROWS_WITH_AS(load_run_from_args(args, "no/such/run"),
                         doctest::Contains("--checkpoint: expected best, last or the name of a "
                                           "checkpoint in the run directory"),
                         Error);
    // a valid choice gets as far as the missing run directory
    const Args last({"no/such/run", "--checkpoint", "last"}, {"checkpoint"}, {});
    CHECK_THROWS_WITH_AS(load_run_from_args(last, "no/such/run"), doctest::Contains("no/such/run"),
                         Error);
}

TEST_CASE("run options: --beam overrides the command's default, which overrides the config") {
    LoadedRun run;
    run.config.decode.beam_size = 4;
    const std::set<std::string> options{"beam"};
    CHECK(decode_options_from_args(Args({"r"}, options, {}), run).beam_size == 4);
    CHECK(decode_options_from_args(Args({"r"}, options, {}), run, 7).beam_size == 7);
    CHECK(decode_options_from_args(Args({"r", "--beam", "2"}, options, {}), run, 7).beam_size == 2);
    CHECK_THROWS_WITH_AS(decode_options_from_args(Args({"r", "--beam", "0"}, options, {}), run),
                         doctest::Contains("--beam: expected K >= 1, got 0"), Error);
}
