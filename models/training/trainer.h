// Trainer: the training run behind `seqgrad train`: what a real run adds around the step.
//
// Each step is train_step (models/training/train_step.h: zero_grad, forward_loss, backward,
// clip, step) at the learning rate the schedule gives. Every `log_every` steps a
// record goes to RUN_DIR/metrics.jsonl (loss, lr, gradient norm before clipping, whether
// clipping fired, per-module gradient norms); after each epoch (or every `validate_every`
// steps) the validation loss and a task metric (exact-match accuracy for dates, BLEU for text)
// are measured, `best` and `last` checkpoints written, and the loss curve drawn.
// A run can stop (Ctrl-C, max_steps, early stopping) and resume bit for bit.
//
// Over several processes (TrainOptions::communicator of N ranks, e.g. under mpirun) every rank
// reads the same data and builds the same global batches; each runs its share of every batch
// (models/training/data_parallel.h) and the gradients are summed across ranks, so every rank takes
// the same optimizer step. Rank 0 alone writes the run directory (config, vocabularies, metrics,
// checkpoints), prints progress and runs validation and the test split; it sends the validation
// loss to the others, which update their schedule and early-stopping state from it. A stop
// request on any rank stops all of them after the same step. Every 100 steps, and at the end,
// the ranks compare fingerprints of their parameters; a mismatch is an error naming the step.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "seqgrad/models/distributed/communicator.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/models/training/progress_line.h"
#include "seqgrad/models/training/signals.h"

namespace seqgrad {

struct TrainSummary {
    int64_t steps = 0;
    int epochs_completed = 0;
    double best_valid_loss = 0;
    double last_valid_loss = 0;
    double last_valid_metric = 0;  // accuracy (dates) or BLEU (text) of the last validation
    std::string metric_name;
    int validations = 0;  // run in this session
    bool has_test = false;
    double test_metric = 0;  // on the test split with the best checkpoint (greedy)
    // train.average_last: the averaged checkpoint's validation (averaged.safetensors)
    bool has_average = false;
    int averaged_checkpoints = 0;
    double average_valid_loss = 0, average_valid_metric = 0;
    double seconds = 0;
    bool interrupted = false;
    bool stopped_early = false;
};

struct TrainOptions {
    bool resume = false;  // continue from run_dir/last.safetensors
    bool quiet = false;   // no progress line
    // Called after every validation with the run directory (the command line redraws the
    // loss plot there; models/ knows nothing about pictures).
    std::function<void(const std::string& run_dir)> on_validation;
    // Called at every train record (every train.log_every steps) with what the progress line
    // shows, whether or not it is printed (quiet): for a progress bar of one's own.
    std::function<void(const ProgressLine& progress)> on_progress;
    // The processes this run spans; null = this process alone.
    Communicator* communicator = nullptr;
    // The layers' fused ops or their composed twins (models/model/model_config.h).
    FusedLayers fused;
};

// Trains as the config says; writes everything into config.output.run_dir.
TrainSummary train(const Config& config, const TrainOptions& options = {});

// stop_requested(), request_stop(), WriteSection: models/training/signals.h

}  // namespace seqgrad
