// Exercises 13-14: greedy decoding and one beam-search step.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "apps/exercises/beam_reference.h"
#include "apps/exercises/grader.h"
#include "apps/exercises/step_models.h"

namespace seqgrad::grading {
namespace {

using namespace practice;

// ---- 13 ----

std::vector<std::vector<int32_t>> library_greedy(const StepModel& model,
                                                 std::unique_ptr<DecoderState> state,
                                                 int max_length) {
    DecodeOptions options;
    options.max_length = max_length;
    options.length_penalty = DecodeOptions::none;
    options.keep_attention = false;
    std::vector<std::vector<int32_t>> out;
    for (const Hypothesis& h : greedy_decode(model, std::move(state), options))
        out.push_back(h.tokens);
    return out;
}

std::string tokens_text(const std::vector<int32_t>& tokens) {
    return fmt::format("[{}]", fmt::join(tokens, " "));
}

std::string compare_outputs(const std::vector<std::vector<int32_t>>& got,
                            const std::vector<std::vector<int32_t>>& want) {
    if (got.size() != want.size())
        return fmt::format("{} outputs for {} rows: return one token list per row", got.size(),
                           want.size());
    for (size_t r = 0; r < want.size(); ++r)
        if (got[r] != want[r]) {
            size_t t = 0;
            while (t < got[r].size() && t < want[r].size() && got[r][t] == want[r][t]) ++t;
            std::string why;
            for (int32_t token : got[r])
                if (token == PAD || token == SOS) why = "; PAD (0) and SOS (1) are never outputs";
            if (got[r].size() > want[r].size() && t == want[r].size() && !want[r].empty() &&
                want[r].back() == EOS)
                why = "; went on after EOS: EOS hypothesis kept active (a finished row stops)";
            return fmt::format("row {}: got {}, expected {} (first difference at step {}){}", r,
                               tokens_text(got[r]), tokens_text(want[r]), t, why);
        }
    return "";
}

// Greedy decoding of three random models against the library's.
void check_greedy_random_models(Grader& g) {
    Rng rng = g.rng(13);
    for (int k = 0; k < 3; ++k) {
        const uint64_t seed = rng.below(1000000);
        const int64_t rows = g.random_size(rng, 1, 6);
        const int max_length = int(g.random_size(rng, 3, 12));
        g.check(
            fmt::format("random model {} rows, max_length {} (seed {})", rows, max_length, seed),
            [&]() -> std::string {
                RandomModel model(seed);
                NoGradGuard no_grad;
                g.phase("decoding");
                auto got = g.t.greedy_decode(model, model.initial_state(rows), max_length);
                auto want = library_greedy(model, model.initial_state(rows), max_length);
                return compare_outputs(got, want);
            });
    }
}

// A hand-written table model and what greedy decoding of it tests. rows = -1: rows that start
// from different prefixes, so that they finish at different steps.
struct GreedyTableCase {
    std::string label;
    std::function<void(TableModel&)> build;
    int rows, max_length;
};

std::vector<GreedyTableCase> greedy_table_cases() {
    using TM = TableModel;
    return {{"EOS at the first step",
             [](TM& m) {
                 m.set({}, {{EOS, 0.7}, {TM::a, 0.3}});
             },
             2, 5},
            {"ties: the smallest id wins",
             [](TM& m) {
                 m.set({}, {{TM::b, 0.4}, {TM::a, 0.4}, {EOS, 0.2}});
                 m.set({TM::a}, {{TM::c, 0.5}, {TM::d, 0.5}});
             },
             1, 5},
            {"finished rows are not fed again",
             [](TM& m) {
                 m.set({}, {{TM::a, 0.6}, {EOS, 0.4}});
                 m.set({TM::a}, {{EOS, 0.9}, {TM::b, 0.1}});
                 m.set({TM::b}, {{EOS, 0.7}, {TM::c, 0.3}});
                 m.set({TM::c}, {{TM::d, 0.8}, {EOS, 0.2}});
             },
             -1, 6},
            {"max_length cuts a row that never ends",
             [](TM& m) {
                 m.set({}, {{TM::a, 1.0}});
                 m.set({TM::a}, {{TM::a, 1.0}});
                 m.set({TM::a, TM::a}, {{TM::a, 1.0}});
                 m.set({TM::a, TM::a, TM::a}, {{TM::a, 1.0}});
             },
             2, 4}};
}

void check_greedy_table(Grader& g, const GreedyTableCase& k) {
    using TM = TableModel;
    g.check("table: " + k.label, [&]() -> std::string {
        TM model, reference;
        k.build(model), k.build(reference);
        if (k.label.find("never") != std::string::npos)
            model = TM({{TM::a, 1.0}}), reference = TM({{TM::a, 1.0}});
        NoGradGuard no_grad;
        g.phase("decoding");
        const std::vector<std::vector<int32_t>> starts = {{TM::b}, {}, {TM::c}, {TM::b}};
        auto got = g.t.greedy_decode(
            model, k.rows < 0 ? model.initial_state(starts) : model.initial_state(k.rows),
            k.max_length);
        auto want = library_greedy(
            reference,
            k.rows < 0 ? reference.initial_state(starts) : reference.initial_state(k.rows),
            k.max_length);
        std::string why = compare_outputs(got, want);
        if (why.empty() && model.extended_after_eos > 0)
            why = fmt::format(
                "the outputs are right, but rows that had produced EOS were fed to the model "
                "again {} times: EOS hypothesis kept active (drop finished rows with "
                "state->select(rows))",
                model.extended_after_eos);
        return why;
    });
}

void grade_greedy(Grader& g) {
    check_greedy_random_models(g);
    for (const GreedyTableCase& k : greedy_table_cases()) check_greedy_table(g, k);
}

// ---- 14 ----

std::string hyps_text(const std::vector<BeamHypothesis>& hs, bool score) {
    std::vector<std::string> parts;
    for (const auto& h : hs)
        parts.push_back(score ? fmt::format("{} L={:.4f} score={:.4f}", tokens_text(h.tokens),
                                            h.log_prob, h.score)
                              : fmt::format("{} L={:.4f}", tokens_text(h.tokens), h.log_prob));
    return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

bool same(const std::vector<BeamHypothesis>& a, const std::vector<BeamHypothesis>& b, bool score) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].tokens != b[i].tokens || std::fabs(a[i].log_prob - b[i].log_prob) > 1e-9)
            return false;
        if (score && std::fabs(a[i].score - b[i].score) > 1e-9) return false;
    }
    return true;
}

// Compares one step's result with the reference's, naming the slip when one fits.
std::string compare_step(const BeamState& before, const BeamState& got, const BeamState& want,
                         const BeamConfig& config) {
    for (const auto& h : got.live)
        if (!h.tokens.empty() && h.tokens.back() == config.eos)
            return fmt::format(
                "EOS hypothesis kept active: live holds {} (it ends with EOS: move "
                "it to finished)",
                tokens_text(h.tokens));
    if (!same(got.live, want.live, false)) {
        bool normalised = got.live.size() == want.live.size();
        for (size_t i = 0; normalised && i < got.live.size(); ++i)
            normalised =
                got.live[i].tokens == want.live[i].tokens &&
                std::fabs(got.live[i].log_prob -
                          want.live[i].log_prob /
                              std::pow(double(want.live[i].tokens.size()), config.alpha)) < 1e-9;
        if (normalised && config.alpha != 0)
            return "length penalty applied at every step: live log_probs must stay raw sums; "
                   "divide by lp only for finished hypotheses (and in the stopping test)";
        std::string why = fmt::format("live: got {}, expected {}", hyps_text(got.live, false),
                                      hyps_text(want.live, false));
        if (got.live.size() + got.finished.size() >
                size_t(config.beam_size) + before.finished.size() ||
            got.live.size() > want.live.size())
            why += "; keep only K − |finished| candidates (a finished hypothesis keeps its slot)";
        return why;
    }
    if (!same(got.finished, want.finished, true)) {
        if (same(got.finished, want.finished, false)) {
            bool raw = true;
            for (const auto& h : got.finished) raw = raw && std::fabs(h.score - h.log_prob) < 1e-12;
            if (raw) return "finished scores are raw log_probs: score = log_prob / lp(length)";
        }
        return fmt::format("finished: got {}, expected {}", hyps_text(got.finished, true),
                           hyps_text(want.finished, true));
    }
    if (got.done != want.done) {
        if (got.done) {
            BeamState naive = got;
            naive.done = false;
            double best = -1e300;
            for (const auto& f : got.finished) best = std::max(best, f.score);
            bool by_current = !got.live.empty();
            for (const auto& b : got.live)
                by_current = by_current &&
                             b.log_prob / std::pow(double(b.tokens.size()), config.alpha) <= best;
            return std::string(
                       "stopped too early: a live hypothesis can still beat the best "
                       "finished one (bound it by L(b) / lp(max_length), the largest "
                       "penalty it could get)") +
                   (by_current ? "; you bounded it by its current normalised score L(b) / lp(n)"
                               : "");
        }
        return "did not stop, but the stopping rule holds (no live hypothesis can beat the best "
               "finished score, or none is left, or max_length is reached)";
    }
    return "";
}

// Builds the state a step starts from on a table: the live prefixes and their log-probs.
struct StepCase {
    std::string label;
    TableModel model;
    BeamConfig config;
    int steps_before;  // steps of the reference before the checked one
};

std::vector<std::vector<double>> table_log_probs(const TableModel& m,
                                                 const std::vector<BeamHypothesis>& live) {
    std::vector<std::vector<double>> out;
    for (const auto& h : live) {
        std::vector<double> row(size_t(TableModel::V), -std::numeric_limits<double>::infinity());
        for (auto [token, p] : m.next(h.tokens)) row[size_t(token)] = std::log(p);
        out.push_back(row);
    }
    return out;
}

std::vector<StepCase> beam_cases(Rng& rng) {
    using TM = TableModel;
    std::vector<StepCase> cases;
    {
        TM m;  // EOS at the first step takes a slot
        m.set({}, {{EOS, 0.6}, {TM::a, 0.3}, {TM::b, 0.1}});
        m.set({TM::a}, {{EOS, 0.5}, {TM::c, 0.5}});
        cases.push_back({"EOS at the first step", m, {2, 1.0, 6, EOS}, 0});
    }
    {
        TM m;  // ties in top-k: smaller beam, then smaller token
        m.set({}, {{TM::c, 0.3}, {TM::a, 0.3}, {TM::b, 0.3}, {EOS, 0.1}});
        cases.push_back({"ties in top-k", m, {2, 1.0, 6, EOS}, 0});
    }
    {
        TM m;  // the length penalty decides: the longer hypothesis wins after normalising
        m.set({}, {{EOS, 0.5}, {TM::a, 0.5}});
        m.set({TM::a}, {{TM::b, 0.95}, {EOS, 0.05}});
        m.set({TM::a, TM::b}, {{EOS, 0.95}, {TM::c, 0.05}});
        cases.push_back(
            {"stopping rule after a short finished hypothesis", m, {2, 1.0, 6, EOS}, 0});
        cases.push_back({"second step with one slot finished", m, {2, 1.0, 6, EOS}, 1});
    }
    {
        TM m;  // reaching max_length
        m.set({}, {{TM::a, 0.7}, {TM::b, 0.3}});
        m.set({TM::a}, {{TM::c, 0.6}, {TM::d, 0.4}});
        m.set({TM::b}, {{TM::c, 0.9}, {EOS, 0.1}});
        cases.push_back({"max_length reached", m, {3, 0.6, 2, EOS}, 1});
    }
    {
        TM m;  // every slot finishes at once
        m.set({}, {{TM::a, 0.5}, {TM::b, 0.5}});
        m.set({TM::a}, {{EOS, 1.0}});
        m.set({TM::b}, {{EOS, 1.0}});
        cases.push_back({"every beam finishes", m, {2, 1.0, 6, EOS}, 1});
    }
    for (int k = 0; k < 2; ++k) {  // random tables
        TM m({{EOS, 0.5}, {TM::a, 0.3}, {TM::d, 0.2}});
        std::vector<std::vector<int32_t>> prefixes = {{}};
        for (size_t i = 0; i < prefixes.size() && i < 12; ++i) {
            TM::Distribution next;
            double total = 0;
            for (int32_t t = EOS; t < TM::V; ++t) {
                double p = rng.uniform(0.05, 1);
                next[t] = p, total += p;
            }
            for (auto& [t, p] : next) p /= total;
            m.set(prefixes[i], next);
            for (int32_t t = 3; t < TM::V && prefixes.size() < 12; t += 2) {
                auto longer = prefixes[i];
                longer.push_back(t);
                prefixes.push_back(longer);
            }
        }
        cases.push_back(
            {fmt::format("random table {}", k + 1), m, {3, 0.8, 5, EOS}, int(rng.below(2))});
    }
    return cases;
}

void grade_beam(Grader& g) {
    Rng rng = g.rng(14);
    for (StepCase& k : beam_cases(rng)) {
        g.check("one step: " + k.label, [&]() -> std::string {
            BeamState state;
            state.live = {BeamHypothesis{}};
            for (int s = 0; s < k.steps_before && !state.done; ++s)
                reference_beam_step(state, table_log_probs(k.model, state.live), k.config);
            if (state.done) return "";
            BeamState mine = state, want = state;
            auto log_probs = table_log_probs(k.model, state.live);
            g.phase("decoding");
            g.t.beam_step(mine, log_probs, k.config);
            reference_beam_step(want, log_probs, k.config);
            g.phase("checking");
            std::string why = compare_step(state, mine, want, k.config);
            return why.empty() ? ""
                               : fmt::format("from live {}: {}", hyps_text(state.live, false), why);
        });
    }
    for (StepCase& k : beam_cases(rng)) {
        g.check("whole search vs seqgrad's beam_search: " + k.label, [&]() -> std::string {
            g.phase("decoding");
            BeamRun mine = run_beam(g.t.beam_step, k.model, k.config);
            g.phase("checking");
            BeamRun want = library_beam(k.model, k.config);
            if (!mine.error.empty()) return mine.error;
            if (mine.best.tokens != want.best.tokens ||
                std::fabs(mine.best.score - want.best.score) > 1e-9)
                return fmt::format(
                    "best hypothesis {} score {:.4f}, expected {} score {:.4f} (stopped "
                    "after {} steps)",
                    tokens_text(mine.best.tokens), mine.best.score, tokens_text(want.best.tokens),
                    want.best.score, mine.steps);
            BeamRun ref = run_beam(reference_beam_step, k.model, k.config);
            if (mine.steps != ref.steps)
                return fmt::format("right answer, but stopped after {} steps instead of {}",
                                   mine.steps, ref.steps);
            return "";
        });
    }
}

}  // namespace

void add_decoding_exercises(std::vector<Exercise>& out) {
    out.push_back({13, "13_greedy_decode", "greedy decoding over a batch, finished rows dropped",
                   "20-40",
                   "models/decoding/decoding.cpp: greedy_decode(); models/model/step_model.h: "
                   "DecoderState::select",
                   grade_greedy});
    out.push_back({14, "14_beam_step",
                   "one beam-search step: top-k, EOS to finished, length penalty, stopping rule",
                   "45-90",
                   "models/decoding/beam_search.cpp: the comment at its top (the algorithm and the "
                   "stopping rule), ranks_before, and the selection step",
                   grade_beam});
}

}  // namespace seqgrad::grading
