// What greedy decoding (models/decoding/decoding.cpp) and beam search (models/decoding/beam_search.cpp) share:
// option checks, per-sentence length limits, the masks, the scores, one step's checked output.
// An implementation header of models/, not part of the public interface (models/decoding/decoding.h).
#pragma once

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "seqgrad/models/decoding/decoding.h"

namespace seqgrad::decoding_detail {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
// An unattended source position would give log(0) = -inf in the coverage penalty; its coverage
// is clamped to this, so it costs β·log(1e-6) ≈ -13.8β instead.
constexpr double kMinCoverage = 1e-6;

// Throws seqgrad::Error naming `who` and the bad option or input.
void check_options(const DecodeOptions& options, const DecoderState& initial,
                   const std::vector<int32_t>& source_lengths, const char* who);

// M, the most output tokens (EOS included) sentence `b` may have.
int sentence_max_length(const DecodeOptions& options, const std::vector<int32_t>& source_lengths,
                        size_t b);

// The tokens that may not follow the prefix `tokens` (appended to `banned`, which is cleared):
// PAD and SOS always, EOS before min_length, UNK when suppressed, n-gram repeats.
void collect_banned_tokens(const std::vector<int32_t>& tokens, const DecodeOptions& options,
                           std::vector<int32_t>& banned);

// cp = β Σ_s log(min(coverage_s, 1)), coverage_s = Σ_t a_ts over the steps so far.
double coverage_term(const std::vector<double>& coverage, const DecodeOptions& options);
// score = log_prob / lp(length) + cp
double hypothesis_score(double log_prob, size_t length, const std::vector<double>& coverage,
                        const DecodeOptions& options);

// What model.step returned, checked, with the attention columns of each sentence known.
// It owns the step's result: the pointers below point into its tensors, which must outlive
// every read of them (a temporary StepResult would free them at the end of the statement).
struct StepOutput {
    StepResult result;
    const real* log_probs = nullptr;  // [N, V]
    int64_t vocab = 0;
    const real* attention = nullptr;  // [N, S] or nullptr
    int64_t attention_width = 0;      // S

    StepOutput(StepResult step_result, int64_t rows, int64_t vocab_size, const char* who)
        : result(std::move(step_result)) {
        const Tensor& lp = result.log_probs;
        if (!lp.defined() || lp.rank() != 2 || lp.size(0) != rows || lp.size(1) != vocab_size ||
            vocab_size <= Vocab::UNK)
            throw Error(
                fmt::format("{}: model.step returned log_probs {} for {} rows, expected "
                            "[{},{}] (vocab_size > {})",
                            who, lp.defined() ? lp.shape().str() : "undefined", rows, rows,
                            vocab_size, Vocab::UNK));
        log_probs = lp.data();
        vocab = vocab_size;
        const Tensor& att = result.attention;
        if (att.defined()) {
            if (att.rank() != 2 || att.size(0) != rows)
                throw Error(fmt::format("{}: model.step returned attention {} for {} rows", who,
                                        att.shape().str(), rows));
            attention = att.data();
            attention_width = att.size(1);
        }
    }
    const real* log_prob_row(int64_t row) const { return log_probs + row * vocab; }
    const real* attention_row(int64_t row) const { return attention + row * attention_width; }
};

// The source positions a sentence's attention rows keep: its source length if known, else all.
int64_t attention_columns(const StepOutput& out, const std::vector<int32_t>& source_lengths,
                          size_t b, const char* who);

// Adds a step's attention row (its first `columns` entries) to a hypothesis' history.
void record_attention(const real* row, int64_t columns, const DecodeOptions& options,
                      std::vector<std::vector<float>>& attention, std::vector<double>& coverage);

// The previous token of a prefix: its last token, or SOS for the empty prefix.
int32_t previous_token(const std::vector<int32_t>& tokens);

// rows == 0, 1, ..., n-1 (no reordering needed)
bool is_identity(const std::vector<int32_t>& rows, int64_t n);

}  // namespace seqgrad::decoding_detail
