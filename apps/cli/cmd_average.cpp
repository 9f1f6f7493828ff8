// `seqgrad average RUN_DIR --last N [--out NAME]`: the mean of the parameters of a run's last N
// kept checkpoints (models/training/checkpoint_average.h), written as RUN_DIR/NAME.safetensors.
#include <fmt/format.h>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "seqgrad/models/training/checkpoint_average.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad average RUN_DIR --last N [--out NAME]

Averages the parameters of the last N checkpoints a run kept (train.average_last N keeps them
as RUN_DIR/checkpoints/step-<step>.safetensors while it trains) and writes the average as
RUN_DIR/NAME.safetensors (default NAME: averaged), atomically. eval, translate, attention,
saliency and explore read it with --checkpoint NAME.

  --last N    how many of the newest kept checkpoints to average, 1 to the number kept
  --out NAME  the averaged checkpoint's name in the run directory (not best or last)
)";

}  // namespace

int cmd_average(const Argv& argv) {
    Args args(argv, {"last", "out"}, {"help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().size() != 1 || !args.has("last")) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    const std::string& run_dir = args.positional()[0];
    const int last = args.get_int("last", 0);
    const std::string path = average_last_checkpoints(run_dir, last, args.get("out", "averaged"));
    fmt::print(stderr, "averaged the last {} checkpoints of {} into {}\n", last, run_dir, path);
    return 0;
}

}  // namespace seqgrad
