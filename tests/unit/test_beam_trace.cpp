// The beam-search trace (apps/explore/beam_trace.h) and forced target prefixes: the trace must be a
// faithful record of what beam_search did, checked on hand-built probability tables (where each
// node's fate is known) and on random models (where the invariants must hold everywhere).
#include <cmath>

#include "apps/explore/beam_trace.h"
#include "seqgrad/models/decoding/decoding.h"
#include "step_models.h"
#include "test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

constexpr int32_t a = TableStepModel::a, b = TableStepModel::b, c = TableStepModel::c;
using Tokens = std::vector<int32_t>;

// The node with parent `parent` and token `token`, or -1.
int32_t child(const BeamTrace& trace, int32_t parent, int32_t token) {
    for (size_t i = 0; i < trace.nodes.size(); ++i)
        if (trace.nodes[i].parent == parent && trace.nodes[i].token == token) return int32_t(i);
    return -1;
}

// The node reached from the root along `tokens`, or -1.
int32_t node_at(const BeamTrace& trace, const Tokens& tokens) {
    int32_t node = 0;
    for (int32_t t : tokens)
        if ((node = child(trace, node, t)) < 0) return -1;
    return node;
}

NodeStatus status_at(const BeamTrace& trace, const Tokens& tokens) {
    const int32_t node = node_at(trace, tokens);
    REQUIRE(node >= 0);
    return trace.nodes[size_t(node)].status;
}

bool is_allowed(NodeStatus s) {
    return s == NodeStatus::kept || s == NodeStatus::finished || s == NodeStatus::pruned ||
           s == NodeStatus::unfinished || s == NodeStatus::abandoned;
}

// Every invariant the trace of `results` must satisfy (see the TEST_CASEs for what each means).
void check_trace(const BeamTrace& trace, const std::vector<Hypothesis>& results,
                 const DecodeOptions& options) {
    REQUIRE(!trace.nodes.empty());
    CHECK(trace.nodes[0].status == NodeStatus::root);
    // The n-best in the trace is beam search's own result.
    REQUIRE(trace.nbest_nodes.size() == results.size());
    for (size_t r = 0; r < results.size(); ++r) {
        const TraceNode& n = trace.nodes[size_t(trace.nbest_nodes[r])];
        CHECK(trace.prefix(trace.nbest_nodes[r]) == results[r].tokens);
        CHECK(n.rank == int32_t(r + 1));
        CHECK(n.log_prob == doctest::Approx(results[r].log_prob).epsilon(1e-12));
        CHECK(n.score == doctest::Approx(results[r].score).epsilon(1e-12));
        CHECK(n.status == (results[r].finished ? NodeStatus::finished : NodeStatus::unfinished));
    }
    int ranked = 0;
    for (size_t i = 1; i < trace.nodes.size(); ++i) {
        const TraceNode& n = trace.nodes[i];
        const TraceNode& parent = trace.nodes[size_t(n.parent)];
        REQUIRE(n.parent < int32_t(i));  // children come after their parent
        CHECK(n.step == parent.step + 1);
        // Every node's running score is its parent's plus its own log-probability.
        CHECK(n.log_prob == parent.log_prob + n.token_log_prob);
        CHECK(n.length_penalty == length_penalty(n.step, options));
        // Only kept nodes (and the root) have children.
        CHECK((parent.status == NodeStatus::kept || parent.status == NodeStatus::root));
        ranked += n.rank > 0;
    }
    CHECK(ranked == int(results.size()));

    // At each step the survivors are exactly the top `free` candidates, ranked as the search
    // ranks them: higher running log-prob, then earlier parent beam, larger token log-prob,
    // smaller token id.
    std::vector<int32_t> beam_index(trace.nodes.size(), 0);  // a kept node's index among live
    beam_index[0] = 0;
    int finished_before = 0;
    for (int32_t t = 1; t <= trace.steps(); ++t) {
        const std::vector<int32_t>& selected = trace.selected_nodes[size_t(t - 1)];
        auto ranks_before = [&](int32_t x, int32_t y) {
            const TraceNode &p = trace.nodes[size_t(x)], &q = trace.nodes[size_t(y)];
            if (p.log_prob != q.log_prob) return p.log_prob > q.log_prob;
            if (p.parent != q.parent)
                return beam_index[size_t(p.parent)] < beam_index[size_t(q.parent)];
            if (p.token_log_prob != q.token_log_prob) return p.token_log_prob > q.token_log_prob;
            return p.token < q.token;
        };
        std::vector<int32_t> allowed;
        for (size_t i = 0; i < trace.nodes.size(); ++i)
            if (trace.nodes[i].step == t && is_allowed(trace.nodes[i].status))
                allowed.push_back(int32_t(i));
        std::sort(allowed.begin(), allowed.end(), ranks_before);
        const size_t free = size_t(options.beam_size - finished_before);
        REQUIRE(selected.size() == std::min(free, allowed.size()));
        CHECK(std::equal(selected.begin(), selected.end(), allowed.begin()));
        for (size_t i = selected.size(); i < allowed.size(); ++i)
            CHECK(trace.nodes[size_t(allowed[i])].status == NodeStatus::pruned);
        // The OpenNMT-style arrays describe the same candidates.
        int32_t live = 0;
        for (size_t i = 0; i < selected.size(); ++i) {
            const TraceNode& n = trace.nodes[size_t(selected[i])];
            CHECK(trace.predicted_ids[size_t(t - 1)][i] == n.token);
            CHECK(trace.scores[size_t(t - 1)][i] == n.log_prob);
            CHECK(trace.beam_parent_ids[size_t(t - 1)][i] == beam_index[size_t(n.parent)]);
            if (n.token == EOS)
                ++finished_before;
            else
                beam_index[size_t(selected[i])] = live++;
        }
    }
}

}  // namespace

TEST_CASE("trace of a hand-built table: every node's fate and reason") {
    // K = 2, nbest 2, min_length 1, no_repeat_ngram_size 2, suppress_unk, no length penalty.
    //   p(. | <s>)  a 0.5  b 0.3  c 0.15  EOS 0.05
    //       step 1: a, b kept; c out of the top 2; EOS below the minimum length
    //   p(. | a)    a 0.7  EOS 0.3        p(. | b)  EOS 0.9  UNK 0.1
    //       step 2: a a (0.35) kept, b EOS (0.27) finished, a EOS (0.15) out of the top 2,
    //               b UNK suppressed
    //   p(. | a a)  a 0.8  EOS 0.2
    //       step 3 (1 slot left): a a a repeats the bigram (a, a): blocked; a a EOS finished.
    // All slots finished: the n-best is b EOS (log 0.27), then a a EOS (log 0.07).
    TableStepModel model;
    model.set({}, {{a, 0.5}, {b, 0.3}, {c, 0.15}, {EOS, 0.05}});
    model.set({a}, {{a, 0.7}, {EOS, 0.3}});
    model.set({b}, {{EOS, 0.9}, {UNK, 0.1}});
    model.set({a, a}, {{a, 0.8}, {EOS, 0.2}});
    DecodeOptions options;
    options.beam_size = options.nbest = 2;
    options.min_length = 1;
    options.no_repeat_ngram_size = 2;
    options.suppress_unk = true;
    options.length_penalty = DecodeOptions::none;
    BeamTraceRecorder recorder;
    std::vector<BeamTrace>& traces = recorder.traces;
    BeamSearchExtras extras;
    extras.observer = &recorder;
    auto results = beam_search(model, model.initial_state(1), options, {}, extras)[0];
    REQUIRE(traces.size() == 1);
    const BeamTrace& trace = traces[0];
    REQUIRE(results.size() == 2);
    CHECK(results[0].tokens == Tokens{b, EOS});
    CHECK(results[1].tokens == Tokens{a, a, EOS});

    CHECK(status_at(trace, {a}) == NodeStatus::kept);
    CHECK(status_at(trace, {b}) == NodeStatus::kept);
    CHECK(status_at(trace, {c}) == NodeStatus::pruned);
    CHECK(status_at(trace, {EOS}) == NodeStatus::below_min_length);
    CHECK(status_at(trace, {a, a}) == NodeStatus::kept);
    CHECK(status_at(trace, {b, EOS}) == NodeStatus::finished);
    CHECK(status_at(trace, {a, EOS}) == NodeStatus::pruned);
    CHECK(status_at(trace, {b, UNK}) == NodeStatus::unk_suppressed);
    CHECK(status_at(trace, {a, a, a}) == NodeStatus::ngram_blocked);
    CHECK(status_at(trace, {a, a, EOS}) == NodeStatus::finished);
    CHECK(trace.nodes[size_t(node_at(trace, {b, EOS}))].rank == 1);
    CHECK(trace.nodes[size_t(node_at(trace, {a, a, EOS}))].rank == 2);
    CHECK(trace.nodes[size_t(node_at(trace, {a, a, EOS}))].log_prob ==
          doctest::Approx(std::log(0.5) + std::log(0.7) + std::log(0.2)));
    CHECK(node_at(trace, {TableStepModel::d}) < 0);  // probability-0 tokens are not recorded
    CHECK(trace.stop_reason == StopReason::all_finished);
    CHECK(trace.steps() == 3);
    CHECK(trace.predicted_ids == std::vector<Tokens>{{a, b}, {a, EOS}, {EOS}});
    CHECK(trace.beam_parent_ids == std::vector<Tokens>{{0, 0}, {0, 1}, {0}});
    check_trace(trace, results, options);
}

TEST_CASE("trace: stopping reasons, with the fate of the beams still live") {
    // As in "search stops as soon as no live beam can enter the n-best": "a EOS" wins, the live
    // "b b" cannot beat it and is abandoned.
    TableStepModel model({{b, 0.99}, {EOS, 0.01}});
    model.set({}, {{a, 0.9}, {b, 0.1}});
    model.set({a}, {{EOS, 0.9}, {b, 0.1}});
    DecodeOptions options;
    options.beam_size = 2;
    options.length_penalty = DecodeOptions::none;
    options.max_length = 10;
    BeamTraceRecorder recorder;
    std::vector<BeamTrace>& traces = recorder.traces;
    BeamSearchExtras extras;
    extras.observer = &recorder;
    auto results = beam_search(model, model.initial_state(1), options, {}, extras)[0];
    CHECK(traces[0].stop_reason == StopReason::cannot_improve);
    CHECK(status_at(traces[0], {b, b}) == NodeStatus::abandoned);
    check_trace(traces[0], results, options);

    // The length limit: every live beam at M competes unfinished.
    TableStepModel forever({{b, 0.6}, {c, 0.4}});
    options.max_length = 3;
    options.nbest = 2;
    results = beam_search(forever, forever.initial_state(1), options, {}, extras)[0];
    CHECK(traces[0].stop_reason == StopReason::max_length);
    REQUIRE(results.size() == 2);
    CHECK(!results[0].finished);
    CHECK(status_at(traces[0], {b, b, b}) == NodeStatus::unfinished);
    check_trace(traces[0], results, options);
}

TEST_CASE("trace on random models: n-best, running scores and top-K hold at every step") {
    const std::vector<int32_t> ids = {0, 1, 2, 3, 4, 5, 6};
    const std::vector<int32_t> lengths = {3, 6, 1, 5, 2, 4, 6};
    for (uint64_t seed : {7u, 11u, 13u})
        for (int setting = 0; setting < 4; ++setting) {
            RandomStepModel model(seed, /*eos_bias=*/setting == 3 ? -1.0 : 0.5);
            DecodeOptions options;
            options.beam_size = 1 + setting * 2;
            options.nbest = std::min(options.beam_size, 3);
            options.length_penalty = setting % 2 ? DecodeOptions::gnmt : DecodeOptions::average;
            options.no_repeat_ngram_size = setting == 2 ? 2 : 0;
            options.min_length = setting == 3 ? 3 : 0;
            options.coverage_penalty = setting == 1 ? 0.2 : 0;
            options.max_length = 12;
            INFO("seed " << seed << " setting " << setting);
            auto plain = beam_search(model, model.initial_state(ids, lengths), options, lengths);
            BeamTraceRecorder recorder;
            std::vector<BeamTrace>& traces = recorder.traces;
            BeamSearchExtras extras;
            extras.observer = &recorder;
            auto traced =
                beam_search(model, model.initial_state(ids, lengths), options, lengths, extras);
            REQUIRE(traces.size() == ids.size());
            for (size_t s = 0; s < ids.size(); ++s) {
                // Recording changes nothing.
                REQUIRE(traced[s].size() == plain[s].size());
                for (size_t r = 0; r < plain[s].size(); ++r) {
                    CHECK(traced[s][r].tokens == plain[s][r].tokens);
                    CHECK(traced[s][r].score == plain[s][r].score);
                }
                check_trace(traces[s], traced[s], options);
            }
        }
}

TEST_CASE("the trace as JSON: OpenNMT/Sockeye array names, statuses, -inf as null") {
    TableStepModel model;
    model.set({}, {{a, 0.5}, {b, 0.5}});
    DecodeOptions options;
    options.beam_size = options.nbest = 2;
    BeamTraceRecorder recorder;
    std::vector<BeamTrace>& traces = recorder.traces;
    BeamSearchExtras extras;
    extras.observer = &recorder;
    beam_search(model, model.initial_state(1), options, {}, extras);
    const std::vector<std::string> text = {"<pad>", "<s>", "</s>", "<unk>", "a", "b", "c", "d"};
    nlohmann::json j = beam_trace_json(traces[0], text);
    CHECK(j["predicted_ids"] == nlohmann::json::parse("[[4,5],[2,2]]"));
    CHECK(j["beam_parent_ids"] == nlohmann::json::parse("[[0,0],[0,1]]"));
    CHECK(j["predicted_tokens"][0][1] == "b");
    CHECK(j["stop_reason"] == "all_finished");
    CHECK(j["nodes"]["status"][0] == "root");
    CHECK(j["nodes"]["text"][1] == "a");
    CHECK(j["nodes"]["parent"].size() == traces[0].nodes.size());
    CHECK(j["scores"][0][0].get<double>() == doctest::Approx(std::log(0.5)).epsilon(1e-5));
}

TEST_CASE("forced prefix: every hypothesis starts with it, the rest is searched") {
    // Left alone, the search says "a EOS"; forced to start with b, "b c EOS" (c 0.9 after b).
    TableStepModel model;
    model.set({}, {{a, 0.8}, {b, 0.2}});
    model.set({a}, {{EOS, 1.0}});
    model.set({b}, {{c, 0.9}, {a, 0.1}});
    model.set({b, c}, {{EOS, 1.0}});
    model.set({b, a}, {{EOS, 1.0}});
    DecodeOptions options;
    options.beam_size = options.nbest = 2;
    CHECK(beam_search(model, model.initial_state(1), options)[0][0].tokens == Tokens{a, EOS});
    BeamTraceRecorder recorder;
    std::vector<BeamTrace>& traces = recorder.traces;
    BeamSearchExtras extras;
    extras.forced_prefixes = {{b}};
    extras.observer = &recorder;
    auto results = beam_search(model, model.initial_state(1), options, {}, extras)[0];
    REQUIRE(results.size() == 2);
    CHECK(results[0].tokens == Tokens{b, c, EOS});
    CHECK(results[1].tokens == Tokens{b, a, EOS});
    CHECK(results[0].log_prob == doctest::Approx(std::log(0.2) + std::log(0.9)));
    CHECK(status_at(traces[0], {a}) == NodeStatus::not_forced);
    CHECK(status_at(traces[0], {b}) == NodeStatus::kept);
    check_trace(traces[0], results, options);

    // A prefix as long as the limit ends unfinished; a prefix per sentence; bad counts.
    options.max_length = 1;
    results = beam_search(model, model.initial_state(1), options, {}, extras)[0];
    CHECK(results[0].tokens == Tokens{b});
    CHECK(!results[0].finished);
    extras.forced_prefixes = {{b}, {}};
    CHECK_THROWS_WITH(beam_search(model, model.initial_state(1), options, {}, extras),
                      doctest::Contains("2 forced prefixes for 1 sentences"));
}

TEST_CASE("forced prefix on a random model: the prefix is scored as teacher forcing would") {
    RandomStepModel model(5);
    const std::vector<int32_t> ids = {0, 1}, lengths = {4, 6};
    DecodeOptions options;
    options.beam_size = 3;
    options.nbest = 3;
    BeamSearchExtras extras;
    extras.forced_prefixes = {{5, 6, 7}, {}};
    auto forced = beam_search(model, model.initial_state(ids, lengths), options, lengths, extras);
    auto free_run = beam_search(model, model.initial_state(ids, lengths), options, lengths);
    for (const Hypothesis& h : forced[0]) {
        REQUIRE(h.tokens.size() >= 3);
        CHECK(Tokens(h.tokens.begin(), h.tokens.begin() + 3) == Tokens{5, 6, 7});
    }
    // The second sentence has no prefix: the same result as without any.
    REQUIRE(forced[1].size() == free_run[1].size());
    for (size_t r = 0; r < forced[1].size(); ++r)
        CHECK(forced[1][r].tokens == free_run[1][r].tokens);
    // Teacher-forcing the best forced hypothesis gives its log-prob.
    NoGradGuard no_grad;
    auto state = model.initial_state({0}, {4});
    double log_prob = 0;
    int32_t previous = SOS;
    for (int32_t token : forced[0][0].tokens) {
        StepResult r = model.step({previous}, *state);
        log_prob += r.log_probs.data()[token];
        previous = token;
    }
    CHECK(forced[0][0].log_prob == doctest::Approx(log_prob).epsilon(1e-12));
}
