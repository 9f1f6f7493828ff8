// The weights inside a live page (`seqgrad explore --live --live-weights f32|f16|auto`):
// float32 as trained, or IEEE half (safetensors F16: half the bytes, each weight rounded to the
// nearest half, which the engine turns back into floats as it loads them). Before F16 weights go
// into a page, the run's model is decoded natively with them, loaded back from the very bytes the
// page will hold, on the page's precomputed sentences, greedy and with the page's beam, and its
// tokens are compared with those of the float32 weights: how many sentences differ is reported,
// and `auto` keeps float32 when any does.
#pragma once

#include <string>
#include <vector>

#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/formats/safetensors.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {

enum class LiveWeights { f32, f16, automatic };

// "f32", "f16" or "auto"; anything else is an Error naming --live-weights.
LiveWeights live_weights_from_name(const std::string& name);

// The run's weights as a checkpoint file's bytes (the parameters only, with the checkpoint's
// metadata), stored as `dtype`. F16 throws an Error naming the tensor of a weight too large for a
// half (past 65504).
std::string live_weights_file(const LoadedRun& run, Dtype dtype);

// How many of `sources` decode to other tokens with the weights read from `weights_file` (a
// checkpoint's bytes) than with the run's own, greedy and with `beam` (its beam width).
struct WeightsComparison {
    size_t sentences = 0;
    size_t greedy_differ = 0, beam_differ = 0;
    size_t differ = 0;  // sentences whose greedy or beam tokens differ
};
WeightsComparison compare_weights(const LoadedRun& run, const std::string& weights_file,
                                  const std::vector<std::string>& sources,
                                  const DecodeOptions& beam);

// What went into the page, and why.
struct LiveWeightsChoice {
    Dtype dtype = Dtype::F32;
    std::string file;                     // the checkpoint's bytes
    size_t f32_bytes = 0, f16_bytes = 0;  // 0 when not written
    bool compared = false;                // F16 was tried on the sentences
    WeightsComparison comparison;
    std::string note;  // one line for the user: the sizes, the comparison, the choice
};

// The weights `choice` asks for. f32: no comparison. f16: F16, after the comparison (reported,
// not a reason to refuse). auto: F16 when no sentence differs and every weight fits a half, else
// F32 (the note says why).
LiveWeightsChoice choose_live_weights(const LoadedRun& run, LiveWeights choice,
                                      const std::vector<std::string>& sources,
                                      const DecodeOptions& beam);

}  // namespace seqgrad
