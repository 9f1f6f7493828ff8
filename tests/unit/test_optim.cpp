// Optimizers, clipping and learning-rate schedules against hand-computed values, and the
// checkpoint round trip of their state.
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "seqgrad/optim/schedule.h"
#include "seqgrad/optim/sgd.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::random_tensor;

namespace {

// loss = ½ Σ x², so the gradient is x itself: the hand computations below stay short.
void quadratic_backward(Tensor x) {
    x.zero_grad();
    mul(sum(mul(x, x)), 0.5).backward();
}

NamedTensors named(const Tensor& x) {
    return {{"x", x}};
}

}  // namespace

TEST_CASE("Adam: first three steps on ½x² match the hand computation") {
    // lr 0.1, β1 0.9, β2 0.999, eps 1e-8, x0 = 1 (g = x):
    // t=1: g = 1,  m = 0.1,  v = 0.001,  m̂ = 0.1/0.1 = 1,  v̂ = 0.001/0.001 = 1
    //      x1 = 1 − 0.1 · 1/(√1 + 1e-8) = 0.900000001
    // t=2: g = 0.900000001,  m = 0.09 + 0.0900000001 = 0.1800000001,
    //      v = 0.000999 + 0.001 · 0.810000001(8) = 0.0018090000018,
    //      m̂ = m/(1 − 0.81) = 0.947368421579,  v̂ = v/(1 − 0.998001) = 0.904952477139,
    //      x2 = x1 − 0.1 · 0.947368421579/(0.951290952 + 1e-8) = 0.800412229712
    // t=3: g = 0.800412229712,  m = 0.242041223061,  v = 0.00244785073927,
    //      m̂ = m/0.271 = 0.893141044506,  v̂ = v/0.002997001 = 0.816766740909,
    //      x3 = x2 − 0.1 · 0.893141044506/(0.903751482 + 1e-8) = 0.701586274504
    // and for x0 = −2: −1.9000000005, −1.80016648662, −1.70062339281.
    Tensor x = Tensor::from_vector({2}, {1.0, -2.0}, true);
    AdamOptions o;
    o.lr = 0.1;
    Adam adam(named(x), o);
    const double expected[3][2] = {{0.900000001, -1.9000000005},
                                   {0.800412229712, -1.80016648662},
                                   {0.701586274504, -1.70062339281}};
    for (int t = 0; t < 3; ++t) {
        quadratic_backward(x);
        adam.step();
        CHECK(adam.step_count() == t + 1);
        CHECK(std::fabs(x.data()[0] - expected[t][0]) < 1e-9);
        CHECK(std::fabs(x.data()[1] - expected[t][1]) < 1e-9);
    }
    // The moments after step 3 (state tensors): m = 0.242041223061, v = 0.00244785073927.
    NamedTensors state = adam.state_tensors();
    REQUIRE(state.size() == 2);
    CHECK(state[0].first == "adam.exp_avg.x");
    CHECK(state[1].first == "adam.exp_avg_sq.x");
    CHECK(state[0].second.data()[0] == doctest::Approx(0.242041223061).epsilon(1e-10));
    CHECK(state[1].second.data()[0] == doctest::Approx(0.00244785073927).epsilon(1e-10));
}

TEST_CASE("Adam weight decay is an L2 term in the gradient, AdamW decays the weights") {
    // wd 0.1, lr 0.1, x0 = 1.
    // Adam (L2):  g = x + 0.1 x = 1.1,  m̂ = 1.1,  v̂ = 1.21,  x1 = 1 − 0.1 · 1.1/(1.1 + 1e-8)
    //             = 0.900000000909; then 0.800412229527, 0.701586274221.
    // AdamW:      x ← x (1 − 0.1 · 0.1) = 0.99, then the plain Adam step with g = 1:
    //             x1 = 0.99 − 0.1 · 1/(1 + 1e-8) = 0.890000001; then (g = x) 0.781571856954,
    //             0.675101223189.
    const double adam_l2[3] = {0.900000000909, 0.800412229527, 0.701586274221};
    const double adamw[3] = {0.890000001, 0.781571856954, 0.675101223189};
    Tensor a = Tensor::from_vector({1}, {1.0}, true), b = Tensor::from_vector({1}, {1.0}, true);
    AdamOptions o;
    o.lr = 0.1;
    o.weight_decay = 0.1;
    Adam l2(named(a), o);
    AdamW decoupled(named(b), o);
    CHECK(std::string(l2.kind()) == "adam");
    CHECK(std::string(decoupled.kind()) == "adamw");
    for (int t = 0; t < 3; ++t) {
        quadratic_backward(a);
        quadratic_backward(b);
        l2.step();
        decoupled.step();
        CHECK(std::fabs(a.data()[0] - adam_l2[t]) < 1e-9);
        CHECK(std::fabs(b.data()[0] - adamw[t]) < 1e-9);
    }
    CHECK(decoupled.state_tensors()[0].first == "adamw.exp_avg.x");
    CHECK(AdamW::defaults().weight_decay == 0.01);
}

TEST_CASE("SGD: plain, momentum, Nesterov and weight decay match hand values") {
    // lr 0.1, μ 0.9, x0 = 1, g = x.
    // momentum:  buf = 1 → x1 = 0.9;  buf = 0.9·1 + 0.9 = 1.8 → x2 = 0.72;
    //            buf = 1.62 + 0.72 = 2.34 → x3 = 0.486
    // Nesterov:  buf = 1, d = 1 + 0.9 = 1.9 → x1 = 0.81;
    //            buf = 0.9 + 0.81 = 1.71, d = 0.81 + 1.539 = 2.349 → x2 = 0.5751;
    //            buf = 1.539 + 0.5751 = 2.1141, d = 0.5751 + 1.90269 = 2.47779 → x3 = 0.327321
    // plain:     x ← 0.9 x: 0.9, 0.81, 0.729
    // wd 0.5:    d = x + 0.5 x = 1.5 x, x ← 0.85 x: 0.85, 0.7225, 0.614125
    struct Case {
        const char* name;
        double momentum;
        bool nesterov;
        double weight_decay;
        double expected[3];
    };
    const Case cases[] = {{"momentum", 0.9, false, 0, {0.9, 0.72, 0.486}},
                          {"nesterov", 0.9, true, 0, {0.81, 0.5751, 0.327321}},
                          {"plain", 0, false, 0, {0.9, 0.81, 0.729}},
                          {"weight decay", 0, false, 0.5, {0.85, 0.7225, 0.614125}}};
    for (const Case& c : cases) {
        CAPTURE(c.name);
        Tensor x = Tensor::from_vector({1}, {1.0}, true);
        SGD sgd(named(x), 0.1, c.momentum, c.nesterov, c.weight_decay);
        for (int t = 0; t < 3; ++t) {
            quadratic_backward(x);
            sgd.step();
            CHECK(x.data()[0] == doctest::Approx(c.expected[t]).epsilon(1e-12));
        }
        CHECK(sgd.state_tensors().size() == (c.momentum > 0 ? 1u : 0u));
    }
    Tensor x = Tensor::from_vector({1}, {1.0}, true);
    CHECK_THROWS_WITH_AS(SGD(named(x), 0.1, 0, true), "SGD: Nesterov momentum needs momentum > 0",
                         Error);
}

TEST_CASE("optimizers skip parameters without a gradient, zero_grad zeroes gradients") {
    Tensor used = Tensor::from_vector({1}, {1.0}, true);
    Tensor unused = Tensor::from_vector({1}, {5.0}, true);
    AdamOptions o;
    o.lr = 0.1;
    Adam adam({{"used", used}, {"unused", unused}}, o);
    quadratic_backward(used);
    adam.step();
    CHECK(unused.data()[0] == 5.0);
    CHECK(used.data()[0] != 1.0);
    adam.zero_grad();
    CHECK(used.grad_data()[0] == 0.0);
    CHECK_THROWS_AS(Adam({{"a", used}, {"a", unused}}), Error);
    CHECK_THROWS_AS(adam.set_lr(-1), Error);
    AdamOptions bad;
    bad.beta1 = 1.0;
    CHECK_THROWS_AS(Adam(named(used), bad), Error);
}

TEST_CASE("Adam converges on a quadratic bowl") {
    Tensor x = random_tensor({10}, 5, true, -3, 3);
    AdamOptions o;
    o.lr = 0.05;
    Adam adam(named(x), o);
    for (int t = 0; t < 500; ++t) {
        quadratic_backward(x);
        adam.step();
    }
    for (real v : x.to_vector()) CHECK(std::fabs(v) < 1e-2);
}

TEST_CASE("clip_grad_norm: global norm, exact post-clip norm, returns the pre-clip norm") {
    Tensor a = Tensor::from_vector({2}, {3.0, 0.0}, true);
    Tensor b = Tensor::from_vector({1, 2}, {0.0, 4.0}, true);
    Tensor no_grad = Tensor::from_vector({3}, {1, 2, 3}, true);  // never got a gradient
    auto set_grads = [&](double scale) {
        a.mutable_grad_data()[0] = 3 * scale;
        a.mutable_grad_data()[1] = 0;
        b.mutable_grad_data()[0] = 0;
        b.mutable_grad_data()[1] = 4 * scale;
    };
    std::vector<Tensor> params{a, b, no_grad};

    set_grads(1);  // ‖g‖ = 5
    CHECK(grad_norm(params) == 5.0);
    CHECK(clip_grad_norm(params, 2.0) == 5.0);
    // scaled by 2 / (5 + 1e-6): the norm is now 2 · 5/(5 + 1e-6) = 2 (1 − 2e-7)
    CHECK(std::fabs(grad_norm(params) - 2.0) / 2.0 < 1e-6);
    CHECK(a.grad_data()[0] == doctest::Approx(3 * 2 / (5 + 1e-6)).epsilon(1e-15));
    CHECK_FALSE(no_grad.has_grad());

    set_grads(1);  // below the limit: untouched, bit for bit
    CHECK(clip_grad_norm(params, 10.0) == 5.0);
    CHECK(a.grad_data()[0] == 3.0);
    CHECK(b.grad_data()[1] == 4.0);
    CHECK(clip_grad_norm(params, std::numeric_limits<double>::infinity()) == 5.0);

    // Random gradients, many sizes: post-clip norm = min(norm, max_norm) to ~1e-6 relative.
    for (double max_norm : {0.1, 1.0, 3.0, 100.0}) {
        Tensor p = random_tensor({7, 5}, 11, true), q = random_tensor({13}, 12, true);
        sum(mul(mul(p, p), 3.0)).backward();
        sum(mul(q, q)).backward();
        std::vector<Tensor> ps{p, q};
        double before = grad_norm(ps);
        CHECK(clip_grad_norm(ps, max_norm) == before);
        double after = grad_norm(ps);
        CHECK(std::fabs(after - std::min(before, max_norm)) / std::min(before, max_norm) < 1e-6);
    }

    CHECK_THROWS_AS(clip_grad_norm(params, 0.0), Error);
    NamedTensors named_params{{"a", a}, {"b", b}};
    set_grads(1);
    CHECK(clip_grad_norm(named_params, 1.0) == 5.0);
}

namespace {

// Adam, AdamW, Adam with an L2 term, and SGD in each of its modes, over the parameters `ps`.
const char* const kOptimizers[] = {"adam",         "adamw",        "adam l2",        "sgd",
                                   "sgd momentum", "sgd nesterov", "sgd momentum wd"};
std::unique_ptr<Optimizer> make_optimizer(const std::string& kind, const NamedTensors& ps) {
    if (kind.rfind("sgd", 0) == 0) {
        const bool momentum = kind != "sgd";
        return std::make_unique<SGD>(ps, 0.05, momentum ? 0.9 : 0.0, kind == "sgd nesterov",
                                     kind == "sgd momentum wd" ? 0.01 : 0.0);
    }
    AdamOptions o;
    o.lr = 0.01;
    o.weight_decay = kind == "adam" ? 0 : 0.05;
    if (kind == "adamw") return std::make_unique<AdamW>(ps, o);
    return std::make_unique<Adam>(ps, o);
}

// Two parameters and a gradient that depends on them and on the step, like real training.
struct Problem {
    Tensor w = random_tensor({3, 5}, 91), u = random_tensor({7}, 92);
    NamedTensors named() const { return {{"w", w}, {"u", u}}; }
    std::vector<Tensor> list() const { return {w, u}; }
    void backward(int t, double size) {
        w.zero_grad();
        u.zero_grad();
        Tensor loss =
            add(sum(mul(tanh(add(mul(w, w), real(0.1) * t)), real(size))), sum(mul(u, u)));
        loss.backward();
    }
};

void check_same(const Tensor& a, const Tensor& b) {
    const std::vector<real> x = a.to_vector(), y = b.to_vector();
    for (size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(x[i] - y[i]) < 1e-12);
}

}  // namespace

TEST_CASE("Optimizer::step(s) equals step() after scaling the gradients by s") {
    for (const char* kind : kOptimizers) {
        CAPTURE(kind);
        Problem a, b;
        auto scaled = make_optimizer(kind, a.named()), plain = make_optimizer(kind, b.named());
        const double scales[] = {0.3, 1.0, 0.0371, 0.9};
        for (int t = 0; t < 4; ++t) {
            a.backward(t, 2.0);
            b.backward(t, 2.0);
            scaled->step(scales[t]);
            scale_grads(b.list(), scales[t]);
            plain->step();
            check_same(a.w, b.w);
            check_same(a.u, b.u);
            for (size_t k = 0; k < scaled->state_tensors().size(); ++k)
                check_same(scaled->state_tensors()[k].second, plain->state_tensors()[k].second);
        }
        CHECK(scaled->step_count() == 4);
        CHECK_THROWS_AS(scaled->step(-1), Error);
        CHECK_THROWS_AS(scaled->step(std::numeric_limits<double>::quiet_NaN()), Error);
        CHECK_THROWS_AS(scaled->step(std::numeric_limits<double>::infinity()), Error);
        CHECK(scaled->step_count() == 4);  // a rejected scale takes no step
    }
}

TEST_CASE("clip_grad_norm_factor + step(scale) gives the parameters of clip_grad_norm + step") {
    for (const char* kind : kOptimizers)
        for (double max_norm : {0.5, 1000.0, std::numeric_limits<double>::infinity()}) {
            CAPTURE(kind);
            CAPTURE(max_norm);
            Problem a, b;
            auto fused = make_optimizer(kind, a.named()),
                 separate = make_optimizer(kind, b.named());
            for (int t = 0; t < 3; ++t) {
                a.backward(t, 3.0 - t);  // norms on both sides of 0.5
                b.backward(t, 3.0 - t);
                const GradClip clip = clip_grad_norm_factor(a.list(), max_norm);
                const double norm = clip_grad_norm(b.list(), max_norm);
                CHECK(clip.norm == norm);
                CHECK(clip.clipped() == (max_norm / (norm + 1e-6) < 1));
                CHECK(clip.scale == (clip.clipped() ? max_norm / (norm + 1e-6) : 1.0));
                if (max_norm == 0.5) CHECK(clip.clipped());
                fused->step(clip.scale);
                separate->step();
                check_same(a.w, b.w);
                check_same(a.u, b.u);
            }
        }
    Tensor a = Tensor::from_vector({2}, {0, 0}, true);
    a.mutable_grad_data()[0] = 1;
    a.mutable_grad_data()[1] = real(std::numeric_limits<double>::infinity());
    const GradClip clip = clip_grad_norm_factor({a}, 1.0);
    CHECK_FALSE(std::isfinite(clip.norm));
    CHECK(clip.scale == 1.0);  // not 0 or NaN: the caller decides what to do
    CHECK_THROWS_AS(clip_grad_norm_factor({a}, 0.0), Error);
}

TEST_CASE("clip_grad_norm reports a non-finite norm and leaves the gradients alone") {
    for (double bad :
         {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        Tensor a = Tensor::from_vector({2}, {0, 0}, true);
        a.mutable_grad_data()[0] = 1;
        a.mutable_grad_data()[1] = real(bad);
        double norm = clip_grad_norm({a}, 1.0);
        CHECK_FALSE(std::isfinite(norm));
        CHECK(a.grad_data()[0] == 1.0);  // not scaled by NaN or 0
    }
}

TEST_CASE("clip_grad_value clamps every element") {
    Tensor a = Tensor::from_vector({4}, {0, 0, 0, 0}, true);
    const real g[4] = {-3, -0.5, 0.25, 7};
    for (int i = 0; i < 4; ++i) a.mutable_grad_data()[i] = g[i];
    clip_grad_value({a}, 1.0);
    CHECK(a.grad().to_vector() == std::vector<real>{-1, -0.5, 0.25, 1});
    CHECK_THROWS_AS(clip_grad_value({a}, -1), Error);
}

TEST_CASE("learning-rate schedules at known steps") {
    ConstantLr constant(0.5);
    CHECK(constant.lr_at(0) == 0.5);
    CHECK(constant.lr_at(1000) == 0.5);
    ConstantLr warm(0.5, 4);  // 0.125, 0.25, 0.375, 0.5, 0.5
    CHECK(warm.lr_at(0) == 0.125);
    CHECK(warm.lr_at(2) == 0.375);
    CHECK(warm.lr_at(3) == 0.5);
    CHECK(warm.lr_at(10) == 0.5);

    StepDecay step(1.0, 10, 0.5);  // steps 0..9: 1, 10..19: 0.5, 20..: 0.25
    CHECK(step.lr_at(0) == 1.0);
    CHECK(step.lr_at(9) == 1.0);
    CHECK(step.lr_at(10) == 0.5);
    CHECK(step.lr_at(25) == 0.25);

    WarmupInverseSqrt noam(1.0, 4);  // t = step + 1: t/4 up to t = 4, then √(4/t)
    CHECK(noam.lr_at(0) == 0.25);
    CHECK(noam.lr_at(1) == 0.5);
    CHECK(noam.lr_at(3) == 1.0);
    CHECK(noam.lr_at(15) == doctest::Approx(0.5));                      // √(4/16)
    CHECK(noam.lr_at(99) == doctest::Approx(0.2));                      // √(4/100)
    CHECK(WarmupInverseSqrt(1.0, 0).lr_at(3) == doctest::Approx(0.5));  // warmup 0 acts as 1

    WarmupCosine cosine(1.0, 2, 12, 0.1);  // warmup 0.5, 1; then cosine from 1 to 0.1 over 10
    CHECK(cosine.lr_at(0) == 0.5);
    CHECK(cosine.lr_at(1) == 1.0);
    CHECK(cosine.lr_at(2) == 1.0);                    // p = 0
    CHECK(cosine.lr_at(7) == doctest::Approx(0.55));  // p = 0.5: 0.1 + 0.9 · 0.5
    CHECK(cosine.lr_at(4) ==
          doctest::Approx(0.1 + 0.9 * 0.5 * (1 + std::cos(3.14159265358979323846 * 0.2))));
    CHECK(cosine.lr_at(12) == doctest::Approx(0.1));  // p = 1
    CHECK(cosine.lr_at(500) == doctest::Approx(0.1));
    CHECK_THROWS_AS(WarmupCosine(1.0, 10, 10), Error);
    CHECK_THROWS_AS(StepDecay(1.0, 0, 0.5), Error);
    CHECK_THROWS_AS(constant.lr_at(-1), Error);
}

TEST_CASE("ReduceOnPlateau follows torch's ReduceLROnPlateau (mode min)") {
    ReduceOnPlateau plateau(1.0, 0.5, 2);  // patience 2
    // 10 (best), 9 (best), 9, 9 (2 bad: not yet), 9 (3 bad > 2: halve), 8 (best), 8, 8, 8 (halve)
    const double metrics[] = {10, 9, 9, 9, 9, 8, 8, 8, 8};
    const double lrs[] = {1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25};
    for (int i = 0; i < 9; ++i) {
        plateau.observe(metrics[i]);
        CAPTURE(i);
        CHECK(plateau.lr_at(i) == lrs[i]);
    }
    // A tiny improvement below the relative threshold 1e-4 does not count.
    ReduceOnPlateau strict(1.0, 0.5, 0);
    strict.observe(1.0);
    strict.observe(0.99999);  // not < 1 · (1 − 1e-4): bad → reduce (patience 0)
    CHECK(strict.lr() == 0.5);
    // min_lr floor and cooldown: after a reduction one validation is not counted.
    ReduceOnPlateau floor(1.0, 0.1, 0, 0.05, 1);
    floor.observe(5);  // best
    floor.observe(5);  // bad 1 > 0 → 0.1, cooldown 1
    CHECK(floor.lr() == doctest::Approx(0.1));
    floor.observe(5);  // cooldown: not counted
    CHECK(floor.lr() == doctest::Approx(0.1));
    floor.observe(5);  // bad → max(0.01, 0.05) = 0.05
    CHECK(floor.lr() == doctest::Approx(0.05));
    floor.observe(5);  // cooldown
    floor.observe(5);  // would reduce, but already at min_lr
    CHECK(floor.lr() == doctest::Approx(0.05));

    // State round trip: a restored schedule continues identically.
    ReduceOnPlateau a(1.0, 0.5, 1, 0, 1), b(1.0, 0.5, 1, 0, 1);
    for (double m : {3.0, 2.0, 2.5}) a.observe(m);
    b.load_state(nlohmann::json::parse(a.state_json().dump()));
    for (double m : {2.5, 2.4, 2.6, 2.6, 1.0, 1.5}) {
        a.observe(m);
        b.observe(m);
        CHECK(a.lr() == b.lr());
        CHECK(a.best() == b.best());
        CHECK(a.bad_validations() == b.bad_validations());
    }
    CHECK_THROWS_AS(b.load_state(nlohmann::json::object()), Error);
}

TEST_CASE("optimizer state round trip: a restored optimizer takes identical steps") {
    // A gradient that changes with the parameters and with the step, like real training.
    auto backward_at = [](Tensor w, Tensor u, int t) {
        w.zero_grad();
        u.zero_grad();
        Tensor loss = sum(mul(tanh(add(mul(w, w), real(0.1) * t)), u));
        loss.backward();
    };
    auto copy = [](const Tensor& t) { return Tensor::from_vector(t.shape(), t.to_vector(), true); };
    for (const char* kind : {"adam", "adamw", "sgd"}) {
        CAPTURE(kind);
        auto make = [&](const Tensor& w, const Tensor& u) -> std::unique_ptr<Optimizer> {
            NamedTensors params{{"layer.w", w}, {"layer.u", u}};
            if (std::string(kind) == "sgd") return std::make_unique<SGD>(params, 0.05, 0.9, true);
            AdamOptions o;
            o.lr = 0.01;
            o.weight_decay = 0.01;
            if (std::string(kind) == "adamw") return std::make_unique<AdamW>(params, o);
            return std::make_unique<Adam>(params, o);
        };
        Tensor w = random_tensor({3, 4}, 21), u = random_tensor({3, 4}, 22);
        auto original = make(w, u);
        for (int t = 0; t < 3; ++t) {
            backward_at(w, u, t);
            original->step();
        }
        // Checkpoint: copies of the parameters and the state, the JSON through text.
        Tensor w2 = copy(w), u2 = copy(u);
        NamedTensors saved;
        for (auto& [name, tensor] : original->state_tensors())
            saved.emplace_back(name, tensor.detach());
        nlohmann::json saved_json = nlohmann::json::parse(original->state_json().dump());
        CHECK(saved_json.at("step") == 3);
        CHECK(saved_json.at("optimizer") == kind);

        auto restored = make(w2, u2);
        restored->load_state(saved, saved_json);
        CHECK(restored->step_count() == 3);
        for (int t = 3; t < 6; ++t) {
            backward_at(w, u, t);
            original->step();
            backward_at(w2, u2, t);
            restored->step();
        }
        CHECK(w.to_vector() == w2.to_vector());  // bit for bit
        CHECK(u.to_vector() == u2.to_vector());
    }
}

TEST_CASE("optimizer load_state rejects state that does not fit") {
    Tensor w = random_tensor({2, 2}, 31);
    Adam adam({{"w", w}});
    NamedTensors state = adam.state_tensors();
    nlohmann::json json = adam.state_json();
    SGD sgd({{"w", w}}, 0.1, 0.9);
    CHECK_THROWS_WITH_AS(sgd.load_state(state, json),
                         "optimizer state was saved by 'adam', this optimizer is 'sgd'", Error);
    CHECK_THROWS_WITH_AS(adam.load_state({state[0]}, json),
                         "optimizer state: missing tensor 'adam.exp_avg_sq.w'", Error);
    NamedTensors wrong_shape{state[0], {"adam.exp_avg_sq.w", Tensor::zeros({4})}};
    CHECK_THROWS_WITH_AS(adam.load_state(wrong_shape, json),
                         "optimizer state: 'adam.exp_avg_sq.w' is [4], the parameter is [2,2]",
                         Error);
    NamedTensors extra = state;
    extra.emplace_back("adam.exp_avg.old_layer", Tensor::zeros({2}));
    CHECK_THROWS_WITH_AS(
        adam.load_state(extra, json),
        "optimizer state: tensor 'adam.exp_avg.old_layer' belongs to no parameter of this "
        "optimizer",
        Error);
    CHECK_NOTHROW(adam.load_state(state, json));
}

TEST_CASE(
    "zeroing the gradients in the update is step then zero_grad, bit for bit, for every update "
    "rule") {
    // a parameter large enough to be cut between threads, and a small one
    auto make = [] {
        NamedTensors params{{"big", random_tensor({70000}, 31)}, {"small", random_tensor({5}, 32)}};
        return params;
    };
    auto set_grads = [](const NamedTensors& params, int step) {
        Rng rng(uint64_t(40 + step));
        for (const auto& [_, p] : params) {
            real* g = Tensor(p).mutable_grad_data();
            for (int64_t i = 0; i < p.numel(); ++i) g[i] = real(rng.normal());
        }
    };
    using Make = std::function<std::unique_ptr<Optimizer>(const NamedTensors&)>;
    std::vector<std::pair<const char*, Make>> rules{
        {"adam", [](const NamedTensors& p) { return std::make_unique<Adam>(p); }},
        {"adam l2",
         [](const NamedTensors& p) {
             AdamOptions o;
             o.weight_decay = 0.01;
             return std::make_unique<Adam>(p, o);
         }},
        {"adamw", [](const NamedTensors& p) { return std::make_unique<AdamW>(p); }},
        {"sgd momentum",
         [](const NamedTensors& p) { return std::make_unique<SGD>(p, 0.1, 0.9, true, 0.001); }}};
    for (const auto& [name, make_optimizer] : rules) {
        INFO(name);
        const NamedTensors separate = make(), fused = make();
        auto one = make_optimizer(separate), two = make_optimizer(fused);
        two->set_zero_grads_in_step(true);
        for (int step = 0; step < 3; ++step) {
            const double scale = step == 1 ? 0.5 : 1.0;  // scaled and unscaled loops
            set_grads(separate, step);
            set_grads(fused, step);
            one->step(scale);
            one->zero_grad();
            two->set_grad_scale(scale);
            two->step();
        }
        for (size_t k = 0; k < separate.size(); ++k) {
            CHECK(separate[k].second.to_vector() == fused[k].second.to_vector());
            const std::vector<real> zeros(size_t(fused[k].second.numel()), 0);
            CHECK(fused[k].second.grad().to_vector() == zeros);
        }
    }
    // the same validation as step
    const NamedTensors params = make();
    Adam adam(params);
    CHECK_THROWS_AS(adam.set_grad_scale(-1), Error);
}

TEST_CASE(
    "after an update that zeroed the gradients, zero_grad still zeroes what a backward wrote") {
    Tensor w = Tensor::from_vector({3}, {1, 2, 3}, true);
    Adam adam({{"w", w}});
    adam.set_zero_grads_in_step(true);
    sum(mul(w, w)).backward();
    adam.step();
    CHECK(w.grad().to_vector() == std::vector<real>{0, 0, 0});
    adam.zero_grad();  // nothing to do: no backward since the step
    sum(mul(w, w)).backward();
    CHECK(w.grad().to_vector() != std::vector<real>{0, 0, 0});
    adam.zero_grad();  // a backward ran since: the pass is made
    CHECK(w.grad().to_vector() == std::vector<real>{0, 0, 0});
}

TEST_CASE("a scale set for the next step is used once, and zero_grad forgets it") {
    auto run = [](bool forget) {
        Tensor w = Tensor::from_vector({2}, {1, -1}, true);
        SGD sgd({{"w", w}}, 1.0);
        for (int step = 0; step < 2; ++step) {
            sgd.zero_grad();
            sum(w).backward();
            if (step == 0 || forget) sgd.set_grad_scale(0.5);
            if (forget) {
                sgd.zero_grad();
                sum(w).backward();
            }
            sgd.step();
        }
        return w.to_vector();
    };
    CHECK(run(false) == std::vector<real>{1 - 0.5 - 1, -1 - 0.5 - 1});  // 0.5 once, then 1
    CHECK(run(true) == std::vector<real>{1 - 1 - 1, -1 - 1 - 1});       // forgotten: 1, 1
}
