// Translator: source strings in, target strings out — the same text pipeline as training,
// batched greedy decoding or beam search, attention weights kept for the heatmaps.
#pragma once

#include <atomic>
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
    // The source was longer than the model reads and TranslateExtras::long_input is refuse:
    // not translated (no hypotheses, empty text).
    bool refused = false;
    // Empty, or what was done about the source's length (truncated, refused, or read past the
    // length trained on), for the commands to print beside its line number.
    std::string length_note;
};

// A source longer than the model can read (readable_length): cut to its first readable ids,
// <eos> kept last, or not translated at all (Translation::refused).
enum class LongInput { truncate, refuse };

// What translate() can do besides translating; off by default (BeamSearchExtras).
struct TranslateExtras {
    // Empty, or one per source: target token ids every hypothesis must start with.
    std::vector<std::vector<int32_t>> forced_prefixes;
    // Non-null: beam search's observer, told about each source by its index in `sources`
    // (apps/explore/beam_trace.h records the trees).
    BeamObserver* observer = nullptr;
    LongInput long_input = LongInput::truncate;
    // > 0: the longest source training read (data.max_source_len, ids with <eos>). A longer one
    // that a Transformer with sinusoidal positions still reads gets a length_note saying that
    // its positions go past the trained length.
    int64_t trained_source_length = 0;
    // Non-null: checked between two batches; once set (Ctrl-C in Python, which has no other way
    // into a call that runs without the GIL), translate throws an Error of kind interrupted.
    const std::atomic<bool>* stop = nullptr;
};

// The longest sequence, in ids (<eos> included), that a model of `config` can read on either
// side: model.max_positions for a Transformer with learned positions; 0 = no limit.
int64_t readable_length(const ModelConfig& config);

// Decodes `sources` in batches of `batch_size`, sorted by length inside (so padding is small)
// and returned in input order. An empty source gives an empty translation. A source longer than
// readable_length is truncated (the default) or refused, each on its own: the others are
// translated. Outputs are cut at readable_length tokens too.
std::vector<Translation> translate(const TranslationModel& model, const Task& task,
                                   const std::vector<std::string>& sources,
                                   const DecodeOptions& options, int batch_size = 64);
// The same with extras. With a forced prefix or an observer, beam search runs even at beam width 1
// (which gives greedy decoding's output).
std::vector<Translation> translate(const TranslationModel& model, const Task& task,
                                   const std::vector<std::string>& sources,
                                   const DecodeOptions& options, const TranslateExtras& extras,
                                   int batch_size = 64);

DecodeOptions decode_options_from(const DecodeConfig& config);

}  // namespace seqgrad
