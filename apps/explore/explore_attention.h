// The Transformer's attention in `seqgrad explore`'s file: every layer and head of the encoder's
// self-attention, the decoder's (causal) self-attention and the cross-attention
// (apps/attention/transformer_attention.h), for the beam's best hypothesis and the greedy one.
//
// Size: a layer's weights are h·T·S numbers per hypothesis (h·S·S for the encoder), so they are
// kept for those two hypotheses only (the other n-best hypotheses keep the top layer's
// cross-attention averaged over heads, as every model's do), rounded to 3 decimals like the
// other attention weights but written as integer thousandths (65 for 0.065: 45% smaller), the
// decoder's causal rows without their masked future, and the greedy hypothesis' left out when it
// is the best one's. Per sentence, under "transformer":
//   "encoder"  [layer][head][S][S]
//   "best"     {"decoder": [layer][head][T][t+1], "cross": [layer][head][T][S]}
//   "greedy"   the same, or absent when the greedy output is the best hypothesis
// The head average is not stored: the page computes it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {

// The file's meta "transformer" entry (layers, heads, sizes), or null for an RNN run.
nlohmann::json transformer_meta(const LoadedRun& run);

// Adds "transformer" to every non-empty sentence of a Transformer run (nothing for an RNN run).
// `beams` and `greedies` are the decodings of `sources`, in order.
void add_transformer_attention(const LoadedRun& run, const std::vector<std::string>& sources,
                               const std::vector<Translation>& beams,
                               const std::vector<Translation>& greedies, nlohmann::json& sentences);

}  // namespace seqgrad
