// Two or more runs side by side in one explore file: the same test sentences through each model.
// The runs may differ in anything but the task's source side: vocabulary, tokenizer (BPE or
// words), model kind (RNN or Transformer), attention, seed. A different test set is an error.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/explore/explore_data.h"

namespace seqgrad {

// Throws Error unless `b` holds the sentences of `a`, in the same order: the same sources and
// the same references (compared as read, before any tokenizer). The message names both runs and
// the first line (1-based) that differs, or both counts.
void check_same_test_set(const std::string& run_a, const ExploreInput& a, const std::string& run_b,
                         const ExploreInput& b);

// The data block of a file of several runs: {"runs": [explore_data of each run, in order]}.
// One run keeps the one-run block (explore_data's) unchanged.
nlohmann::json explore_runs_data(std::vector<nlohmann::json> runs);

}  // namespace seqgrad
