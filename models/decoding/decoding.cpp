// Greedy decoding and beam search.
//
// Notation. A source sentence x; a hypothesis y = y_1 .. y_n (SOS not counted); its
// log-probability L(y) = Σ_t log p(y_t | y_<t, x), a sum of numbers <= 0, so L only goes down as
// y grows; K = beam_size; lp(n) the length penalty; β the coverage penalty weight, and
//     score(y) = L(y) / lp(|y|) + cp(y),   cp(y) = β Σ_s log(min(Σ_t a_ts, 1))  (<= 0).
//
// Beam search is in models/decoding/beam_search.cpp, with the explanation of the algorithm, its
// stopping rule and where length normalisation applies; what both share is declared in
// models/decoding/decoding_detail.h and defined here.
//
// ======================================== Greedy ==============================================
//
// The same with K = 1, written plainly: each row takes its best allowed token; a row that
// emits EOS, reaches its length limit or has no allowed token leaves the batch.
#include "seqgrad/models/decoding/decoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "seqgrad/models/decoding/decoding_detail.h"

namespace seqgrad {
namespace decoding_detail {

// ---- options and per-sentence limits -------------------------------------------------------

void check_options(const DecodeOptions& options, const DecoderState& initial,
                   const std::vector<int32_t>& source_lengths, const char* who) {
    auto fail = [&](const std::string& what) { throw Error(fmt::format("{}: {}", who, what)); };
    if (options.beam_size < 1)
        fail(fmt::format("beam_size must be >= 1, got {}", options.beam_size));
    if (options.nbest < 1 || options.nbest > options.beam_size)
        fail(fmt::format("nbest must be in [1, beam_size = {}], got {}", options.beam_size,
                         options.nbest));
    if (options.max_length < 1)
        fail(fmt::format("max_length must be >= 1, got {}", options.max_length));
    if (options.min_length < 0)
        fail(fmt::format("min_length must be >= 0, got {}", options.min_length));
    if (!(options.max_length_factor >= 0))
        fail(fmt::format("max_length_factor must be >= 0, got {}", options.max_length_factor));
    if (options.no_repeat_ngram_size < 0)
        fail(
            fmt::format("no_repeat_ngram_size must be >= 0, got {}", options.no_repeat_ngram_size));
    if (!(options.coverage_penalty >= 0))
        fail(fmt::format("coverage_penalty must be >= 0, got {}", options.coverage_penalty));
    if (!std::isfinite(options.alpha))
        fail(fmt::format("alpha must be finite, got {}", options.alpha));
    if (options.length_penalty != DecodeOptions::none &&
        options.length_penalty != DecodeOptions::average &&
        options.length_penalty != DecodeOptions::gnmt)
        fail("unknown length_penalty");
    if (!source_lengths.empty() && int64_t(source_lengths.size()) != initial.rows())
        fail(fmt::format("{} source lengths for {} sentences", source_lengths.size(),
                         initial.rows()));
    for (int32_t length : source_lengths)
        if (length < 0) fail(fmt::format("negative source length {}", length));
}

// M, the most output tokens (EOS included) sentence `b` may have.
int sentence_max_length(const DecodeOptions& options, const std::vector<int32_t>& source_lengths,
                        size_t b) {
    if (options.max_length_factor <= 0 || source_lengths.empty()) return options.max_length;
    const double from_source =
        std::ceil(options.max_length_factor * source_lengths[b]) + options.max_length_offset;
    return int(std::min<double>(options.max_length, std::max(1.0, from_source)));
}

// ---- masks -----------------------------------------------------------------------------------

// The tokens that may not follow the prefix `tokens` (appended to `banned`, which is cleared).
void collect_banned_tokens(const std::vector<int32_t>& tokens, const DecodeOptions& options,
                           std::vector<int32_t>& banned) {
    banned.assign({Vocab::PAD, Vocab::SOS});
    if (int64_t(tokens.size()) < options.min_length) banned.push_back(Vocab::EOS);
    if (options.suppress_unk) banned.push_back(Vocab::UNK);
    // No repeated n-gram: the last n-1 tokens followed by v would form an n-gram; v is banned
    // when that n-gram already occurs, i.e. for every earlier n-gram tokens[start, start + n)
    // whose first n-1 tokens equal the last n-1 tokens, its n-th token is banned.
    const size_t n = size_t(options.no_repeat_ngram_size);
    if (n == 0 || tokens.size() < n) return;
    const size_t context = n - 1;
    const auto suffix = tokens.end() - std::ptrdiff_t(context);
    for (size_t start = 0; start + n <= tokens.size(); ++start)
        if (std::equal(suffix, tokens.end(), tokens.begin() + std::ptrdiff_t(start)))
            banned.push_back(tokens[start + context]);
}

// ---- scores ------------------------------------------------------------------------------------

// cp = β Σ_s log(min(coverage_s, 1)), coverage_s = Σ_t a_ts over the steps so far.
double coverage_term(const std::vector<double>& coverage, const DecodeOptions& options) {
    if (options.coverage_penalty <= 0) return 0;
    double sum_of_logs = 0;
    for (double c : coverage) sum_of_logs += std::log(std::max(std::min(c, 1.0), kMinCoverage));
    return options.coverage_penalty * sum_of_logs;
}

double hypothesis_score(double log_prob, size_t length, const std::vector<double>& coverage,
                        const DecodeOptions& options) {
    return log_prob / length_penalty(int64_t(length), options) + coverage_term(coverage, options);
}

// ---- one step's output -------------------------------------------------------------------------

// The source positions a sentence's attention rows keep: its source length if known, else all.
int64_t attention_columns(const StepOutput& out, const std::vector<int32_t>& source_lengths,
                          size_t b, const char* who) {
    if (source_lengths.empty()) return out.attention_width;
    if (source_lengths[b] > out.attention_width)
        throw Error(
            fmt::format("{}: sentence {} has source length {} but the attention has only "
                        "{} columns",
                        who, b, source_lengths[b], out.attention_width));
    return source_lengths[b];
}

// Adds a step's attention row (its first `columns` entries) to a hypothesis' history.
void record_attention(const real* row, int64_t columns, const DecodeOptions& options,
                      std::vector<std::vector<float>>& attention, std::vector<double>& coverage) {
    if (options.keep_attention) attention.emplace_back(row, row + columns);
    if (options.coverage_penalty > 0) {
        if (coverage.empty()) coverage.assign(size_t(columns), 0.0);
        for (int64_t s = 0; s < columns; ++s) coverage[size_t(s)] += row[s];
    }
}

// The previous token of a prefix: its last token, or SOS for the empty prefix.
int32_t previous_token(const std::vector<int32_t>& tokens) {
    return tokens.empty() ? Vocab::SOS : tokens.back();
}

bool is_identity(const std::vector<int32_t>& rows, int64_t n) {
    if (int64_t(rows.size()) != n) return false;
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i] != int32_t(i)) return false;
    return true;
}

}  // namespace decoding_detail

using namespace decoding_detail;

double length_penalty(int64_t length, const DecodeOptions& options) {
    const double n = double(std::max<int64_t>(length, 1));
    switch (options.length_penalty) {
        case DecodeOptions::none:
            return 1.0;
        case DecodeOptions::average:
            return std::pow(n, options.alpha);
        case DecodeOptions::gnmt:
            return std::pow((5.0 + n) / 6.0, options.alpha);
    }
    throw Error("length_penalty: unknown length penalty");
}

// ================================================================================================

namespace {

// Greedy decoding's sentences: each one's hypothesis and coverage Σ_t a_ts, and which sentence
// each row of the decoder state holds (a finished sentence's row leaves the state).
struct GreedySentences {
    std::vector<Hypothesis> hypotheses;
    std::vector<std::vector<double>> coverage;
    std::vector<int32_t> sentence_of_row;
    // each step's scratch, kept between steps so that a step allocates nothing
    std::vector<int32_t> kept_rows, kept_sentences, banned;

    explicit GreedySentences(int64_t n)
        : hypotheses(size_t(n)), coverage(size_t(n)), sentence_of_row(size_t(n)) {
        std::iota(sentence_of_row.begin(), sentence_of_row.end(), 0);
    }
};

// The most probable token of `row` [V] that is not banned and has probability > 0 (the first
// one on ties), or -1 when there is none.
int32_t best_allowed_token(const real* row, int64_t vocab, const std::vector<int32_t>& banned) {
    int32_t best_token = -1;
    double best_log_prob = kNegativeInfinity;
    for (int32_t v = 0; v < int32_t(vocab); ++v) {
        if (!(row[v] > best_log_prob)) continue;  // also skips -inf and NaN
        if (std::find(banned.begin(), banned.end(), v) != banned.end()) continue;
        best_token = v;
        best_log_prob = row[v];
    }
    return best_token;
}

// One greedy step: every row's sentence takes its best allowed token. Returns the rows that go
// on (neither ended by EOS, nor at their length limit, nor at a dead end) and keeps only their
// sentences in sentence_of_row.
const std::vector<int32_t>& extend_every_row(const StepOutput& out, const DecodeOptions& options,
                                             const std::vector<int32_t>& source_lengths,
                                             GreedySentences& sentences, const char* who) {
    std::vector<int32_t>& kept_rows = sentences.kept_rows;
    std::vector<int32_t>& kept_sentences = sentences.kept_sentences;
    kept_rows.clear();
    kept_sentences.clear();
    for (int64_t r = 0; r < int64_t(sentences.sentence_of_row.size()); ++r) {
        const size_t b = size_t(sentences.sentence_of_row[size_t(r)]);
        Hypothesis& h = sentences.hypotheses[b];
        collect_banned_tokens(h.tokens, options, sentences.banned);
        const real* row = out.log_prob_row(r);  // [V]
        const int32_t token = best_allowed_token(row, out.vocab, sentences.banned);
        if (token < 0) continue;  // dead end: stops unfinished
        h.tokens.push_back(token);
        h.log_prob += row[token];
        if (out.attention)
            record_attention(out.attention_row(r), attention_columns(out, source_lengths, b, who),
                             options, h.attention, sentences.coverage[b]);
        if (token == Vocab::EOS) {
            h.finished = true;
        } else if (int64_t(h.tokens.size()) < sentence_max_length(options, source_lengths, b)) {
            kept_rows.push_back(int32_t(r));
            kept_sentences.push_back(int32_t(b));
        }
    }
    sentences.sentence_of_row.swap(kept_sentences);
    return kept_rows;
}

}  // namespace

std::vector<Hypothesis> greedy_decode(const StepModel& model, std::unique_ptr<DecoderState> initial,
                                      const DecodeOptions& options,
                                      const std::vector<int32_t>& source_lengths) {
    const char* who = "greedy_decode";
    NoGradGuard no_grad;
    DecodeOptions checked = options;
    checked.beam_size = checked.nbest = 1;  // not used by greedy decoding
    if (!initial) throw Error(fmt::format("{}: no decoder state", who));
    check_options(checked, *initial, source_lengths, who);

    GreedySentences sentences(initial->rows());
    std::unique_ptr<DecoderState> state = std::move(initial);
    std::vector<int32_t> previous_tokens;
    while (!sentences.sentence_of_row.empty()) {
        const int64_t rows = int64_t(sentences.sentence_of_row.size());
        previous_tokens.clear();
        for (int32_t b : sentences.sentence_of_row)
            previous_tokens.push_back(previous_token(sentences.hypotheses[size_t(b)].tokens));
        const StepOutput out(model.step(previous_tokens, *state), rows, model.vocab_size(), who);
        if (options.coverage_penalty > 0 && !out.attention)
            throw Error(
                fmt::format("{}: coverage_penalty needs a model that returns attention", who));
        const std::vector<int32_t>& kept_rows =
            extend_every_row(out, options, source_lengths, sentences, who);
        // Rows that finished leave the batch.
        if (!kept_rows.empty() && !is_identity(kept_rows, rows)) state = state->select(kept_rows);
    }
    for (size_t b = 0; b < sentences.hypotheses.size(); ++b) {
        Hypothesis& h = sentences.hypotheses[b];
        h.score = hypothesis_score(h.log_prob, h.tokens.size(), sentences.coverage[b], options);
    }
    return std::move(sentences.hypotheses);
}

}  // namespace seqgrad
