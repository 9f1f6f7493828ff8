// Translator: source strings in, target strings out — the same text pipeline as training,
// batched greedy decoding or beam search, attention weights kept for the heatmaps.
#pragma once

#include <string>
#include <vector>

#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/task.h"

namespace seqgrad {

struct Translation {
    std::vector<std::string> source_tokens;  // as the model saw them (with <eos>)
    std::vector<Hypothesis> nbest;           // best first; tokens include EOS when finished
    std::string text;                        // the best hypothesis, detokenized
    BeamTrace trace;                         // only with TranslateExtras::trace
};

// What translate() can do besides translating; off by default (BeamSearchExtras).
struct TranslateExtras {
    // Empty, or one per source: target token ids every hypothesis must start with.
    std::vector<std::vector<int32_t>> forced_prefixes;
    bool trace = false;  // record each sentence's beam-search trace in Translation::trace
};

// Decodes `sources` in batches of `batch_size`, sorted by length inside (so padding is small)
// and returned in input order. An empty source gives an empty translation.
std::vector<Translation> translate(const TranslationModel& model, const Task& task,
                                   const std::vector<std::string>& sources,
                                   const DecodeOptions& options, int batch_size = 64);
// The same with extras. With any extra, beam search runs even at beam width 1 (which gives
// greedy decoding's output).
std::vector<Translation> translate(const TranslationModel& model, const Task& task,
                                   const std::vector<std::string>& sources,
                                   const DecodeOptions& options, const TranslateExtras& extras,
                                   int batch_size = 64);

DecodeOptions decode_options_from(const DecodeConfig& config);

}  // namespace seqgrad
