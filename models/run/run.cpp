#include "seqgrad/models/run/run.h"

#include <fmt/format.h>

#include <filesystem>

#include "seqgrad/models/formats/checkpoint.h"

namespace seqgrad {

LoadedRun load_run(const std::string& run_dir, const std::string& which, bool load_data) {
    if (!std::filesystem::is_directory(run_dir))
        throw Error(fmt::format("{}: not a run directory (expected the output.run_dir of a "
                                "`seqgrad train` run)",
                                run_dir),
                    std::filesystem::exists(run_dir) ? ErrorKind::value : ErrorKind::not_found);
    LoadedRun run;
    run.config = Config::load(run_dir + "/config.json");
    run.task = prepare_task_with_vocabs(run.config, run_dir, load_data, /*quiet=*/true);
    run.rng = std::make_unique<Rng>(run.config.train.seed);
    run.model = make_model(run.config.model, run.task.source_vocab.size(),
                           run.task.target_vocab.size(), *run.rng);
    std::string path = run_dir + "/" + which + ".safetensors";
    if (which == "best" && !std::filesystem::exists(path)) path = run_dir + "/last.safetensors";
    if (!std::filesystem::exists(path))
        throw Error(which == "best" || which == "last"
                        ? fmt::format("{}: no checkpoint ({}.safetensors or last.safetensors)",
                                      run_dir, which)
                        : fmt::format("{}: no such checkpoint (--checkpoint {}; an averaged "
                                      "checkpoint is written by `seqgrad average` or "
                                      "train.average_last)",
                                      path, which),
                    ErrorKind::not_found);
    const SafetensorsFile file = load_checkpoint(path);
    check_checkpoint_cell(file, run.config.model.cell);
    load_parameters(file, *run.model);
    run.model->eval();
    run.checkpoint_path = path;
    return run;
}

}  // namespace seqgrad
