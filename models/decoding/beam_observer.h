// BeamObserver: what beam search tells a caller who watches it (BeamSearchExtras::observer;
// null by default, and then nothing is computed for it). The explorer's trace
// (apps/explore/beam_trace.h) is one such observer: it builds the tree of everything the search
// considered. Beam search knows only this interface.
//
// Beam search names each prefix it tells about by an id the observer gives it: the empty prefix
// of every sentence is 0, and `selected` returns the id of each new prefix. Sentences are
// numbered as beam_search's rows (translate() renumbers them as its inputs). For one sentence
// the calls come in this order:
//   started;  per step: expanded (once per live beam), [selecting, selected (once per selected
//   candidate), ended (for a candidate ending with EOS)];  stopped;  ended (for each live beam
//   that competes unfinished);  ranked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace seqgrad {

struct DecodeOptions;  // models/decoding/decoding.h
struct Hypothesis;

// Why a token may not follow a beam (none: it may).
enum class TokenMask : uint8_t {
    none,
    ngram_blocked,     // would repeat an n-gram (DecodeOptions::no_repeat_ngram_size)
    unk_suppressed,    // UNK with DecodeOptions::suppress_unk
    below_min_length,  // EOS before DecodeOptions::min_length tokens
    not_forced,        // not the token of the forced target prefix (BeamSearchExtras)
};

// Why the search of one sentence stopped (the rules at the top of beam_search.cpp).
enum class StopReason : uint8_t {
    all_finished,   // every slot of the beam ended with EOS (rule a)
    max_length,     // the live beams reached the sentence's length limit (rule b)
    dead_end,       // no live beam had an allowed continuation (rule b)
    cannot_improve  // no live beam could beat the nbest-th finished hypothesis (rule c)
};

// One of an expanded beam's most probable next tokens.
struct SeenToken {
    int32_t token;
    double log_prob;  // log p(token | beam, x)
    TokenMask mask;
};

class BeamObserver {
  public:
    virtual ~BeamObserver() = default;
    // How many of each expanded beam's most probable tokens `expanded` reports (at least; the
    // search reports more when it keeps more).
    virtual int alternatives() const = 0;
    // The search of `sentence` starts, with length limit `max_length`; its empty prefix is 0.
    virtual void started(size_t sentence, int max_length, const DecodeOptions& options) = 0;
    // Live beam `prefix` was expanded: its most probable tokens, best first, masked ones
    // included with the reason (PAD and SOS, never outputs, left out).
    virtual void expanded(size_t sentence, int32_t prefix, const std::vector<SeenToken>& seen) = 0;
    // A step selected at least one candidate; `selected` follows for each, in selection order.
    virtual void selecting(size_t sentence) = 0;
    // prefix·token was selected: `beam` is the prefix's index among the step's live beams,
    // `log_prob` the running sum. Returns the id of the new prefix.
    virtual int32_t selected(size_t sentence, int32_t prefix, int32_t beam, int32_t token,
                             double token_log_prob, double log_prob) = 0;
    // The hypothesis `h` ends at `prefix`: finished (EOS), or unfinished when the search stopped
    // by length or at a dead end. Its score (with the coverage penalty) is final.
    virtual void ended(size_t sentence, int32_t prefix, const Hypothesis& h) = 0;
    // The search of `sentence` stopped, with `live` the prefixes still live.
    virtual void stopped(size_t sentence, StopReason reason, const std::vector<int32_t>& live) = 0;
    // The hypotheses returned, best first.
    virtual void ranked(size_t sentence, const std::vector<int32_t>& nbest) = 0;
};

}  // namespace seqgrad
