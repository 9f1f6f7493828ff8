// Greedy decoding and beam search, against two toy StepModels:
//   RandomStepModel  a tiny random recurrent "decoder" with attention, built from engine ops
//                    (embedding, matmul, tanh, log_softmax, masked softmax): realistic, random.
//   TableStepModel   fixed probability tables per prefix, so the right answer is known by hand.
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "seqgrad/autograd/kernels/switches.h"
#include "seqgrad/models/decoding/decoding.h"
#include "step_models.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::random_tensor;

namespace {

constexpr int32_t PAD = Vocab::PAD;
constexpr int32_t SOS = Vocab::SOS;
constexpr int32_t EOS = Vocab::EOS;
constexpr int32_t UNK = Vocab::UNK;
constexpr double kInf = std::numeric_limits<double>::infinity();

using seqgrad::testing::RandomStepModel;
using seqgrad::testing::TableStepModel;
constexpr int32_t a = TableStepModel::a, b = TableStepModel::b, c = TableStepModel::c,
                  d = TableStepModel::d;

using Tokens = std::vector<int32_t>;

// Identical hypotheses. `exact_scores = false` allows 1e-12 relative error in log_prob and score:
// OpenBLAS's dgemm may round differently for a batch of 1 row and of many rows, so the model's
// log-probs themselves can differ in the last bit between batch sizes.
void check_same(const Hypothesis& x, const Hypothesis& y, bool exact_scores = true) {
    CHECK(x.tokens == y.tokens);
    if (exact_scores) {
        CHECK(x.log_prob == y.log_prob);
        CHECK(x.score == y.score);
    } else {
        CHECK(x.log_prob == doctest::Approx(y.log_prob).epsilon(1e-12));
        CHECK(x.score == doctest::Approx(y.score).epsilon(1e-12));
    }
    CHECK(x.finished == y.finished);
    if (exact_scores) {
        CHECK(x.attention == y.attention);
        return;
    }
    REQUIRE(x.attention.size() == y.attention.size());
    for (size_t t = 0; t < x.attention.size(); ++t) {
        REQUIRE(x.attention[t].size() == y.attention[t].size());
        for (size_t s = 0; s < x.attention[t].size(); ++s)
            CHECK(x.attention[t][s] == doctest::Approx(y.attention[t][s]).epsilon(1e-6));
    }
}

bool has_repeated_ngram(const Tokens& tokens, size_t n) {
    std::vector<Tokens> seen;
    for (size_t i = 0; i + n <= tokens.size(); ++i) {
        Tokens gram(tokens.begin() + std::ptrdiff_t(i), tokens.begin() + std::ptrdiff_t(i + n));
        if (std::find(seen.begin(), seen.end(), gram) != seen.end()) return true;
        seen.push_back(gram);
    }
    return false;
}

// Re-runs the model one row at a time along `h.tokens` (teacher forcing) and checks that the
// hypothesis' log-prob and attention are those of that path: beam search's reordering of rows
// (DecoderState::select with parent indices) kept every hypothesis with its own state.
void check_replay(const RandomStepModel& model, std::unique_ptr<DecoderState> state, const Hypothesis& h,
                  int32_t source_length) {
    NoGradGuard no_grad;
    double log_prob = 0;
    int32_t previous = SOS;
    for (size_t t = 0; t < h.tokens.size(); ++t) {
        StepResult r = model.step({previous}, *state);
        log_prob += r.log_probs.data()[h.tokens[t]];
        REQUIRE(h.attention.size() == h.tokens.size());
        REQUIRE(h.attention[t].size() == size_t(source_length));
        for (int32_t s = 0; s < source_length; ++s)
            CHECK(h.attention[t][size_t(s)] == float(r.attention.data()[s]));
        previous = h.tokens[t];
    }
    CHECK(h.log_prob == doctest::Approx(log_prob).epsilon(1e-12));
}

const std::vector<int32_t> kSentenceIds = {0, 1, 2, 3, 4, 5, 6};
const std::vector<int32_t> kSourceLengths = {3, 6, 1, 5, 2, 4, 6};

}  // namespace

TEST_CASE("beam width 1 gives exactly the greedy output, whatever the options") {
    RandomStepModel model(7);
    std::vector<DecodeOptions> settings(7);
    settings[0].length_penalty = DecodeOptions::none;
    settings[1].length_penalty = DecodeOptions::gnmt;
    settings[1].alpha = 1.2;
    settings[2].min_length = 3;
    settings[3].no_repeat_ngram_size = 2;
    settings[4].suppress_unk = true;
    settings[5].coverage_penalty = 0.4;
    settings[6].max_length_factor = 1.5;
    settings[6].max_length_offset = 1;
    for (size_t i = 0; i < settings.size(); ++i) {
        CAPTURE(i);
        const DecodeOptions& options = settings[i];
        auto greedy = greedy_decode(model, model.initial_state(kSentenceIds, kSourceLengths),
                                    options, kSourceLengths);
        auto beam = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                                kSourceLengths);
        REQUIRE(greedy.size() == kSentenceIds.size());
        REQUIRE(beam.size() == kSentenceIds.size());
        for (size_t s = 0; s < greedy.size(); ++s) {
            REQUIRE(beam[s].size() == 1);
            check_same(beam[s][0], greedy[s]);
            check_replay(model, model.initial_state({kSentenceIds[s]}, {kSourceLengths[s]}),
                         greedy[s], kSourceLengths[s]);
        }
    }
}

TEST_CASE("beam width 1 breaks ties like greedy: the smaller token id wins") {
    // p(· | <sos>) a 0.5 b 0.5;  p(· | a) c 0.5 d 0.5;  then EOS.
    TableStepModel model;
    model.set({}, {{a, 0.5}, {b, 0.5}});
    model.set({a}, {{c, 0.5}, {d, 0.5}});
    DecodeOptions options;
    auto greedy = greedy_decode(model, model.initial_state(2), options);
    auto beam = beam_search(model, model.initial_state(2), options);
    for (size_t s = 0; s < 2; ++s) {
        CHECK(greedy[s].tokens == Tokens{a, c, EOS});
        check_same(beam[s][0], greedy[s]);
    }
}

TEST_CASE("beam search finds the most probable sequence where greedy does not") {
    // Tokens a, b. Probabilities (everything not listed is 0):
    //   p(· | <sos>)   a 0.6   b 0.4
    //   p(· | a)       EOS 0.4 a 0.3 b 0.3
    //   p(· | b)       EOS 0.9 a 0.05 b 0.05
    // Greedy: a (0.6), then EOS (0.4)      -> "a EOS", p = 0.6 * 0.4 = 0.24.
    // Beam K=2 keeps a and b; at step 2 the candidates are b·EOS 0.36, a·EOS 0.24, a·a 0.18,
    // a·b 0.18, b·a 0.02, b·b 0.02: the best two both end, so the answer is "b EOS", p = 0.36.
    TableStepModel model;
    model.set({}, {{a, 0.6}, {b, 0.4}});
    model.set({a}, {{EOS, 0.4}, {a, 0.3}, {b, 0.3}});
    model.set({b}, {{EOS, 0.9}, {a, 0.05}, {b, 0.05}});
    DecodeOptions options;
    options.length_penalty = DecodeOptions::none;

    auto greedy = greedy_decode(model, model.initial_state(1), options);
    CHECK(greedy[0].tokens == Tokens{a, EOS});
    CHECK(greedy[0].log_prob == doctest::Approx(std::log(0.24)));

    options.beam_size = options.nbest = 2;
    auto beam = beam_search(model, model.initial_state(1), options);
    REQUIRE(beam[0].size() == 2);
    CHECK(beam[0][0].tokens == Tokens{b, EOS});
    CHECK(beam[0][0].log_prob == doctest::Approx(std::log(0.36)));
    CHECK(beam[0][0].finished);
    CHECK(beam[0][1].tokens == Tokens{a, EOS});
    CHECK(beam[0][1].log_prob == doctest::Approx(std::log(0.24)));
    CHECK(beam[0][0].attention.empty());  // the table model returns no attention
    CHECK(model.calls == 2 + 2);          // greedy 2 steps, beam 2 steps
}

namespace {
// A short and a long hypothesis:
//   p(· | <sos>) a 0.55  b 0.45;   p(· | a) EOS 0.8  a 0.1  b 0.1
//   p(· | b) b 0.9  EOS 0.05  a 0.05;   p(· | b b) b 0.9  EOS 0.05  a 0.05
//   p(· | b b b) EOS 0.9  a 0.1
// short = "a EOS":       L = log(0.55 * 0.8)            = log 0.44   = -0.8210, len 2
// long  = "b b b EOS":   L = log(0.45 * 0.9 * 0.9 * 0.9) = log 0.32805 = -1.1145, len 4
// With K = 2: step 2 keeps a·EOS (0.44, finished) and b·b (0.405); b·b then has the only
// free slot and becomes b b b (0.3645), then b b b EOS (0.328).
TableStepModel short_and_long_model() {
    TableStepModel model;
    model.set({}, {{a, 0.55}, {b, 0.45}});
    model.set({a}, {{EOS, 0.8}, {a, 0.1}, {b, 0.1}});
    model.set({b}, {{b, 0.9}, {EOS, 0.05}, {a, 0.05}});
    model.set({b, b}, {{b, 0.9}, {EOS, 0.05}, {a, 0.05}});
    model.set({b, b, b}, {{EOS, 0.9}, {a, 0.1}});
    return model;
}
const double kShortLogProb = std::log(0.55) + std::log(0.8);
const double kLongLogProb = std::log(0.45) + 3 * std::log(0.9);
}  // namespace

TEST_CASE("alpha changes the ranking of a short and a long hypothesis as the formula says") {
    // average: short wins iff L_s / 2^α > L_l / 4^α  <=>  2^α < L_l / L_s = 1.3575
    //          <=> α < 0.441.   α = 0.2: -0.8210/1.1487 = -0.7147 vs -1.1145/1.3195 = -0.8446
    //                           α = 0.6: -0.8210/1.5157 = -0.5417 vs -1.1145/2.2974 = -0.4851
    // gnmt:    lp(2) = (7/6)^α, lp(4) = (9/6)^α; short wins iff (9/7)^α < 1.3575 <=> α < 1.215.
    //                           α = 1:   -0.8210/1.1667 = -0.7037 vs -1.1145/1.5    = -0.7430
    //                           α = 2:   -0.8210/1.3611 = -0.6032 vs -1.1145/2.25   = -0.4953
    struct Case {
        DecodeOptions::LengthPenalty penalty;
        double alpha, lp_short, lp_long;
        bool short_first;
    };
    const std::vector<Case> cases = {
        {DecodeOptions::none, 0.6, 1, 1, true},
        {DecodeOptions::average, 0.2, std::pow(2, 0.2), std::pow(4, 0.2), true},
        {DecodeOptions::average, 0.6, std::pow(2, 0.6), std::pow(4, 0.6), false},
        {DecodeOptions::gnmt, 1.0, 7.0 / 6, 9.0 / 6, true},
        {DecodeOptions::gnmt, 2.0, std::pow(7.0 / 6, 2), std::pow(9.0 / 6, 2), false},
    };
    for (const Case& test : cases) {
        CAPTURE(test.penalty);
        CAPTURE(test.alpha);
        TableStepModel model = short_and_long_model();
        DecodeOptions options;
        options.beam_size = options.nbest = 2;
        options.length_penalty = test.penalty;
        options.alpha = test.alpha;
        auto result = beam_search(model, model.initial_state(1), options)[0];
        REQUIRE(result.size() == 2);
        const Hypothesis& short_one = test.short_first ? result[0] : result[1];
        const Hypothesis& long_one = test.short_first ? result[1] : result[0];
        CHECK(short_one.tokens == Tokens{a, EOS});
        CHECK(long_one.tokens == Tokens{b, b, b, EOS});
        CHECK(short_one.score == doctest::Approx(kShortLogProb / test.lp_short).epsilon(1e-12));
        CHECK(long_one.score == doctest::Approx(kLongLogProb / test.lp_long).epsilon(1e-12));
        CHECK(short_one.log_prob == doctest::Approx(kShortLogProb).epsilon(1e-12));
        CHECK(long_one.log_prob == doctest::Approx(kLongLogProb).epsilon(1e-12));
    }
}

TEST_CASE("the early-stopping rule does not return the shortest hypothesis") {
    // nbest = 1, K = 2, average, α = 0.6, max_length 10. After step 2, "a EOS" is finished with
    // score -0.8210 / 2^0.6 = -0.5417 and "b b" is live with L = log 0.405 = -0.9039.
    //   naive bound, its current score:   -0.9039 / 2^0.6  = -0.5964 < -0.5417 -> would stop
    //                                     and return "a EOS".
    //   correct bound, largest penalty:   -0.9039 / 10^0.6 = -0.2271 > -0.5417 -> continue;
    // "b b b EOS" then finishes with -0.4851 > -0.5417 and is the answer.
    TableStepModel model = short_and_long_model();
    DecodeOptions options;
    options.beam_size = 2;
    options.length_penalty = DecodeOptions::average;
    options.alpha = 0.6;
    options.max_length = 10;
    auto result = beam_search(model, model.initial_state(1), options)[0];
    REQUIRE(result.size() == 1);
    CHECK(result[0].tokens == Tokens{b, b, b, EOS});
    CHECK(result[0].score == doctest::Approx(kLongLogProb / std::pow(4, 0.6)).epsilon(1e-12));
}

TEST_CASE("search stops as soon as no live beam can enter the n-best") {
    // length_penalty none, K = 2, nbest 1:
    //   p(· | <sos>) a 0.9 b 0.1;  p(· | a) EOS 0.9 ...;  p(· | b ...) b 0.99 (forever)
    // After step 2, "a EOS" has L = log 0.81 and the live "b b" has L = log 0.099 < log 0.81:
    // log-probs only decrease, so nothing can beat "a EOS": stop after 2 steps, not 10.
    TableStepModel model({{b, 0.99}, {EOS, 0.01}});
    model.set({}, {{a, 0.9}, {b, 0.1}});
    model.set({a}, {{EOS, 0.9}, {b, 0.1}});
    DecodeOptions options;
    options.beam_size = 2;
    options.length_penalty = DecodeOptions::none;
    options.max_length = 10;
    auto result = beam_search(model, model.initial_state(1), options)[0];
    REQUIRE(result.size() == 1);
    CHECK(result[0].tokens == Tokens{a, EOS});
    CHECK(model.calls == 2);

    // With nbest 2 the live beam can still enter the 2-best, so the search goes on.
    TableStepModel model2({{b, 0.99}, {EOS, 0.01}});
    model2.set({}, {{a, 0.9}, {b, 0.1}});
    model2.set({a}, {{EOS, 0.9}, {b, 0.1}});
    options.nbest = 2;
    result = beam_search(model2, model2.initial_state(1), options)[0];
    REQUIRE(result.size() == 2);
    CHECK(result[0].tokens == Tokens{a, EOS});
    CHECK(result[1].tokens.size() > 2);
    CHECK(model2.calls > 2);
}

TEST_CASE("hypotheses that ended in EOS are never extended") {
    RandomStepModel model(11, /*eos_bias=*/1.0);
    DecodeOptions options;
    options.beam_size = 4;
    options.nbest = 4;
    auto results = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                               kSourceLengths);
    CHECK(model.bad_previous_tokens == 0);
    CHECK(model.max_rows <= int64_t(kSentenceIds.size()) * options.beam_size);
    int finished = 0;
    for (const auto& nbest : results)
        for (const Hypothesis& h : nbest) {
            finished += h.finished;
            // EOS only as the last token, and exactly when finished
            auto eos = std::find(h.tokens.begin(), h.tokens.end(), EOS);
            CHECK((eos == h.tokens.end() || eos == h.tokens.end() - 1));
            CHECK(h.finished == (eos != h.tokens.end()));
        }
    CHECK(finished > 0);

    model.bad_previous_tokens = 0;
    greedy_decode(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                  kSourceLengths);
    CHECK(model.bad_previous_tokens == 0);

    // The table model sees prefixes: none of them contains EOS.
    TableStepModel table = short_and_long_model();
    options.beam_size = options.nbest = 2;
    beam_search(table, table.initial_state(3), options);
    CHECK(table.extended_after_eos == 0);
    CHECK(!table.extended.empty());
}

TEST_CASE("n-best lists are sorted by score, scores follow the formula, paths replay") {
    RandomStepModel model(3);
    DecodeOptions options;
    options.beam_size = 5;
    options.nbest = 5;
    options.length_penalty = DecodeOptions::gnmt;
    options.alpha = 0.8;
    options.max_length = 12;
    auto results = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                               kSourceLengths);
    REQUIRE(results.size() == kSentenceIds.size());
    for (size_t s = 0; s < results.size(); ++s) {
        CAPTURE(s);
        CHECK(results[s].size() == 5);  // V - {PAD, SOS} = 8 >= K tokens are always allowed
        for (size_t i = 0; i < results[s].size(); ++i) {
            const Hypothesis& h = results[s][i];
            if (i > 0) CHECK(results[s][i - 1].score >= h.score);
            const double lp = std::pow((5.0 + double(h.tokens.size())) / 6.0, 0.8);
            CHECK(h.score == doctest::Approx(h.log_prob / lp).epsilon(1e-12));
            CHECK(std::isfinite(h.score));
            CHECK((h.finished || h.tokens.size() == 12));
            check_replay(model, model.initial_state({kSentenceIds[s]}, {kSourceLengths[s]}), h,
                         kSourceLengths[s]);
        }
        // distinct hypotheses
        for (size_t i = 0; i < results[s].size(); ++i)
            for (size_t j = i + 1; j < results[s].size(); ++j)
                CHECK(results[s][i].tokens != results[s][j].tokens);
    }
}

TEST_CASE("no NaN when all beams finish at once, with -inf log-probs around") {
    // p(· | <sos>) a 0.5 b 0.3 c 0.2, all else 0 (-inf); after any token, EOS with probability 1
    // (every other log-prob -inf). K = 3: the three beams end at the same step, in every
    // sentence, so the whole batch empties at once.
    TableStepModel model;
    model.set({}, {{a, 0.5}, {b, 0.3}, {c, 0.2}});
    for (auto penalty : {DecodeOptions::none, DecodeOptions::average, DecodeOptions::gnmt}) {
        DecodeOptions options;
        options.beam_size = options.nbest = 3;
        options.length_penalty = penalty;
        auto results = beam_search(model, model.initial_state(2), options);
        REQUIRE(results.size() == 2);
        for (const auto& nbest : results) {
            REQUIRE(nbest.size() == 3);
            const double lp = length_penalty(2, options);
            const std::vector<std::pair<int32_t, double>> expected = {{a, 0.5}, {b, 0.3}, {c, 0.2}};
            for (size_t i = 0; i < 3; ++i) {
                CHECK(nbest[i].tokens == Tokens{expected[i].first, EOS});
                CHECK(nbest[i].finished);
                CHECK(nbest[i].log_prob == doctest::Approx(std::log(expected[i].second)));
                CHECK(nbest[i].score == doctest::Approx(std::log(expected[i].second) / lp));
                CHECK(std::isfinite(nbest[i].score));
            }
        }
    }
    // K larger than the number of possible tokens: only 3 hypotheses exist.
    DecodeOptions options;
    options.beam_size = options.nbest = 5;
    auto results = beam_search(model, model.initial_state(1), options);
    REQUIRE(results[0].size() == 3);
    for (const Hypothesis& h : results[0]) CHECK(std::isfinite(h.score));
}

TEST_CASE("a sentence's output does not depend on which sentences share its batch") {
    RandomStepModel model(5, /*eos_bias=*/0.8);
    DecodeOptions options;
    options.beam_size = 3;
    options.nbest = 3;
    options.max_length = 15;
    options.coverage_penalty = 0.2;
    auto together = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                                kSourceLengths);
    auto greedy_together = greedy_decode(model, model.initial_state(kSentenceIds, kSourceLengths),
                                         options, kSourceLengths);
    std::set<size_t> lengths;
    for (size_t s = 0; s < kSentenceIds.size(); ++s) {
        CAPTURE(s);
        auto alone = beam_search(model, model.initial_state({kSentenceIds[s]}, {kSourceLengths[s]}),
                                 options, {kSourceLengths[s]});
        REQUIRE(alone[0].size() == together[s].size());
        for (size_t i = 0; i < alone[0].size(); ++i) check_same(alone[0][i], together[s][i], false);
        auto greedy_alone =
            greedy_decode(model, model.initial_state({kSentenceIds[s]}, {kSourceLengths[s]}),
                          options, {kSourceLengths[s]});
        check_same(greedy_alone[0], greedy_together[s], false);
        lengths.insert(together[s][0].tokens.size());
        lengths.insert(greedy_together[s].tokens.size());
    }
    CHECK(lengths.size() > 1);  // sentences finished at different steps: the batch shrank

    // Another batch mixing the same sentences in another order, with a repeat.
    const std::vector<int32_t> ids = {4, 0, 4, 2}, source_lengths = {2, 3, 2, 1};
    auto mixed =
        beam_search(model, model.initial_state(ids, source_lengths), options, source_lengths);
    for (size_t i = 0; i < ids.size(); ++i)
        for (size_t j = 0; j < mixed[i].size(); ++j)
            check_same(mixed[i][j], together[size_t(ids[i])][j], false);
}

// Decoding reads each step's log-probs and attention through raw pointers: the step's result
// must stay alive while they are read. With the buffer pool on, a freed buffer keeps its values
// until it is reused, which hid a read after free; with the pool off the memory goes back to the
// allocator (and under AddressSanitizer any such read is reported).
TEST_CASE("decoding gives the same output with the buffer pool off: no read after free") {
    RandomStepModel model(5, /*eos_bias=*/0.8);
    DecodeOptions options;
    options.beam_size = 3;
    options.nbest = 3;
    options.max_length = 15;
    auto decode = [&] {
        return std::make_pair(
            greedy_decode(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                          kSourceLengths),
            beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                        kSourceLengths));
    };
    const auto pooled = decode();
    const Switches saved = switches();
    Switches off = saved;
    off.buffer_pool = false;
    set_switches(off);
    const auto unpooled = decode();
    set_switches(saved);
    for (size_t s = 0; s < kSentenceIds.size(); ++s) {
        CAPTURE(s);
        check_same(pooled.first[s], unpooled.first[s]);
        REQUIRE(pooled.second[s].size() == unpooled.second[s].size());
        for (size_t i = 0; i < pooled.second[s].size(); ++i)
            check_same(pooled.second[s][i], unpooled.second[s][i]);
    }
}

TEST_CASE("min_length masks EOS until a hypothesis is long enough") {
    RandomStepModel model(9, /*eos_bias=*/3.0);  // EOS very likely: short outputs
    DecodeOptions options;
    options.beam_size = 3;
    options.nbest = 3;
    auto shortest = [](const std::vector<std::vector<Hypothesis>>& results) {
        size_t n = 1000;
        for (const auto& nbest : results)
            for (const Hypothesis& h : nbest) n = std::min(n, h.tokens.size());
        return n;
    };
    auto free_run = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                                kSourceLengths);
    CHECK(shortest(free_run) < 4);  // without the option some output is shorter
    options.min_length = 4;
    auto constrained = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths),
                                   options, kSourceLengths);
    CHECK(shortest(constrained) >= 5);  // 4 tokens, then EOS
    for (const Hypothesis& h : greedy_decode(
             model, model.initial_state(kSentenceIds, kSourceLengths), options, kSourceLengths))
        CHECK(h.tokens.size() >= 5);
}

TEST_CASE("no_repeat_ngram_size bans a token that would repeat an n-gram") {
    // Every prefix: a 0.5, b 0.3, EOS 0.2. Greedy says "a a a ..." until max_length.
    // With n = 2: a, a (no bigram yet), then (a,a) exists so a is banned after a -> b; after b,
    // no bigram starts with b -> a; after a, (a,a) and (a,b) exist -> EOS: "a a b a EOS".
    TableStepModel model({{a, 0.5}, {b, 0.3}, {EOS, 0.2}});
    DecodeOptions options;
    options.max_length = 8;
    CHECK(greedy_decode(model, model.initial_state(1), options)[0].tokens == Tokens(8, a));
    options.no_repeat_ngram_size = 2;
    auto greedy = greedy_decode(model, model.initial_state(1), options)[0];
    CHECK(greedy.tokens == Tokens{a, a, b, a, EOS});
    CHECK(greedy.log_prob == doctest::Approx(3 * std::log(0.5) + std::log(0.3) + std::log(0.2)));

    RandomStepModel random(13, /*eos_bias=*/-2.0);  // long outputs: repeats are likely
    options.beam_size = options.nbest = 4;
    options.max_length = 20;
    options.no_repeat_ngram_size = 0;
    bool repeated = false;
    for (const auto& nbest : beam_search(random, random.initial_state(kSentenceIds, kSourceLengths),
                                         options, kSourceLengths))
        for (const Hypothesis& h : nbest) repeated = repeated || has_repeated_ngram(h.tokens, 2);
    CHECK(repeated);
    for (int n : {1, 2, 3}) {
        options.no_repeat_ngram_size = n;
        for (const auto& nbest :
             beam_search(random, random.initial_state(kSentenceIds, kSourceLengths), options,
                         kSourceLengths))
            for (const Hypothesis& h : nbest) CHECK(!has_repeated_ngram(h.tokens, size_t(n)));
    }
}

TEST_CASE("suppress_unk never outputs UNK") {
    // p(· | <sos>) UNK 0.6 a 0.4, then EOS.
    TableStepModel model;
    model.set({}, {{UNK, 0.6}, {a, 0.4}});
    DecodeOptions options;
    options.beam_size = options.nbest = 2;
    CHECK(greedy_decode(model, model.initial_state(1), options)[0].tokens == Tokens{UNK, EOS});
    CHECK(beam_search(model, model.initial_state(1), options)[0][0].tokens == Tokens{UNK, EOS});
    options.suppress_unk = true;
    CHECK(greedy_decode(model, model.initial_state(1), options)[0].tokens == Tokens{a, EOS});
    auto beam = beam_search(model, model.initial_state(1), options)[0];
    REQUIRE(beam.size() == 1);  // the only hypothesis left
    CHECK(beam[0].tokens == Tokens{a, EOS});
}

TEST_CASE("max_length: absolute and relative to the source, unfinished hypotheses flagged") {
    TableStepModel model({{d, 1.0}});  // never ends
    DecodeOptions options;
    options.max_length = 5;
    options.beam_size = options.nbest = 2;
    auto greedy = greedy_decode(model, model.initial_state(1), options)[0];
    CHECK(greedy.tokens == Tokens(5, d));
    CHECK(!greedy.finished);
    CHECK(greedy.log_prob == 0);
    auto beam = beam_search(model, model.initial_state(1), options)[0];
    REQUIRE(beam.size() == 1);  // only one token has probability > 0
    CHECK(beam[0].tokens == Tokens(5, d));
    CHECK(!beam[0].finished);

    // factor 1.5, offset 1: source length 2 -> ceil(3) + 1 = 4; 10 -> 16, capped at 12.
    options.max_length = 12;
    options.max_length_factor = 1.5;
    options.max_length_offset = 1;
    const std::vector<int32_t> source_lengths = {2, 10};
    auto greedy2 = greedy_decode(model, model.initial_state(2), options, source_lengths);
    CHECK(greedy2[0].tokens.size() == 4);
    CHECK(greedy2[1].tokens.size() == 12);
    auto beam2 = beam_search(model, model.initial_state(2), options, source_lengths);
    CHECK(beam2[0][0].tokens.size() == 4);
    CHECK(beam2[1][0].tokens.size() == 12);

    // An unfinished hypothesis competes by score with finished ones: here "d d d" (L = 0)
    // beats "c EOS" (L = log 0.5 + log 0.1).
    TableStepModel mixed({{d, 1.0}});
    mixed.set({}, {{d, 0.5}, {c, 0.5}});
    mixed.set({c}, {{EOS, 0.1}, {c, 0.9}});
    mixed.set({c, c}, {{EOS, 1.0}});
    DecodeOptions short_run;
    short_run.max_length = 3;
    short_run.beam_size = short_run.nbest = 2;
    auto ranked = beam_search(mixed, mixed.initial_state(1), short_run)[0];
    REQUIRE(ranked.size() == 2);
    CHECK(ranked[0].tokens == Tokens{d, d, d});
    CHECK(!ranked[0].finished);
    CHECK(ranked[1].tokens == Tokens{c, c, EOS});
    CHECK(ranked[1].finished);
}

TEST_CASE("coverage penalty: score = L / lp + β Σ_s log(min(Σ_t a_ts, 1))") {
    RandomStepModel model(21);
    DecodeOptions options;
    options.beam_size = 4;
    options.nbest = 4;
    options.coverage_penalty = 0.3;
    options.alpha = 1.0;
    auto results = beam_search(model, model.initial_state(kSentenceIds, kSourceLengths), options,
                               kSourceLengths);
    for (size_t s = 0; s < results.size(); ++s)
        for (const Hypothesis& h : results[s]) {
            REQUIRE(h.attention.size() == h.tokens.size());
            double penalty = 0;
            for (int32_t j = 0; j < kSourceLengths[s]; ++j) {
                double coverage = 0;
                for (const auto& row : h.attention) coverage += row[size_t(j)];
                penalty += std::log(std::max(std::min(coverage, 1.0), 1e-6));
            }
            for (const auto& row : h.attention) {
                CHECK(row.size() == size_t(kSourceLengths[s]));
                CHECK(std::accumulate(row.begin(), row.end(), 0.0) == doctest::Approx(1.0));
            }
            const double expected =
                h.log_prob / double(h.tokens.size()) + options.coverage_penalty * penalty;
            CHECK(h.score == doctest::Approx(expected).epsilon(1e-6));
        }

    options.keep_attention = false;
    for (const auto& nbest : beam_search(model, model.initial_state(kSentenceIds, kSourceLengths),
                                         options, kSourceLengths))
        for (const Hypothesis& h : nbest) CHECK(h.attention.empty());

    TableStepModel table;  // no attention
    CHECK_THROWS_WITH_AS(beam_search(table, table.initial_state(1), options),
                         doctest::Contains("attention"), Error);
}

TEST_CASE("bad options and inputs are clear errors") {
    TableStepModel model;
    DecodeOptions options;
    options.beam_size = 2;
    options.nbest = 3;
    CHECK_THROWS_WITH_AS(beam_search(model, model.initial_state(1), options),
                         doctest::Contains("nbest"), Error);
    options.nbest = 1;
    options.max_length = 0;
    CHECK_THROWS_WITH_AS(greedy_decode(model, model.initial_state(1), options),
                         doctest::Contains("max_length"), Error);
    options.max_length = 5;
    CHECK_THROWS_WITH_AS(beam_search(model, model.initial_state(2), options, {3}),
                         doctest::Contains("source lengths"), Error);
    RandomStepModel random(1);
    CHECK_THROWS_WITH_AS(greedy_decode(random, random.initial_state({0}, {3}), options, {7}),
                         doctest::Contains("attention has only"), Error);
}
