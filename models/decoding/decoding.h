// Decoding: turning a trained StepModel into output sentences.
//
//   greedy_decode  picks the single most probable next token at every step.
//   beam_search    keeps the K most probable prefixes ("beams") of every sentence at every
//                  step, sets aside the ones that end with EOS, and ranks the finished ones by
//                  length-normalised log-probability.
//
// Both take a batch of B sentences (the decoder state after encoding, one row per sentence) and
// run every live row of every sentence through ONE StepModel::step call per step. The
// algorithm, the stopping rule and when length normalisation is applied are explained at the
// top of models/decoding/beam_search.cpp; this header is the contract.
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/data/vocab.h"
#include "seqgrad/models/decoding/beam_observer.h"
#include "seqgrad/models/model/step_model.h"

namespace seqgrad {

// The reserved token ids decoding uses are the vocabulary's (data/vocab.h): Vocab::PAD is never
// produced (masked at every step), Vocab::SOS is the first decoder input and never produced,
// Vocab::EOS ends a hypothesis, Vocab::UNK is masked when DecodeOptions::suppress_unk.

// One output sentence, finished or not.
struct Hypothesis {
    std::vector<int32_t> tokens;  // output tokens without SOS; ends with EOS iff `finished`
    double log_prob = 0;          // Σ_t log p(y_t | y_<t, x), summed in double
    double score = 0;             // log_prob / lp(tokens.size()) + coverage penalty: ranking key
    bool finished = false;        // ended with EOS (false: stopped by the length limit)
    // One row per output token (EOS included): the attention weights over the source positions
    // at that step, trimmed to the sentence's source length when source_lengths are given.
    // Empty when the model returns no attention or DecodeOptions::keep_attention is false.
    std::vector<std::vector<float>> attention;
};

struct DecodeOptions {
    // lp(len), the length penalty the log-probability is divided by (len = number of output
    // tokens, EOS included):
    //   none     lp = 1                   (raw log-probability: favours short outputs)
    //   average  lp = len^alpha           (alpha = 1: mean log-probability per token)
    //   gnmt     lp = ((5 + len) / 6)^alpha  (Wu et al. 2016, "Google's NMT system")
    enum LengthPenalty { none, average, gnmt };

    int beam_size = 1;  // K, the number of hypotheses kept per sentence (beam_search only)
    double alpha = 0.6;
    LengthPenalty length_penalty = average;
    int nbest = 1;  // hypotheses returned per sentence by beam_search, 1 <= nbest <= beam_size

    int min_length = 0;   // EOS is masked until a hypothesis has this many tokens
    int max_length = 50;  // absolute limit on output tokens (EOS included), >= 1
    // If > 0 and source_lengths are given, a sentence with S source tokens stops at
    //   min(max_length, max(1, ceil(max_length_factor * S) + max_length_offset)) tokens.
    double max_length_factor = 0;
    int max_length_offset = 5;

    int no_repeat_ngram_size = 0;  // n > 0: a token that would repeat an n-gram gets -inf
    bool suppress_unk = false;     // UNK gets -inf
    // GNMT's coverage penalty β (0 = off): score += β Σ_s log(min(Σ_t a_ts, 1)), summed over
    // the sentence's source positions s; rewards hypotheses that attended to every source word.
    // Needs a model that returns attention.
    double coverage_penalty = 0;
    bool keep_attention = true;  // store each hypothesis' attention rows
};

// lp(length) as chosen by `options` (see DecodeOptions::LengthPenalty). length < 1 counts as 1.
double length_penalty(int64_t length, const DecodeOptions& options);

// Greedy decoding of B sentences. `initial` holds one row per sentence; `source_lengths` is
// empty or has B entries (used for max_length_factor, attention trimming and coverage).
// Uses min_length, max_length(_factor), no_repeat_ngram_size, suppress_unk, the length and
// coverage penalties (for Hypothesis::score only) and keep_attention; ignores beam_size and nbest.
// Returns one hypothesis per sentence, in input order.
std::vector<Hypothesis> greedy_decode(const StepModel& model, std::unique_ptr<DecoderState> initial,
                                      const DecodeOptions& options,
                                      const std::vector<int32_t>& source_lengths = {});

// Beam search over B sentences, all live beams of all sentences in one batch per step.
// Returns for every sentence (input order) at most `nbest` hypotheses sorted by score,
// best first. beam_size = 1 gives exactly greedy_decode's output.
std::vector<std::vector<Hypothesis>> beam_search(const StepModel& model,
                                                 std::unique_ptr<DecoderState> initial,
                                                 const DecodeOptions& options,
                                                 const std::vector<int32_t>& source_lengths = {});

// What beam search can do besides searching; everything here is off by default and costs
// nothing when off.
struct BeamSearchExtras {
    // Empty, or one entry per sentence: the target tokens every hypothesis of that sentence must
    // start with (a "forced prefix"; empty = none). While a hypothesis is shorter than its
    // prefix, the prefix's next token is its only candidate, masks (min_length, n-grams, UNK)
    // do not apply, and the beam holds that single hypothesis. The rest is searched as usual.
    std::vector<std::vector<int32_t>> forced_prefixes;
    // Non-null: told what the search considers and decides, sentence by sentence
    // (models/decoding/beam_observer.h; the explorer's BeamTraceRecorder records it as a tree).
    BeamObserver* observer = nullptr;
};

std::vector<std::vector<Hypothesis>> beam_search(const StepModel& model,
                                                 std::unique_ptr<DecoderState> initial,
                                                 const DecodeOptions& options,
                                                 const std::vector<int32_t>& source_lengths,
                                                 const BeamSearchExtras& extras);

}  // namespace seqgrad
