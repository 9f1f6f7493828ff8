// What a run measures besides the training loss: on the validation split, the loss (teacher
// forced) and the task metric from greedy decoding; on the test split, the metric alone.
// The metric is exact-match accuracy (%) for dates, corpus BLEU for text. Decoding goes a chunk
// of sentences at a time, so that Ctrl-C (models/training/signals.h) is heard between chunks.
#pragma once

#include <string>
#include <vector>

#include "seqgrad/data/batching.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/models/run/task.h"

namespace seqgrad {

// "accuracy" (dates) or "bleu" (text).
std::string metric_name(const Task& task);

struct Validation {
    double loss = 0;     // mean cross-entropy per real target token, teacher forced
    double metric = 0;   // on the first `decoded` validation sentences
    double chrf = 0;     // chrF2 of the same output (text tasks; 0 for dates)
    size_t decoded = 0;  // fewer than max_valid_decode when a stop was requested
};
// The number train.best_metric goes by, higher is better: −loss, BLEU or chrF.
double best_metric_score(const Validation& v, const std::string& best_metric);

// The model is in eval mode during the measurement and in train mode afterwards.
Validation measure_validation(TranslationModel& model, const Task& task,
                              const Batcher& valid_batches, const Config& config);

struct TestResult {
    bool complete = false;  // false: a stop was requested during the decoding
    double metric = 0;
    size_t sentences = 0;
    double seconds = 0;  // of the decoding
};
// The test split, decoded greedily with the model as it is (eval mode, train mode afterwards).
TestResult measure_test(TranslationModel& model, const Task& task, const Config& config);

}  // namespace seqgrad
