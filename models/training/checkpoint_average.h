// Checkpoint averaging: the mean of the parameters of a run's last N checkpoints, often a better
// model than any one of them (Vaswani et al. 2017 average the last 5 or 20; fairseq's
// average_checkpoints.py).
//
//   θ_avg = (1/N) Σ_i θ_i, tensor by tensor, summed in double in the files' order
//
// With train.average_last N the trainer keeps the parameters of its last N validations as
// RUN_DIR/checkpoints/step-00001200.safetensors (named by the optimizer step, 8 digits, the oldest
// removed as a new one is written) and, when training ends, writes their average as
// RUN_DIR/averaged.safetensors. `seqgrad average RUN_DIR --last N [--out NAME]` does the same for
// any N up to the number kept. The averaged file is an ordinary checkpoint of parameters (no
// optimizer state): eval, translate and explore load it with --checkpoint averaged.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "seqgrad/layers/module.h"

namespace seqgrad {

// One kept checkpoint of a run.
struct KeptCheckpoint {
    int64_t step;
    std::string path;
};

// RUN_DIR/checkpoints/step-<8 digits>.safetensors
std::string kept_checkpoint_path(const std::string& run_dir, int64_t step);

// The kept checkpoints of `run_dir`, oldest first (none when the folder does not exist).
std::vector<KeptCheckpoint> kept_checkpoints(const std::string& run_dir);

// Writes `model`'s parameters as the kept checkpoint of `step` (atomically; `metadata` as
// save_checkpoint's), then removes the oldest kept checkpoints beyond the newest `keep`.
void keep_checkpoint(const std::string& run_dir, int64_t step, const Module& model,
                     const nlohmann::json& metadata, int keep);

// The parameters of the checkpoints at `paths` averaged. Every file must hold the same tensor
// names with the same shapes as the first (its extra tensors, optimizer state, are left out);
// otherwise the Error names the file, the tensor and what was expected.
std::vector<std::pair<std::string, Tensor>> average_checkpoints(
    const std::vector<std::string>& paths);

// Averages the last `last` kept checkpoints of `run_dir` and writes RUN_DIR/<out>.safetensors
// atomically; its metadata records the files and steps averaged and the first file's "config".
// Returns the path written. Errors: no run directory, `last` < 1 or more than are kept (the
// message says how many there are and which key keeps them), an `out` that is not a plain name
// or would overwrite best, last or a kept checkpoint.
std::string average_last_checkpoints(const std::string& run_dir, int last,
                                     const std::string& out = "averaged");

}  // namespace seqgrad
