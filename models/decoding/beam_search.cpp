// Beam search (models/decoding/decoding.h), with its observer (models/decoding/beam_observer.h)
// and forced prefixes.
//
// Notation. A source sentence x; a hypothesis y = y_1 .. y_n (SOS not counted); its
// log-probability L(y) = Σ_t log p(y_t | y_<t, x), a sum of numbers <= 0, so L only goes down as
// y grows; K = beam_size; lp(n) the length penalty; β the coverage penalty weight, and
//     score(y) = L(y) / lp(|y|) + cp(y),   cp(y) = β Σ_s log(min(Σ_t a_ts, 1))  (<= 0).
//
// ======================================== Beam search ========================================
//
// Every sentence owns K slots. It starts with ONE live beam, the empty prefix (its row of
// `initial`). We do not copy that row K times: with K identical beams the first step would pick
// the same token K times (the usual fix, copying anyway and giving copies 2..K the score -inf at
// the first step, gives the same result with K times the work).
//
// One step, for all sentences at once:
//   1. Batch. The live beams of every running sentence, sentence after sentence, are the rows of
//      one batch: previous_tokens [N] (the beam's last token, SOS for the empty prefix) and the
//      state (tensors [N, ...]). model.step gives log_probs [N, V] and attention [N, S].
//   2. Expand. Each live beam b and allowed token v make a candidate b·v with log-probability
//      L(b) + log p(v | b, x). Not allowed: PAD and SOS (never outputs), EOS before min_length,
//      UNK when suppressed, a token completing an n-gram that b already contains, and any token
//      of probability 0 (log-prob -inf: it can never be part of a best sequence).
//   3. Select. The sentence keeps its `free = K - #finished` best candidates, ranked by L
//      (ties: earlier beam, then larger token log-prob, then smaller token id). A candidate
//      ending in EOS is finished: it goes to the sentence's finished list, is never extended
//      again, and its slot stays used, so the beam SHRINKS. The others are the next live beams.
//      Only a beam's own `free` best tokens can be among the sentence's `free` best, so we take
//      those per row first: (#beams x free) candidates to sort instead of (#beams x V).
//   4. Reorder. state = state->select(parent row of each new live beam): a parent with two
//      children is duplicated, one with none disappears, and done sentences drop out, so the
//      batch shrinks as sentences finish.
//
// Why shrink rather than refill finished slots (as e.g. fairseq does, keeping K live beams)?
// With K = 1 the first EOS ends the search, exactly like greedy decoding, whatever the options;
// with refilling, K = 1 would go on with the second-best token after the best one ended and
// could return a different, longer sentence. Shrinking also bounds the work: each slot ends
// once, so every sentence yields at most K hypotheses, and each of them was among the K most
// probable prefixes of its length at every step of its life.
//
// When length normalisation is applied. Only where hypotheses of DIFFERENT lengths are
// compared: ranking the finished hypotheses, and the stopping test below. Selection (step 3)
// uses the raw L, because all candidates of one step have the same length n, and dividing all
// of them by the same lp(n) could not change their order. The coverage penalty, too, is only
// added to the final score (as in GNMT): it judges a complete translation.
//
// When a sentence stops:
//   a) no live beam is left (all K slots finished);
//   b) the live beams reached the sentence's length limit M, or none of them has an allowed
//      continuation: the live beams then become candidates too, flagged finished = false, and
//      compete with the finished ones by score;
//   c) early: it has at least nbest finished hypotheses and no live beam can beat the
//      nbest-th best of them any more. A live beam b of length n, log-prob L(b), can only end
//      as some y of length m in [n+1, M] with L(y) <= L(b) and cp(y) <= 0, so
//          score(y) <= L(b) / lp(m) <= max_{n+1 <= m <= M} L(b) / lp(m)
//                                    = max(L(b) / lp(n+1), L(b) / lp(M))   (lp is monotone)
//      which, as L(b) <= 0, is L(b) / lp(M) when lp grows with length (alpha > 0): the beam's
//      log-prob divided by the LARGEST penalty it could still get. We stop when this bound is
//      <= the nbest-th best finished score: nothing left can enter the n-best.
//      The known pitfall is to bound by the beam's CURRENT normalised score L(b) / lp(n). With
//      alpha > 0 a longer continuation is divided by a larger lp and can score higher than
//      that, so the naive rule stops as soon as a few short hypotheses finished and returns the
//      shortest outputs. With length_penalty = none the bound is L(b) itself, which is tight.
//
// Results: finished (plus, after b, unfinished) hypotheses sorted by score, best first, at most
// nbest of them (nbest <= K: a sentence never has more than K hypotheses).
//
// Extras (BeamSearchExtras), off by default. A forced prefix makes its next token the only
// candidate of step 2 until the prefix is consumed (one live beam, no masks). An observer
// (BeamObserver, e.g. the explorer's trace) is told in steps 2-3 each expanded beam's most
// probable tokens with the reason they were masked and each selected candidate, then how the
// sentence stopped, how its hypotheses ended and which were returned.
//
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/decoding/decoding_detail.h"

namespace seqgrad {
namespace {

using namespace decoding_detail;

// ---- beam search bookkeeping -----------------------------------------------------------------

// A live (unfinished) hypothesis of beam search.
struct Beam {
    std::vector<int32_t> tokens;
    double log_prob = 0;
    std::vector<std::vector<float>> attention;  // [len][S_b]
    std::vector<double> coverage;               // [S_b], Σ_t a_ts, only with a coverage penalty
    int32_t observed = 0;                       // the observer's id of this prefix
};

// A possible extension b·v of live beam `beam` (index within its sentence) by `token`.
struct Candidate {
    double log_prob;        // L(b) + log p(v | b, x)
    double token_log_prob;  // log p(v | b, x)
    int32_t beam;
    int32_t token;
};

// The order of selection: higher L first; ties broken so that K = 1 picks exactly the token
// greedy's argmax picks (earlier beam, then larger token log-prob, then smaller id).
bool ranks_before(const Candidate& a, const Candidate& b) {
    if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
    if (a.beam != b.beam) return a.beam < b.beam;
    if (a.token_log_prob != b.token_log_prob) return a.token_log_prob > b.token_log_prob;
    return a.token < b.token;
}

struct SentenceSearch {
    int max_length = 0;                // M
    std::vector<Beam> live;            // its rows of the batch, in order
    std::vector<Hypothesis> finished;  // ended with EOS, in the order they finished
    bool running = true;
    bool live_are_candidates = false;  // stopped by the length limit or a dead end
    const std::vector<int32_t>* forced_prefix = nullptr;  // BeamSearchExtras::forced_prefixes
    std::vector<int32_t> finished_ids;                    // the observer's, of `finished`
};

// The observer of beam search, and which sentence it is told about; calls nothing when null.
struct Observed {
    BeamObserver* observer = nullptr;
    size_t sentence = 0;
    explicit operator bool() const { return observer != nullptr; }
    BeamObserver* operator->() const { return observer; }
};

// Inserts `c` into `best` (sorted by ranks_before) if it is among the `limit` best so far.
void keep_if_among_best(const Candidate& c, size_t limit, std::vector<Candidate>& best) {
    if (limit == 0 || (best.size() == limit && !ranks_before(c, best.back()))) return;
    best.insert(std::upper_bound(best.begin(), best.end(), c, ranks_before), c);
    if (best.size() > limit) best.pop_back();
}

// A token of one row and its log-probability.
struct ScoredToken {
    real log_prob;
    int32_t token;
};

// The `limit` best allowed tokens of one row of log-probs [V], best first: larger log-prob
// first, smaller id on ties. This is the order ranks_before gives the candidates of ONE beam:
// they all add the same L(b), and adding the same double to two floats keeps their order
// (where rounding makes two sums equal, ranks_before falls back to the token log-prob, then to
// the id). So selecting per row on the float log-probs gives exactly the candidates the full
// comparison would, while costing one comparison per token: once `limit` tokens are kept, a
// token must be strictly above the worst of them to enter (an equal one has a larger id, so it
// ranks after). The threshold starts at -inf, which also rejects probability-0 tokens and NaN.
void best_tokens(const real* row, int64_t vocab, size_t limit, const std::vector<char>& is_banned,
                 std::vector<ScoredToken>& top) {
    top.clear();
    if (limit == 0) return;
    real threshold = -std::numeric_limits<real>::infinity();
    // Token v has x > threshold: keep it unless banned (the rare, slow path).
    auto insert = [&](int32_t v, real x) {
        if (is_banned[size_t(v)]) return;
        // after every kept token of log-prob >= x (those rank first: larger, or equal with a
        // smaller id)
        auto at = std::find_if(top.begin(), top.end(),
                               [x](const ScoredToken& t) { return t.log_prob < x; });
        top.insert(at, {x, v});
        if (top.size() > limit) top.pop_back();
        if (top.size() == limit) threshold = top.back().log_prob;
    };
    auto consider = [&](int32_t v) {
        if (row[v] > threshold) insert(v, row[v]);
    };
    // Blocks of 64 tokens are first tested at once, by their max over 8 independent lanes (the
    // compiler turns each lane update into one vector max; NaN never wins a comparison): after
    // the first few hundred tokens almost no block has a token above the threshold, so the
    // scan costs about one instruction per 8 tokens.
    constexpr int32_t kBlock = 64, kLanes = 8;
    int32_t v = 0;
    for (; v + kBlock <= int32_t(vocab); v += kBlock) {
        real lane_max[kLanes];
        for (int32_t i = 0; i < kLanes; ++i) lane_max[i] = -std::numeric_limits<real>::infinity();
        for (int32_t j = 0; j < kBlock; j += kLanes)
            for (int32_t i = 0; i < kLanes; ++i)
                lane_max[i] = row[v + j + i] > lane_max[i] ? row[v + j + i] : lane_max[i];
        bool any_above = false;
        for (int32_t i = 0; i < kLanes; ++i) any_above |= lane_max[i] > threshold;
        if (any_above)
            for (int32_t i = 0; i < kBlock; ++i) consider(v + i);
    }
    for (; v < int32_t(vocab); ++v) consider(v);
}

// ---- what the observer is told (only with BeamSearchExtras::observer) -----------------------

// Why token v may not follow `beam` (it is in `banned`), or not_forced when a forced prefix
// (`forced` >= 0) chose another token.
TokenMask mask_of(int32_t v, const Beam& beam, const std::vector<int32_t>& banned, int32_t forced,
                  const DecodeOptions& options) {
    if (forced >= 0) return v == forced ? TokenMask::none : TokenMask::not_forced;
    if (std::find(banned.begin(), banned.end(), v) == banned.end()) return TokenMask::none;
    if (v == Vocab::EOS && int64_t(beam.tokens.size()) < options.min_length)
        return TokenMask::below_min_length;
    if (v == Vocab::UNK && options.suppress_unk) return TokenMask::unk_suppressed;
    return TokenMask::ngram_blocked;
}

// Tells the observer the alternatives() (or `free`, if more) most probable tokens of the beam's
// row, masked or not. `is_banned` is all zeros on entry and exit.
void observe_expansion(const Observed& observed, const Beam& beam, const real* row, int64_t vocab,
                       size_t free, const std::vector<int32_t>& banned, int32_t forced,
                       const DecodeOptions& options, std::vector<char>& is_banned) {
    std::vector<ScoredToken> top;
    is_banned[Vocab::PAD] = is_banned[Vocab::SOS] = 1;  // never outputs: not worth telling
    best_tokens(row, vocab, std::max(free, size_t(std::max(observed->alternatives(), 0))),
                is_banned, top);
    is_banned[Vocab::PAD] = is_banned[Vocab::SOS] = 0;
    std::vector<SeenToken> seen;
    for (const ScoredToken& t : top)
        seen.push_back({t.token, t.log_prob, mask_of(t.token, beam, banned, forced, options)});
    observed->expanded(observed.sentence, beam.observed, seen);
}

// ---- selection -------------------------------------------------------------------------------

// The `free` best allowed candidates over all live beams of one sentence. `first_row` is the
// batch row of its first live beam. Tells the observer, if any, each beam's expansion.
std::vector<Candidate> best_candidates(const SentenceSearch& sentence, const StepOutput& out,
                                       int64_t first_row, size_t free, const DecodeOptions& options,
                                       const Observed& observed) {
    std::vector<Candidate> best;
    std::vector<ScoredToken> of_beam;
    std::vector<int32_t> banned;
    std::vector<char> is_banned(size_t(out.vocab), 0);
    for (size_t k = 0; k < sentence.live.size(); ++k) {
        const Beam& beam = sentence.live[k];
        const real* row = out.log_prob_row(first_row + int64_t(k));
        const std::vector<int32_t>* prefix = sentence.forced_prefix;
        const int32_t forced =
            prefix && beam.tokens.size() < prefix->size() ? (*prefix)[beam.tokens.size()] : -1;
        if (forced >= 0) {  // the forced token is the only candidate
            banned.clear();
            if (forced < out.vocab && row[forced] > -std::numeric_limits<real>::infinity())
                keep_if_among_best({beam.log_prob + row[forced], row[forced], int32_t(k), forced},
                                   free, best);
        } else {
            collect_banned_tokens(beam.tokens, options, banned);
            for (int32_t v : banned)
                if (v < out.vocab) is_banned[size_t(v)] = 1;
            best_tokens(row, out.vocab, free, is_banned, of_beam);
            for (int32_t v : banned)
                if (v < out.vocab) is_banned[size_t(v)] = 0;
            for (const ScoredToken& t : of_beam) {
                const double token_log_prob = t.log_prob;
                keep_if_among_best(
                    {beam.log_prob + token_log_prob, token_log_prob, int32_t(k), t.token}, free,
                    best);
            }
        }
        if (observed)
            observe_expansion(observed, beam, row, out.vocab, free, banned, forced, options,
                              is_banned);
    }
    return best;
}

// The best score any continuation of `beam` (length n) can reach (stopping rule c, see top).
double best_reachable_score(const Beam& beam, int max_length, const DecodeOptions& options) {
    const int64_t n = int64_t(beam.tokens.size());
    return std::max(beam.log_prob / length_penalty(n + 1, options),
                    beam.log_prob / length_penalty(max_length, options));
}

// Stopping rule c: >= nbest finished, and no live beam can beat the nbest-th best of them.
bool cannot_improve(const SentenceSearch& sentence, const DecodeOptions& options) {
    const size_t nbest = size_t(options.nbest);
    if (sentence.finished.size() < nbest) return false;
    std::vector<double> scores;
    for (const Hypothesis& h : sentence.finished) scores.push_back(h.score);
    std::nth_element(scores.begin(), scores.begin() + std::ptrdiff_t(nbest - 1), scores.end(),
                     std::greater<double>());
    const double worst_kept = scores[nbest - 1];
    for (const Beam& beam : sentence.live)
        if (best_reachable_score(beam, sentence.max_length, options) > worst_kept) return false;
    return true;
}

Hypothesis to_hypothesis(Beam beam, bool finished, const DecodeOptions& options) {
    Hypothesis h;
    h.score = hypothesis_score(beam.log_prob, beam.tokens.size(), beam.coverage, options);
    h.tokens = std::move(beam.tokens);
    h.log_prob = beam.log_prob;
    h.finished = finished;
    h.attention = std::move(beam.attention);
    return h;
}

// The observer's ids of the live beams.
std::vector<int32_t> observed_ids(const std::vector<Beam>& live) {
    std::vector<int32_t> ids;
    for (const Beam& beam : live) ids.push_back(beam.observed);
    return ids;
}

// The sentence stops for `reason` (rules a-c at the top); with `live_are_candidates` its live
// beams compete, unfinished, with the finished hypotheses.
void stop(SentenceSearch& sentence, StopReason reason, bool live_are_candidates,
          const Observed& observed) {
    sentence.running = false;
    sentence.live_are_candidates = live_are_candidates;
    if (observed) observed->stopped(observed.sentence, reason, observed_ids(sentence.live));
}

// Steps 2-3 for one sentence: replaces its live beams by the selected candidates, moves the
// ones ending in EOS to `finished`, and appends each new live beam's parent row to
// `parent_rows`. Then decides whether the sentence stops.
void advance_sentence(SentenceSearch& sentence, const StepOutput& out, int64_t first_row,
                      int64_t attention_cols, const DecodeOptions& options,
                      const Observed& observed, std::vector<int32_t>& parent_rows) {
    const size_t free = size_t(options.beam_size) - sentence.finished.size();
    const std::vector<Candidate> selected =
        best_candidates(sentence, out, first_row, free, options, observed);
    if (selected.empty())  // dead end: no live beam has an allowed continuation (rule b)
        return stop(sentence, StopReason::dead_end, true, observed);
    if (observed) observed->selecting(observed.sentence);
    // A child starts from its parent's tokens, attention and coverage. The last child of each
    // parent takes them over (a move: the parent is not needed after this step); only a
    // parent's other children copy them.
    std::vector<int> children_left(sentence.live.size(), 0);
    for (const Candidate& c : selected) ++children_left[size_t(c.beam)];
    std::vector<Beam> next_live;
    std::vector<int32_t> next_parent_rows;
    for (const Candidate& c : selected) {
        Beam& parent = sentence.live[size_t(c.beam)];
        const int64_t parent_row = first_row + c.beam;
        Beam child = --children_left[size_t(c.beam)] == 0 ? std::move(parent) : parent;
        child.tokens.push_back(c.token);
        child.log_prob = c.log_prob;
        if (observed)  // child.observed is still its parent's id
            child.observed = observed->selected(observed.sentence, child.observed, c.beam, c.token,
                                                c.token_log_prob, c.log_prob);
        if (out.attention)
            record_attention(out.attention_row(parent_row), attention_cols, options,
                             child.attention, child.coverage);
        if (c.token == Vocab::EOS) {
            sentence.finished_ids.push_back(child.observed);
            sentence.finished.push_back(to_hypothesis(std::move(child), true, options));
            if (observed)
                observed->ended(observed.sentence, sentence.finished_ids.back(),
                                sentence.finished.back());
        } else {
            next_live.push_back(std::move(child));
            next_parent_rows.push_back(int32_t(parent_row));
        }
    }
    sentence.live = std::move(next_live);

    if (sentence.live.empty())  // rule a
        stop(sentence, StopReason::all_finished, false, observed);
    else if (int64_t(sentence.live.front().tokens.size()) >= sentence.max_length)  // rule b
        stop(sentence, StopReason::max_length, true, observed);
    else if (cannot_improve(sentence, options))  // rule c
        stop(sentence, StopReason::cannot_improve, false, observed);
    else
        parent_rows.insert(parent_rows.end(), next_parent_rows.begin(), next_parent_rows.end());
}

// The n-best of one stopped sentence, best first (stable: earlier finished first on ties); the
// live beams compete too, unfinished, when the length limit or a dead end stopped it.
std::vector<Hypothesis> nbest_of(SentenceSearch& sentence, const DecodeOptions& options,
                                 const Observed& observed) {
    std::vector<Hypothesis> candidates = std::move(sentence.finished);
    std::vector<int32_t> ids = std::move(sentence.finished_ids);
    if (sentence.live_are_candidates)
        for (Beam& beam : sentence.live) {
            ids.push_back(beam.observed);
            candidates.push_back(to_hypothesis(std::move(beam), false, options));
            if (observed) observed->ended(observed.sentence, ids.back(), candidates.back());
        }
    std::vector<size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return candidates[x].score > candidates[y].score; });
    if (order.size() > size_t(options.nbest)) order.resize(size_t(options.nbest));
    std::vector<Hypothesis> nbest;
    std::vector<int32_t> nbest_ids;
    for (size_t i : order) {
        nbest.push_back(std::move(candidates[i]));
        nbest_ids.push_back(ids[i]);
    }
    if (observed) observed->ranked(observed.sentence, nbest_ids);
    return nbest;
}

// One search per sentence of `initial`: its length limit, its empty prefix, its forced prefix.
std::vector<SentenceSearch> start_sentences(int64_t num_sentences, const DecodeOptions& options,
                                            const std::vector<int32_t>& source_lengths,
                                            const BeamSearchExtras& extras, const char* who) {
    if (!extras.forced_prefixes.empty() && int64_t(extras.forced_prefixes.size()) != num_sentences)
        throw Error(fmt::format("{}: {} forced prefixes for {} sentences", who,
                                extras.forced_prefixes.size(), num_sentences));
    std::vector<SentenceSearch> sentences(static_cast<size_t>(num_sentences));
    for (size_t b = 0; b < sentences.size(); ++b) {
        SentenceSearch& sentence = sentences[b];
        sentence.max_length = sentence_max_length(options, source_lengths, b);
        sentence.live.emplace_back();  // the empty prefix, row b of `initial`
        if (!extras.forced_prefixes.empty() && !extras.forced_prefixes[b].empty())
            sentence.forced_prefix = &extras.forced_prefixes[b];
        if (extras.observer) extras.observer->started(b, sentence.max_length, options);
    }
    return sentences;
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(const StepModel& model,
                                                 std::unique_ptr<DecoderState> initial,
                                                 const DecodeOptions& options,
                                                 const std::vector<int32_t>& source_lengths) {
    return beam_search(model, std::move(initial), options, source_lengths, BeamSearchExtras{});
}

std::vector<std::vector<Hypothesis>> beam_search(const StepModel& model,
                                                 std::unique_ptr<DecoderState> initial,
                                                 const DecodeOptions& options,
                                                 const std::vector<int32_t>& source_lengths,
                                                 const BeamSearchExtras& extras) {
    const char* who = "beam_search";
    NoGradGuard no_grad;
    if (!initial) throw Error(fmt::format("{}: no decoder state", who));
    check_options(options, *initial, source_lengths, who);
    std::vector<SentenceSearch> sentences =
        start_sentences(initial->rows(), options, source_lengths, extras, who);

    std::unique_ptr<DecoderState> state = std::move(initial);
    std::vector<int32_t> previous_tokens, parent_rows;
    while (true) {
        // 1. The batch: live beams of the running sentences, in sentence order.
        previous_tokens.clear();
        for (const SentenceSearch& sentence : sentences)
            if (sentence.running)
                for (const Beam& beam : sentence.live)
                    previous_tokens.push_back(previous_token(beam.tokens));
        if (previous_tokens.empty()) break;
        const int64_t rows = int64_t(previous_tokens.size());
        const StepOutput out(model.step(previous_tokens, *state), rows, model.vocab_size(), who);
        if (options.coverage_penalty > 0 && !out.attention)
            throw Error(
                fmt::format("{}: coverage_penalty needs a model that returns attention", who));

        // 2-3. Each sentence expands and selects; parent_rows collects the rows to keep.
        parent_rows.clear();
        int64_t first_row = 0;
        for (size_t b = 0; b < sentences.size(); ++b) {
            SentenceSearch& sentence = sentences[b];
            if (!sentence.running) continue;
            const int64_t beams = int64_t(sentence.live.size());
            const int64_t attention_cols =
                out.attention ? attention_columns(out, source_lengths, b, who) : 0;
            advance_sentence(sentence, out, first_row, attention_cols, options,
                             Observed{extras.observer, b}, parent_rows);
            first_row += beams;
        }
        // 4. Reorder / duplicate / drop rows for the next step.
        if (parent_rows.empty()) break;
        if (!is_identity(parent_rows, rows)) state = state->select(parent_rows);
    }

    std::vector<std::vector<Hypothesis>> results;
    for (size_t b = 0; b < sentences.size(); ++b)
        results.push_back(nbest_of(sentences[b], options, Observed{extras.observer, b}));
    return results;
}

}  // namespace seqgrad
