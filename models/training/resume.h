// Resuming a run bit for bit: where the run is (Progress), and the training state that travels
// in a checkpoint beside the weights (the optimizer's moments and step, the schedule, the random
// generator, the progress), so that a resumed run takes exactly the steps an uninterrupted one
// would have taken.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/optim/optimizer.h"
#include "seqgrad/optim/schedule.h"

namespace seqgrad {

// Where a run is, and what early stopping remembers.
struct Progress {
    int64_t step = 0;           // optimizer steps done
    uint64_t epoch = 0;         // current epoch
    size_t batch_in_epoch = 0;  // next batch of the current epoch
    double best_valid_loss = INFINITY;
    // The best validation's train.best_metric score (higher is better: −loss, BLEU or chrF).
    // A checkpoint written before the key existed gives −best_valid_loss.
    double best_score = -INFINITY;
    int bad_validations = 0;
    int epochs_completed = 0;

    nlohmann::json to_json() const;
    // Throws nlohmann::json::exception on a missing or mistyped key.
    static Progress from_json(const nlohmann::json& j);
};

// Everything a checkpoint of a run holds, by reference.
struct TrainingState {
    const Config& config;
    TranslationModel& model;
    Optimizer& optimizer;
    LrSchedule& schedule;
    Rng& rng;
    Progress& progress;
};

// The weights and the training state into a safetensors file, written atomically (a second
// Ctrl-C waits for the write: WriteSection, models/training/signals.h).
void save_training_checkpoint(const std::string& path, const TrainingState& state);

// Restores what save_training_checkpoint wrote. Throws Error, naming the file, on a checkpoint of
// another cell or shape, one that holds weights only, or malformed training state.
void restore_training_checkpoint(const std::string& path, const TrainingState& state);

}  // namespace seqgrad
