// The data behind `seqgrad explore`'s HTML file: decode a test set greedily and with beam search
// (with its trace), score every sentence, diagnose its attention, precompute what-if
// continuations and read the training curves. The page (apps/explore/explore_page.html) only draws it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/explore/explore_gradients.h"
#include "seqgrad/data/corpus.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/decoding/translator.h"

namespace seqgrad {

struct ExploreOptions {
    DecodeOptions decode;   // beam_size >= 1 (the tree), nbest <= beam_size
    int what_if_steps = 3;  // what-if alternatives over the first S steps of the best hypothesis
    int what_if_alternatives = 3;  // per step
    bool progress = true;          // a progress line on stderr while decoding
    GradientViewOptions gradients;  // saliency and gradient flow per sentence
};

// What was decoded. `references` may be empty (--input: sources only).
struct ExploreInput {
    std::vector<std::string> sources, references;
    std::string origin;    // where they came from, shown in the file
    size_t available = 0;  // how many there were before --limit
};

// The file's data block: {"meta", "corpus", "sentences", "training", "target_tokens"}; the
// schema is described at the top of apps/explore/explore_page.html.
nlohmann::json explore_data(const LoadedRun& run, const std::string& run_dir,
                            const ExploreInput& input, const ExploreOptions& options);

// The training curves of RUN_DIR/metrics.jsonl: {"train": [...], "valid": [...]}; empty lists
// when the file does not exist. A line that is not JSON is an error naming the file and line.
nlohmann::json training_curves(const std::string& metrics_path);

}  // namespace seqgrad
