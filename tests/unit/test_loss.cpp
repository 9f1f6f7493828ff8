// Cross-entropy: the fused op (hand-written backward) and its composed twin, gradient-checked
// in double, equal to each other, and right on the cases that break naive implementations:
// ignore_index, an all-ignored batch, label smoothing, logits of ±1e4, bad targets.
#include <algorithm>
#include <cmath>
#include <string>

#include "seqgrad/layers/loss.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;

namespace {

const char* name(Reduction r) {
    return r == Reduction::mean ? "mean" : r == Reduction::sum ? "sum" : "none";
}

// Value and gradient of a loss function at `logits` (a fresh copy of it, so calls don't mix).
struct ValueAndGradient {
    std::vector<real> value, gradient;
};
template <class LossFn>
ValueAndGradient evaluate(LossFn loss_fn, const Tensor& logits) {
    Tensor x = Tensor::from_vector(logits.shape(), logits.to_vector(), true);
    Tensor loss = loss_fn(x);
    // Weight the outputs of Reduction::none so that each row gets its own upstream gradient.
    Tensor upstream = random_tensor(loss.shape(), 99, false);
    loss.backward(upstream);
    return {loss.to_vector(), x.grad().to_vector()};
}

}  // namespace

TEST_CASE("cross_entropy: known value, PyTorch's definition") {
    Tensor logits = Tensor::from_vector({2, 3}, {1, 2, 3, 0.5, -1, 2});
    // row 0, target 2: ln(e + e² + e³) − 3;  row 1, target 0: ln(e^0.5 + e^-1 + e²) − 0.5
    double row0 = std::log(std::exp(1.) + std::exp(2.) + std::exp(3.)) - 3;
    double row1 = std::log(std::exp(0.5) + std::exp(-1.) + std::exp(2.)) - 0.5;
    CHECK(cross_entropy(logits, {2, 0}).item() ==
          doctest::Approx((row0 + row1) / 2).epsilon(1e-14));
    CHECK(cross_entropy(logits, {2, 0}, -100, Reduction::sum).item() ==
          doctest::Approx(row0 + row1).epsilon(1e-14));
    Tensor none = cross_entropy(logits, {2, 0}, -100, Reduction::none);
    CHECK(none.shape() == Shape{2});
    CHECK(none.data()[0] == doctest::Approx(row0).epsilon(1e-14));
    CHECK(cross_entropy(logits, {2, 0}).item() ==
          doctest::Approx(0.4076059644443804 / 2 + row1 / 2).epsilon(1e-14));

    // Label smoothing ε: (1 − ε) nll + ε mean_j(−log p_j), e.g. row 0 with ε = 0.1.
    double lse0 = row0 + 3, eps = 0.1;
    double smooth0 = ((lse0 - 1) + (lse0 - 2) + (lse0 - 3)) / 3;
    CHECK(cross_entropy(logits, {2, -100}, -100, Reduction::mean, 0.1).item() ==
          doctest::Approx((1 - eps) * row0 + eps * smooth0).epsilon(1e-14));
}

TEST_CASE(
    "cross_entropy: fused and composed pass gradcheck (ignore_index, smoothing, reductions)") {
    const std::vector<int32_t> targets{3, 0, -100, 4, 1};  // row 2 is padding
    for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none})
        for (real smoothing : {0.0, 0.2}) {
            CAPTURE(name(reduction));
            CAPTURE(smoothing);
            Tensor logits = random_tensor({5, 6}, 21, true, -3, 3);
            expect_gradcheck(
                [&](auto& x) { return cross_entropy(x[0], targets, -100, reduction, smoothing); },
                {logits});
            expect_gradcheck(
                [&](auto& x) {
                    return cross_entropy_composed(x[0], targets, -100, reduction, smoothing);
                },
                {logits});
            // Logits that are an op's result (as in a model): their gradient buffer does not
            // exist when the cross-entropy's backward runs, which then hands over its own.
            expect_gradcheck(
                [&](auto& x) {
                    return cross_entropy(mul(x[0], real(1.5)), targets, -100, reduction, smoothing);
                },
                {logits});
        }
}

TEST_CASE("cross_entropy: fused == composed in value and gradient (1e-12)") {
    struct Case {
        std::vector<int32_t> targets;
        int32_t ignore_index;
    };
    const std::vector<Case> cases{
        {{0, 1, 2, 3, 4, 5, 6}, -100},
        {{0, 0, 7, 2, 0, 5, 0}, 0},  // PAD = 0 ignored, as the seq2seq training uses it
        {{-1, 3, -1, 1, 2, 2, -1}, -1},
    };
    for (const Case& c : cases)
        for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none})
            for (real smoothing : {0.0, 0.1, 1.0}) {
                CAPTURE(name(reduction));
                CAPTURE(smoothing);
                CAPTURE(c.ignore_index);
                Tensor logits = random_tensor({7, 8}, 31, false, -5, 5);
                auto fused = evaluate(
                    [&](const Tensor& x) {
                        return cross_entropy(x, c.targets, c.ignore_index, reduction, smoothing);
                    },
                    logits);
                auto composed = evaluate(
                    [&](const Tensor& x) {
                        return cross_entropy_composed(x, c.targets, c.ignore_index, reduction,
                                                      smoothing);
                    },
                    logits);
                // The logits as an op's result (× 1, exact): the backward hands its buffer over
                // as their gradient instead of adding into a zero-filled one; the same values.
                auto fused_non_leaf = evaluate(
                    [&](const Tensor& x) {
                        return cross_entropy(mul(x, real(1)), c.targets, c.ignore_index, reduction,
                                             smoothing);
                    },
                    logits);
                REQUIRE(fused.value.size() == composed.value.size());
                for (size_t i = 0; i < fused.value.size(); ++i)
                    CHECK(std::fabs(fused.value[i] - composed.value[i]) < 1e-12);
                for (size_t i = 0; i < fused.gradient.size(); ++i)
                    CHECK(std::fabs(fused.gradient[i] - composed.gradient[i]) < 1e-12);
                CHECK(fused_non_leaf.gradient == fused.gradient);
            }
}

TEST_CASE("cross_entropy: right gradient when the logits also feed another op, in both orders") {
    // z = 1.5 x feeds the cross-entropy and o = Σ tanh(z) z. Backward runs the users of z in
    // reverse order of the graph walk, which visits an op's inputs left to right: in
    // add(loss, o), o's backward runs first and allocates z's gradient, into which the
    // cross-entropy then adds; in add(o, loss), the cross-entropy runs first and hands its own
    // buffer over as z's gradient, into which o then accumulates. The upstream gradient of the
    // cross-entropy is 1, 0.7 or (Reduction::none) a different weight per row.
    const std::vector<int32_t> targets{3, 0, -100, 4, 1};
    const Tensor row_weights = random_tensor({5}, 77, false);
    for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none})
        for (real weight : {1.0, 0.7})
            for (bool loss_first : {true, false}) {
                if (reduction == Reduction::none && weight != 1) continue;  // weighted anyway
                CAPTURE(name(reduction));
                CAPTURE(weight);
                CAPTURE(loss_first);
                auto total = [&](const Tensor& x, bool fused) {
                    Tensor z = mul(x, real(1.5));
                    Tensor ce = fused ? cross_entropy(z, targets, -100, reduction, 0.1)
                                      : cross_entropy_composed(z, targets, -100, reduction, 0.1);
                    Tensor loss = reduction == Reduction::none ? sum(mul(ce, row_weights))
                                  : weight == 1                ? ce
                                                               : mul(ce, weight);
                    Tensor other = sum(mul(tanh(z), z));
                    return loss_first ? add(loss, other) : add(other, loss);
                };
                Tensor logits = random_tensor({5, 6}, 81, true, -3, 3);
                expect_gradcheck([&](auto& x) { return total(x[0], true); }, {logits});
                Tensor a = Tensor::from_vector(logits.shape(), logits.to_vector(), true);
                Tensor b = Tensor::from_vector(logits.shape(), logits.to_vector(), true);
                total(a, true).backward();
                total(b, false).backward();
                const std::vector<real> fused = a.grad().to_vector(),
                                        composed = b.grad().to_vector();
                for (size_t i = 0; i < fused.size(); ++i)
                    CHECK(std::fabs(fused[i] - composed[i]) < 1e-12);
            }
}

TEST_CASE("cross_entropy: ignored rows count for nothing and get exactly zero gradient") {
    Tensor full = random_tensor({4, 5}, 41, true);
    Tensor loss = cross_entropy(full, {1, 0, 3, 0}, 0);  // rows 1 and 3 are padding
    loss.backward();
    // The mean is over the two real rows only: equal to the loss of those rows alone.
    Tensor real_rows =
        Tensor::from_vector({2, 5}, {full.data()[0], full.data()[1], full.data()[2], full.data()[3],
                                     full.data()[4], full.data()[10], full.data()[11],
                                     full.data()[12], full.data()[13], full.data()[14]});
    CHECK(loss.item() == doctest::Approx(cross_entropy(real_rows, {1, 3}).item()).epsilon(1e-14));
    for (int j = 0; j < 5; ++j) {
        CHECK(full.grad_data()[5 + j] == 0.0);
        CHECK(full.grad_data()[15 + j] == 0.0);
    }
    CHECK(count_targets({1, 0, 3, 0}, 0) == 2);
    CHECK(count_targets({1, 0, 3, 0}) == 4);
}

TEST_CASE("cross_entropy: an all-ignored batch gives 0 and zero gradients, not NaN") {
    for (Reduction reduction : {Reduction::mean, Reduction::sum})
        for (bool fused : {true, false}) {
            CAPTURE(name(reduction));
            CAPTURE(fused);
            Tensor logits = random_tensor({3, 4}, 51, true);
            std::vector<int32_t> targets{0, 0, 0};
            Tensor loss = fused ? cross_entropy(logits, targets, 0, reduction, 0.1)
                                : cross_entropy_composed(logits, targets, 0, reduction, 0.1);
            CHECK(loss.item() == 0.0);
            loss.backward();
            for (real g : logits.grad().to_vector()) CHECK(g == 0.0);
        }
    // Also with no rows at all.
    Tensor empty = Tensor::zeros({0, 4}, true);
    CHECK(cross_entropy(empty, {}).item() == 0.0);
}

TEST_CASE("cross_entropy: stable for logits of ±1e4") {
    Tensor logits = Tensor::from_vector({3, 3}, {1e4, -1e4, 0, -1e4, 1e4, 1e4, 0, 0, -1e4}, true);
    std::vector<int32_t> targets{0, 0, 2};
    Tensor none = cross_entropy(logits, targets, -100, Reduction::none);
    CHECK(none.data()[0] == doctest::Approx(0).epsilon(1e-12));    // p = 1
    CHECK(none.data()[1] == doctest::Approx(2e4 + std::log(2.)));  // lse = 1e4 + ln 2
    CHECK(none.data()[2] == doctest::Approx(1e4 + std::log(2.)));
    for (real smoothing : {0.0, 0.1})
        for (bool fused : {true, false}) {
            Tensor x = Tensor::from_vector({3, 3}, logits.to_vector(), true);
            Tensor loss =
                fused ? cross_entropy(x, targets, -100, Reduction::mean, smoothing)
                      : cross_entropy_composed(x, targets, -100, Reduction::mean, smoothing);
            CHECK(std::isfinite(loss.item()));
            loss.backward();
            for (real g : x.grad().to_vector()) CHECK(std::isfinite(g));
            // Row 0 is certain and right, p = (1, 0, 0): its gradient (p − q) / 3 on the target
            // is (1 − (1 − ε + ε/3)) / 3 = (2ε/3) / 3, and −(ε/3) / 3 on class 1.
            CHECK(x.grad_data()[0] == doctest::Approx(2 * smoothing / 9).epsilon(1e-12));
            CHECK(x.grad_data()[1] == doctest::Approx(-smoothing / 9).epsilon(1e-12));
        }
}

TEST_CASE("cross_entropy: bad targets and shapes give clear errors") {
    Tensor logits = random_tensor({2, 3}, 61);
    CHECK_THROWS_WITH_AS(cross_entropy(logits, {0, 3}),
                         "cross_entropy: target 3 at row 1 is out of range [0, 3) (ignore_index "
                         "-100)",
                         Error);
    CHECK_THROWS_AS(cross_entropy_composed(logits, {0, 3}), Error);
    CHECK_THROWS_AS(cross_entropy(logits, {-1, 0}), Error);
    CHECK_THROWS_WITH_AS(cross_entropy(logits, {0}), "cross_entropy: 1 targets for logits [2,3]",
                         Error);
    CHECK_THROWS_AS(cross_entropy(random_tensor({2, 3, 1}, 62), {0, 1}), Error);
    CHECK_THROWS_AS(cross_entropy(logits, {0, 1}, -100, Reduction::mean, 1.5), Error);
    // ignore_index itself may lie inside [0, V): it is then a class nobody is scored on.
    CHECK_NOTHROW(cross_entropy(logits, {0, 1}, 1));
}

TEST_CASE("cross_entropy: num_correct counts argmax == target, first maximum on ties") {
    // rows: 0 right, 1 wrong, 2 tie won by an earlier class (wrong), 3 tie where the target is
    // the first maximum (right), 4 ignored although right
    Tensor logits = Tensor::from_vector({5, 4}, {0.1, 2.0, 0.3, -1,  // target 1: right
                                                 3.0, 2.0, 0.3, -1,  // target 1: wrong
                                                 1.0, 0.5, 1.0, -1,  // target 2: tie, class 0 first
                                                 0.2, 0.9, 0.9, -1,  // target 1: first maximum
                                                 0.0, 0.0, 5.0, 0.0});  // ignored
    const std::vector<int32_t> targets{1, 1, 2, 1, -100};
    int64_t correct = -1;
    Tensor loss = cross_entropy(logits, targets, -100, Reduction::mean, 0, &correct);
    CHECK(correct == 2);
    // agrees with std::max_element on random rows
    Tensor random_logits = random_tensor({64, 7}, 5, false);
    std::vector<int32_t> random_targets;
    int64_t expected = 0;
    for (int64_t i = 0; i < 64; ++i) {
        const real* row = random_logits.data() + i * 7;
        const int32_t argmax = int32_t(std::max_element(row, row + 7) - row);
        random_targets.push_back(i % 3 == 0 ? argmax : int32_t(i % 7));
        expected += random_targets.back() == argmax;
    }
    cross_entropy(random_logits, random_targets, -100, Reduction::sum, 0.1, &correct);
    CHECK(correct == expected);
    CHECK(expected > 21);
}
