// The derivatives `seqgrad explore` shows for each sentence, beside the decisions:
//   saliency   the gradient of each output token's log-probability with respect to the source
//              embeddings, for the beam's best hypothesis (apps/studies/saliency.h): gradient
//              norm and gradient x input for every sentence, integrated gradients for the first
//              ones only (they cost `steps` times as much); and per step its agreement with
//              attention (argmax, Spearman rank correlation)
//   gradflow   this sentence's teacher-forced loss, backpropagated: ‖∂L/∂h_s‖ over the source
//              positions split into the part that came through attention and the part through
//              the recurrence, ‖∂L/∂e_s‖, and the gradient norm of each module
//              (apps/studies/gradflow.h, the split `seqgrad gradflow` uses)
// The JSON is described in docs/saliency.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {

struct GradientViewOptions {
    bool enabled = true;  // false: neither saliency nor gradflow in the file
    int sentences = 40;   // both for the first N sentences only (they cost about as much as
                          // decoding them at beam 5)
    int integrated_sentences = 3;  // integrated gradients for the first N sentences
    int integrated_steps = 32;     // their steps (midpoint rule)
    int tape_sentences = 3;  // the recorded graph (apps/explore/explore_tape.h) of the first N
};

// The saliency of every translated sentence's best hypothesis (empty ones are skipped: no
// element), in batches of several sentences: integrated gradients for the first
// `integrated_sentences` of `sources`. Each element:
// {"grad_norm": [T][S], "grad_input": [T][S], ["integrated_gradients": [T][S],
//  "integrated_check": max_t |Σ_s I_ts − (f_t(e) − f_t(0))|], "log_probs": [T],
//  "agreement": {"method", "argmax": [T], "spearman": [T], "argmax_share", "mean_spearman"}}
// (agreement only when the hypothesis has attention); null for a sentence without one.
std::vector<nlohmann::json> saliency_json(const LoadedRun& run,
                                          const std::vector<std::string>& sources,
                                          const std::vector<Translation>& translations,
                                          const GradientViewOptions& options);

// {"target": "reference" | "beam", "loss", "hidden", "direct", "recurrent", "embedding" (per
// source position), "groups": {encoder, attention, decoder, output, total}} for the
// teacher-forced loss of `source` against `target` (the model's parameter gradients are zeroed
// before and after).
nlohmann::json gradflow_json(const LoadedRun& run, const std::string& source,
                             const std::vector<int32_t>& target, const std::string& target_name);

// x rounded to 3 significant digits (saliency values span many orders of magnitude; fixed
// decimals would round the small ones to 0); null when not finite.
nlohmann::json significant(double x);

}  // namespace seqgrad
