// A trained run, loaded back from its directory: the config it was trained with, its
// vocabularies and text pipeline, and the model with the weights of `best` (or `last`).
#pragma once

#include <memory>
#include <string>

#include "seqgrad/models/run/config.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/task.h"

namespace seqgrad {

struct LoadedRun {
    Config config;
    Task task;  // vocabularies and pipeline; data splits only when load_data
    std::unique_ptr<Rng> rng;
    std::unique_ptr<TranslationModel> model;  // model.kind's model, in eval mode
    std::string checkpoint_path;
};

// which: "best" (falls back to last when there is no best yet), "last", or the name of another
// checkpoint in the run directory, RUN_DIR/<which>.safetensors ("averaged":
// models/training/checkpoint_average.h).
LoadedRun load_run(const std::string& run_dir, const std::string& which = "best",
                   bool load_data = false);

}  // namespace seqgrad
