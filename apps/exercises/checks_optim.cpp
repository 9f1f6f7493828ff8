// Exercise 12: Adam with bias correction, and clip_grad_norm.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "apps/exercises/grader.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"

namespace seqgrad::grading {
namespace {

// ---- 12 ----

// Adam by hand with one slip switched on, for the diagnoses.
std::vector<double> adam_variant(std::vector<double> p,
                                 const std::vector<std::vector<double>>& grads, double lr,
                                 double b1, double b2, double eps, int slip) {
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

void grade_adam(Grader& g) {
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
            std::vector<std::vector<double>> grads(size_t(k.steps),
                                                   std::vector<double>(size_t(k.n)));
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
                    p.mutable_grad_data()[i] = grad[size_t(i)] =
                        real(grads[size_t(t - 1)][size_t(i)]);
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
}

void grade_clip(Grader& g) {
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
                    for (int64_t i = 0; i < n; ++i)
                        p.mutable_grad_data()[i] = real(k.scale * r.uniform(-1, 1));
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
            if (!(norm == want_norm ||
                  std::fabs(norm - want_norm) <= 1e-12 * std::fabs(want_norm) ||
                  (std::isnan(norm) && std::isnan(want_norm)))) {
                if (std::fabs(norm - want_norm * want_norm) < 1e-9 * want_norm * want_norm)
                    return fmt::format("returned ‖g‖² = {}: the norm is its square root", norm);
                return fmt::format("returned {}, expected the norm before clipping {}", norm,
                                   want_norm);
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
            std::string why =
                compare("gradients after clipping (all parameters, flattened)", got_g, want_g, c);
            if (!why.empty() && std::isnan(want_norm))
                why += "; a non-finite norm must leave the gradients untouched";
            return why;
        });
    }
}

void grade_adam_clip(Grader& g) {
    grade_adam(g);
    grade_clip(g);
}

}  // namespace

void add_optimizer_exercise(std::vector<Exercise>& out) {
    out.push_back(
        {12, "12_adam_clip", "Adam with bias correction, and clip_grad_norm", "20-40",
         "optim/adam.h (the rule) and optim/adam.cpp: adam_update_reference (the loop over one "
         "parameter) and Adam::update; optim/clip.cpp: clip_grad_norm()",
         grade_adam_clip});
}

}  // namespace seqgrad::grading
