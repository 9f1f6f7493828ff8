// Exercises 12-15: Adam and clipping, greedy decoding, one beam-search step, corpus BLEU.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "apps/exercises/beam_reference.h"
#include "apps/exercises/grader.h"
#include "apps/exercises/step_models.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"

namespace seqgrad::grading {
namespace {

using namespace practice;

// ---- 12 ----

// Adam by hand with one slip switched on, for the diagnoses.
std::vector<double> adam_variant(std::vector<double> p, const std::vector<std::vector<double>>& grads,
                                 double lr, double b1, double b2, double eps, int slip) {
    std::vector<double> m(p.size()), v(p.size());
    for (size_t t = 1; t <= grads.size(); ++t)
        for (size_t i = 0; i < p.size(); ++i) {
            double g = grads[t - 1][i];
            m[i] = b1 * m[i] + (1 - b1) * g, v[i] = b2 * v[i] + (1 - b2) * g * g;
            double bc1 = slip == 1 ? 1 : 1 - std::pow(b1, double(t));
            double bc2 = slip == 1 ? 1 : 1 - std::pow(b2, double(t));
            double denom = slip == 2 ? std::sqrt(v[i] / bc2 + eps) : std::sqrt(v[i] / bc2) + eps;
            p[i] -= lr * (m[i] / bc1) / denom;
        }
    return p;
}

void grade_adam_clip(Grader& g) {
    Rng rng = g.rng(12);
    struct Case {
        std::string label;
        int64_t n;
        int steps;
        double lr, b1, b2, eps, grad_scale;
    };
    std::vector<Case> cases = {
        {"1 step", g.random_size(rng, 3, 11), 1, 1e-3, 0.9, 0.999, 1e-8, 1},
        {"3 steps", g.random_size(rng, 3, 11), 3, 0.01, 0.9, 0.999, 1e-8, 1},
        {"5 steps, betas (0.5, 0.9), eps 0.1", 7, 5, 0.05, 0.5, 0.9, 0.1, 1},
        {"tiny gradients (eps matters)", 5, 2, 0.01, 0.9, 0.999, 1e-3, 1e-4}};
    for (const Case& k : cases) {
        g.check("adam " + k.label, [&]() -> std::string {
            std::vector<real> p0(size_t(k.n));
            for (auto& x : p0) x = real(rng.uniform(-1, 1));
            std::vector<std::vector<double>> grads(size_t(k.steps), std::vector<double>(size_t(k.n)));
            for (auto& step : grads)
                for (auto& x : step) x = k.grad_scale * rng.uniform(-1, 1);
            Tensor p = Tensor::from_vector({k.n}, p0, true);
            AdamOptions options;
            options.lr = k.lr, options.beta1 = k.b1, options.beta2 = k.b2, options.eps = k.eps;
            Adam adam({{"p", p}}, options);
            std::vector<real> mine(p0), m(size_t(k.n), 0), v(size_t(k.n), 0), grad(size_t(k.n));
            g.phase("update");
            for (int t = 1; t <= k.steps; ++t) {
                for (int64_t i = 0; i < k.n; ++i)
                    p.mutable_grad_data()[i] = grad[size_t(i)] = real(grads[size_t(t - 1)][size_t(i)]);
                adam.step();
                g.t.adam_update(mine.data(), grad.data(), m.data(), v.data(), k.n, t, k.lr, k.b1,
                                k.b2, k.eps);
            }
            g.phase("checking");
            CompareContext c;
            c.shape = {k.n};
            c.rtol = 1e-9, c.atol = 1e-12;
            std::vector<double> p_start(p0.begin(), p0.end());
            c.alternatives = {
                {"no bias correction (m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t))",
                 adam_variant(p_start, grads, k.lr, k.b1, k.b2, k.eps, 1)},
                {"eps inside the square root: p −= lr m̂ / (√v̂ + eps), eps after the root",
                 adam_variant(p_start, grads, k.lr, k.b1, k.b2, k.eps, 2)},
                {"the update not applied", p_start}};
            return compare("parameter after the last step",
                           std::vector<double>(mine.begin(), mine.end()), values(p), c);
        });
    }
    struct ClipCase {
        std::string label;
        double max_norm, scale;
        bool no_grad, nan;
    };
    std::vector<ClipCase> clips = {{"norm above max_norm", 1.0, 3, false, false},
                                   {"norm below max_norm: untouched", 10.0, 0.5, false, false},
                                   {"a parameter without gradient", 0.5, 2, true, false},
                                   {"NaN gradient: returned, nothing scaled", 1.0, 2, false, true}};
    for (const ClipCase& k : clips) {
        g.check("clip_grad_norm: " + k.label, [&]() -> std::string {
            auto make = [&](Rng r) {
                std::vector<Tensor> ps;
                for (int64_t n : {3, 5, 4}) {
                    Tensor p = random_leaf(r, {n});
                    for (int64_t i = 0; i < n; ++i) p.mutable_grad_data()[i] = real(k.scale * r.uniform(-1, 1));
                    ps.push_back(p);
                }
                if (k.no_grad) ps.push_back(random_leaf(r, {2}));
                if (k.nan) ps[1].mutable_grad_data()[2] = std::numeric_limits<real>::quiet_NaN();
                return ps;
            };
            Rng seed = g.rng(120);
            std::vector<Tensor> mine = make(seed), want = make(seed);
            std::vector<double> before;
            for (const Tensor& t : mine)
                for (double x : gradient(t)) before.push_back(x);
            g.phase("update");
            double norm = g.t.clip_grad_norm(mine, k.max_norm);
            double want_norm = seqgrad::clip_grad_norm(want, k.max_norm);
            g.phase("checking");
            if (!(norm == want_norm || std::fabs(norm - want_norm) <= 1e-12 * std::fabs(want_norm) ||
                  (std::isnan(norm) && std::isnan(want_norm)))) {
                if (std::fabs(norm - want_norm * want_norm) < 1e-9 * want_norm * want_norm)
                    return fmt::format("returned ‖g‖² = {}: the norm is its square root", norm);
                return fmt::format("returned {}, expected the norm before clipping {}", norm, want_norm);
            }
            std::vector<double> got_g, want_g;
            for (size_t i = 0; i < mine.size(); ++i)
                for (double x : gradient(mine[i])) got_g.push_back(x);
            for (size_t i = 0; i < want.size(); ++i)
                for (double x : gradient(want[i])) want_g.push_back(x);
            CompareContext c;
            c.shape = {int64_t(got_g.size())};
            c.rtol = 1e-9;
            c.alternatives = {{"the gradients were not scaled", before}};
            if (std::isnan(want_norm)) c.alternatives.clear();
            std::string why = compare("gradients after clipping (all parameters, flattened)", got_g, want_g, c);
            if (!why.empty() && std::isnan(want_norm))
                why += "; a non-finite norm must leave the gradients untouched";
            return why;
        });
    }
}

// ---- 13 ----

std::vector<std::vector<int32_t>> library_greedy(const StepModel& model, DecoderState state,
                                                 int max_length) {
    DecodeOptions options;
    options.max_length = max_length;
    options.length_penalty = DecodeOptions::none;
    options.keep_attention = false;
    std::vector<std::vector<int32_t>> out;
    for (const Hypothesis& h : greedy_decode(model, std::move(state), options)) out.push_back(h.tokens);
    return out;
}

std::string tokens_text(const std::vector<int32_t>& tokens) {
    return fmt::format("[{}]", fmt::join(tokens, " "));
}

std::string compare_outputs(const std::vector<std::vector<int32_t>>& got,
                            const std::vector<std::vector<int32_t>>& want) {
    if (got.size() != want.size())
        return fmt::format("{} outputs for {} rows: return one token list per row", got.size(), want.size());
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

void grade_greedy(Grader& g) {
    Rng rng = g.rng(13);
    for (int k = 0; k < 3; ++k) {
        const uint64_t seed = rng.below(1000000);
        const int64_t rows = g.random_size(rng, 1, 6);
        const int max_length = int(g.random_size(rng, 3, 12));
        g.check(fmt::format("random model {} rows, max_length {} (seed {})", rows, max_length, seed),
                [&]() -> std::string {
                    RandomModel model(seed);
                    NoGradGuard no_grad;
                    g.phase("decoding");
                    auto got = g.t.greedy_decode(model, model.initial_state(rows), max_length);
                    auto want = library_greedy(model, model.initial_state(rows), max_length);
                    return compare_outputs(got, want);
                });
    }
    using TM = TableModel;
    struct TableCase {
        std::string label;
        std::function<void(TM&)> build;
        int rows, max_length;
    };
    std::vector<TableCase> tables = {
        {"EOS at the first step", [](TM& m) { m.set({}, {{EOS, 0.7}, {TM::a, 0.3}}); }, 2, 5},
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
    for (const TableCase& k : tables) {
        g.check("table: " + k.label, [&]() -> std::string {
            TM model, reference;
            k.build(model), k.build(reference);
            if (k.label.find("never") != std::string::npos)
                model = TM({{TM::a, 1.0}}), reference = TM({{TM::a, 1.0}});
            NoGradGuard no_grad;
            g.phase("decoding");
            // rows = -1: rows that start from different prefixes, so that they finish at
            // different steps
            const std::vector<std::vector<int32_t>> starts = {{TM::b}, {}, {TM::c}, {TM::b}};
            auto got = g.t.greedy_decode(model, k.rows < 0 ? model.initial_state(starts)
                                                            : model.initial_state(k.rows),
                                         k.max_length);
            auto want = library_greedy(reference, k.rows < 0 ? reference.initial_state(starts)
                                                             : reference.initial_state(k.rows),
                                       k.max_length);
            std::string why = compare_outputs(got, want);
            if (why.empty() && model.extended_after_eos > 0)
                why = fmt::format(
                    "the outputs are right, but rows that had produced EOS were fed to the model "
                    "again {} times: EOS hypothesis kept active (drop finished rows with "
                    "select_rows)",
                    model.extended_after_eos);
            return why;
        });
    }
}

// ---- 14 ----

std::string hyps_text(const std::vector<BeamHypothesis>& hs, bool score) {
    std::vector<std::string> parts;
    for (const auto& h : hs)
        parts.push_back(score ? fmt::format("{} L={:.4f} score={:.4f}", tokens_text(h.tokens), h.log_prob, h.score)
                              : fmt::format("{} L={:.4f}", tokens_text(h.tokens), h.log_prob));
    return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

bool same(const std::vector<BeamHypothesis>& a, const std::vector<BeamHypothesis>& b, bool score) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].tokens != b[i].tokens || std::fabs(a[i].log_prob - b[i].log_prob) > 1e-9) return false;
        if (score && std::fabs(a[i].score - b[i].score) > 1e-9) return false;
    }
    return true;
}

// Compares one step's result with the reference's, naming the slip when one fits.
std::string compare_step(const BeamState& before, const BeamState& got, const BeamState& want,
                         const BeamConfig& config) {
    for (const auto& h : got.live)
        if (!h.tokens.empty() && h.tokens.back() == config.eos)
            return fmt::format("EOS hypothesis kept active: live holds {} (it ends with EOS: move "
                               "it to finished)", tokens_text(h.tokens));
    if (!same(got.live, want.live, false)) {
        bool normalised = got.live.size() == want.live.size();
        for (size_t i = 0; normalised && i < got.live.size(); ++i)
            normalised = got.live[i].tokens == want.live[i].tokens &&
                         std::fabs(got.live[i].log_prob -
                                   want.live[i].log_prob /
                                       std::pow(double(want.live[i].tokens.size()), config.alpha)) < 1e-9;
        if (normalised && config.alpha != 0)
            return "length penalty applied at every step: live log_probs must stay raw sums; "
                   "divide by lp only for finished hypotheses (and in the stopping test)";
        std::string why = fmt::format("live: got {}, expected {}", hyps_text(got.live, false),
                                      hyps_text(want.live, false));
        if (got.live.size() + got.finished.size() > size_t(config.beam_size) + before.finished.size() ||
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
            return std::string("stopped too early: a live hypothesis can still beat the best "
                               "finished one (bound it by L(b) / lp(max_length), the largest "
                               "penalty it could get)") +
                   (by_current ? "; you bounded it by its current normalised score L(b) / lp(n)" : "");
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

std::vector<std::vector<double>> table_log_probs(const TableModel& m, const std::vector<BeamHypothesis>& live) {
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
        cases.push_back({"stopping rule after a short finished hypothesis", m, {2, 1.0, 6, EOS}, 0});
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
        cases.push_back({fmt::format("random table {}", k + 1), m, {3, 0.8, 5, EOS}, int(rng.below(2))});
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
            return why.empty() ? "" : fmt::format("from live {}: {}", hyps_text(state.live, false), why);
        });
    }
    for (StepCase& k : beam_cases(rng)) {
        g.check("whole search vs seqgrad's beam_search: " + k.label, [&]() -> std::string {
            g.phase("decoding");
            BeamRun mine = run_beam(g.t.beam_step, k.model, k.config);
            g.phase("checking");
            BeamRun want = library_beam(k.model, k.config);
            if (!mine.error.empty()) return mine.error;
            if (mine.best.tokens != want.best.tokens || std::fabs(mine.best.score - want.best.score) > 1e-9)
                return fmt::format("best hypothesis {} score {:.4f}, expected {} score {:.4f} (stopped "
                                   "after {} steps)",
                                   tokens_text(mine.best.tokens), mine.best.score,
                                   tokens_text(want.best.tokens), want.best.score, mine.steps);
            BeamRun ref = run_beam(reference_beam_step, k.model, k.config);
            if (mine.steps != ref.steps)
                return fmt::format("right answer, but stopped after {} steps instead of {}", mine.steps,
                                   ref.steps);
            return "";
        });
    }
}

// ---- 15 ----

double bleu_variant(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs, bool clip,
                    bool bp_on) {
    double correct[4] = {}, total[4] = {}, hl = 0, rl = 0;
    for (size_t s = 0; s < hyps.size(); ++s) {
        hl += double(hyps[s].size()), rl += double(refs[s].size());
        for (size_t n = 1; n <= 4; ++n) {
            std::map<Tokens, int> h, r;
            for (size_t i = 0; i + n <= hyps[s].size(); ++i)
                ++h[Tokens(hyps[s].begin() + long(i), hyps[s].begin() + long(i + n))];
            for (size_t i = 0; i + n <= refs[s].size(); ++i)
                ++r[Tokens(refs[s].begin() + long(i), refs[s].begin() + long(i + n))];
            for (auto& [gram, c] : h) {
                int in_ref = r.count(gram) ? r[gram] : 0;
                correct[n - 1] += clip ? std::min(c, in_ref) : (in_ref ? c : 0);
                total[n - 1] += c;
            }
        }
    }
    double log_sum = 0;
    for (int n = 0; n < 4; ++n) {
        if (correct[n] == 0 || total[n] == 0) return 0;
        log_sum += std::log(correct[n] / total[n]);
    }
    double bp = !bp_on || hl >= rl ? 1 : std::exp(1 - rl / hl);
    return 100 * bp * std::exp(log_sum / 4);
}

double library_bleu(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs) {
    BleuOptions options;
    options.tokenize = "none";
    options.smooth_method = "none";
    std::vector<std::string> h, r;
    for (const auto& t : hyps) h.push_back(fmt::format("{}", fmt::join(t, " ")));
    for (const auto& t : refs) r.push_back(fmt::format("{}", fmt::join(t, " ")));
    return seqgrad::corpus_bleu(h, {r}, options).score;
}

void grade_bleu(Grader& g) {
    Rng rng = g.rng(15);
    const std::vector<std::string> words = {"the", "cat", "sat", "on", "mat", "a", "dog"};
    auto sentence = [&](size_t lo, size_t hi) {
        Tokens t;
        size_t n = lo + size_t(rng.below(hi - lo + 1));
        for (size_t i = 0; i < n; ++i) t.push_back(words[rng.below(words.size())]);
        return t;
    };
    auto near = [&](const Tokens& ref, size_t drop) {  // a hypothesis close to the reference
        Tokens t = ref;
        for (size_t i = 0; i < drop && !t.empty(); ++i) t.erase(t.begin() + long(rng.below(t.size())));
        return t;
    };
    struct Case {
        std::string label;
        std::vector<Tokens> hyps, refs;
    };
    std::vector<Case> cases;
    {
        Case c{"random corpus (shorter hypotheses: brevity penalty)", {}, {}};
        for (int i = 0; i < 12; ++i) {
            Tokens ref = sentence(6, 12);
            c.refs.push_back(ref), c.hyps.push_back(near(ref, rng.below(3)));
        }
        cases.push_back(c);
    }
    {
        Case c{"random corpus (longer hypotheses)", {}, {}};
        for (int i = 0; i < 10; ++i) {
            Tokens ref = sentence(5, 10), hyp = ref;
            hyp.push_back(words[rng.below(words.size())]);
            c.refs.push_back(ref), c.hyps.push_back(hyp);
        }
        cases.push_back(c);
    }
    cases.push_back({"repeated words (clipped counts)",
                     {{"the", "the", "the", "the", "cat", "sat", "on", "the", "mat"},
                      {"a", "dog", "sat", "on", "a", "mat", "a", "a"}},
                     {{"the", "cat", "sat", "on", "the", "mat"}, {"a", "dog", "sat", "on", "a", "mat"}}});
    cases.push_back({"an empty hypothesis among others",
                     {{}, {"the", "cat", "sat", "on", "the", "mat"}},
                     {{"a", "dog"}, {"the", "cat", "sat", "on", "the", "mat", "today"}}});
    cases.push_back({"every hypothesis empty", {{}, {}}, {{"the", "cat"}, {"a", "dog", "sat"}}});
    cases.push_back({"identical corpus", {{"the", "cat", "sat", "on", "the", "mat"}},
                     {{"the", "cat", "sat", "on", "the", "mat"}}});
    cases.push_back({"no 4-gram matches", {{"the", "cat", "on", "sat", "mat"}},
                     {{"the", "cat", "sat", "on", "mat"}}});
    for (const Case& k : cases) {
        g.check(k.label, [&]() -> std::string {
            g.phase("scoring");
            double got = g.t.corpus_bleu(k.hyps, k.refs);
            double want = library_bleu(k.hyps, k.refs);
            g.phase("checking");
            if (std::fabs(got - want) <= 1e-9 * std::max(1.0, std::fabs(want))) return "";
            std::string text = fmt::format("BLEU {:.6f}, expected {:.6f}", got, want);
            if (std::isnan(got)) return text + "; NaN: log(0) or 0/0 (an empty hypothesis has length 0: BP = 0, BLEU = 0)";
            double no_bp = bleu_variant(k.hyps, k.refs, true, false);
            double unclipped = bleu_variant(k.hyps, k.refs, false, true);
            if (std::fabs(got - no_bp) < 1e-9 * std::max(1.0, no_bp) && no_bp != want)
                return text + "; missing brevity penalty: BP = exp(1 − ref_len / hyp_len) when hyp_len < ref_len";
            if (std::fabs(got - unclipped) < 1e-9 * std::max(1.0, unclipped) && unclipped != want)
                return text + "; counts not clipped: an n-gram counts at most as often as the reference has it";
            if (want != 0 && std::fabs(got / want - 0.01) < 1e-9) return text + "; off by a factor of 100 (BLEU is in 0..100)";
            return text;
        });
    }
}

}  // namespace

void add_training_exercises(std::vector<Exercise>& out) {
    out.push_back({12, "12_adam_clip", "Adam with bias correction, and clip_grad_norm", "20-40",
                   "optim/adam.h (the rule) and optim/adam.cpp: Adam::update; the loop itself: "
                   "autograd/kernels/kernels_reference.cpp: adam_update; optim/clip.cpp: clip_grad_norm()",
                   grade_adam_clip});
    out.push_back({13, "13_greedy_decode", "greedy decoding over a batch, finished rows dropped", "20-40",
                   "models/decoding/decoding.cpp: greedy_decode(); models/model/step_model.h: select_rows",
                   grade_greedy});
    out.push_back({14, "14_beam_step",
                   "one beam-search step: top-k, EOS to finished, length penalty, stopping rule",
                   "45-90",
                   "models/decoding/beam_search.cpp: the comment at its top (the algorithm and the "
                   "stopping rule), ranks_before, and the selection step",
                   grade_beam});
    out.push_back({15, "15_corpus_bleu", "corpus BLEU: clipped n-gram precisions, brevity penalty",
                   "30-45", "data/bleu.h (the definition) and data/bleu.cpp: bleu_segment_stats(), "
                            "bleu_from_stats()",
                   grade_bleu});
}

}  // namespace seqgrad::grading
