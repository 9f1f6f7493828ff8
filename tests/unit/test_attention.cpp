// Attention layers (Bahdanau; Luong dot, general, concat), gradient-checked in double with
// padding masks in play, plus the behaviour a mask promises: padded positions get exactly zero
// weight and gradient, and a padded batch equals each sentence run alone.
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "attention_variants.h"
#include "seqgrad/autograd/fused_attention.h"
#include "seqgrad/layers/attention.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;
using seqgrad::testing::scale_parameters;
using seqgrad::testing::Variant;
using seqgrad::testing::variants;

namespace {

// A copy of keys [B,S,D] restricted to row b and its first `length` positions: [1, length, D].
Tensor sentence(const Tensor& t, int64_t b, int64_t length) {
    const int64_t S = t.size(1), D = t.size(2);
    std::vector<real> v(t.data() + b * S * D, t.data() + b * S * D + length * D);
    return Tensor::from_vector({1, length, D}, v, true);
}
Tensor row(const Tensor& t, int64_t b) {
    const int64_t D = t.size(1);
    return Tensor::from_vector({1, D}, std::vector<real>(t.data() + b * D, t.data() + (b + 1) * D),
                               true);
}

}  // namespace

TEST_CASE("padding_mask marks positions at or past each length") {
    Tensor mask = padding_mask({3, 1, 4}, 4);
    CHECK(mask.shape() == Shape{3, 4});
    CHECK(mask.to_vector() == std::vector<real>{0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0});
    CHECK_THROWS_WITH_AS(padding_mask({2, 5}, 4),
                         "padding_mask: length 5 of row 1 is outside [0, 4]", Error);
}

TEST_CASE("parameter names follow the PyTorch modules they stand for") {
    Rng rng(1);
    auto names = [](const Module& m) {
        std::vector<std::string> out;
        for (auto& [name, _] : m.named_parameters()) out.push_back(name);
        return out;
    };
    BahdanauAttention bahdanau(8, 6, rng);
    CHECK(names(bahdanau) ==
          std::vector<std::string>{"W_q.weight", "W_k.weight", "W_k.bias", "v.weight"});
    CHECK(bahdanau.W_q.weight.shape() == Shape{128, 8});
    CHECK(bahdanau.W_k.weight.shape() == Shape{128, 6});
    CHECK(bahdanau.v.weight.shape() == Shape{1, 128});
    CHECK(names(LuongAttention(LuongScore::dot, 6, 6, rng)).empty());
    LuongAttention general(LuongScore::general, 8, 6, rng);
    CHECK(names(general) == std::vector<std::string>{"W_a.weight"});
    CHECK(general.W_a->weight.shape() == Shape{8, 6});
    LuongAttention concat(LuongScore::concat, 8, 6, rng, false, 16);
    CHECK(names(concat) == std::vector<std::string>{"W.weight", "v.weight"});
    CHECK(concat.W->weight.shape() == Shape{16, 14});
}

TEST_CASE("bad configurations and shapes give clear errors") {
    Rng rng(2);
    CHECK_THROWS_WITH_AS(LuongAttention(LuongScore::dot, 4, 6, rng),
                         "LuongAttention(dot): query_dim 4 != key_dim 6; the dot score qᵀk needs "
                         "equal sizes (use 'general' or 'concat')",
                         Error);
    CHECK_THROWS_AS(LuongAttention(LuongScore::concat, 4, 6, rng, true), Error);
    BahdanauAttention attention(4, 6, 7, rng);
    Tensor keys = random_tensor({2, 3, 6}, 3), query = random_tensor({2, 4}, 4);
    CHECK_THROWS_WITH_AS(attention.forward(random_tensor({2, 5}, 5), keys, Tensor()),
                         "BahdanauAttention: query [2,5] and keys [2,3,6]: expected [B,4] and "
                         "[B,S,6] (S >= 1)",
                         Error);
    CHECK_THROWS_AS(attention.forward(query, keys, keys, Tensor()), Error);  // not projected
    CHECK_THROWS_AS(attention.forward(query, keys, padding_mask({3, 3}, 4)), Error);
}

TEST_CASE("gradcheck of every attention kind with a padding mask, two decoder steps") {
    const std::vector<int32_t> lengths{3, 1, 4};
    const Tensor mask = padding_mask(lengths, 4);
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(10);
        auto attention = variant.make(rng);
        scale_parameters(*attention, 2);
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 11);
        Tensor query1 = random_tensor({3, variant.query_dim}, 12);
        Tensor query2 = random_tensor({3, variant.query_dim}, 13);
        std::vector<Tensor> inputs{keys, query1, query2};
        for (auto& [_, p] : attention->named_parameters()) inputs.push_back(p);
        // The keys are projected once and used by two steps, as a decoder does: their gradient
        // is the sum of both steps'. Output: both contexts and both weight rows.
        expect_gradcheck(
            [&](auto&) {
                Tensor keys_projected = attention->project_keys(keys);
                AttentionResult step1 = attention->forward(query1, keys, keys_projected, mask);
                AttentionResult step2 = attention->forward(query2, keys, keys_projected, mask);
                return concat({step1.context, step1.weights, step2.context, step2.weights}, 1);
            },
            inputs);
    }
}

namespace {

// Runs f on the inputs with an upstream gradient and returns (output, every input's gradient).
std::vector<std::vector<real>> output_and_gradients(
    const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
    uint64_t seed) {
    for (Tensor t : inputs) t.zero_grad();
    Tensor out = f(inputs);
    out.backward(random_tensor(out.shape(), seed, false));
    std::vector<std::vector<real>> result{out.to_vector()};
    for (const Tensor& t : inputs) result.push_back(t.grad().to_vector());
    return result;
}

void expect_same(const std::vector<std::vector<real>>& a, const std::vector<std::vector<real>>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k) {
        CAPTURE(k);  // 0: the output, k: the gradient of input k - 1
        REQUIRE(a[k].size() == b[k].size());
        double worst = 0;
        for (size_t i = 0; i < a[k].size(); ++i)
            worst = std::max(worst, double(std::fabs(a[k][i] - b[k][i])));
        CHECK(worst < 1e-12);
    }
}

}  // namespace

TEST_CASE("fused attention kernels: gradcheck, and == their composed twins") {
    SUBCASE("additive scores") {
        Tensor qp = random_tensor({3, 13}, 21, true, -2, 2);  // A = 13: not a multiple of 8
        Tensor kp = random_tensor({3, 4, 13}, 22, true, -2, 2);
        Tensor v = random_tensor({1, 13}, 23, true, -2, 2);
        auto fused = [](auto& x) { return additive_attention_scores(x[0], x[1], x[2]); };
        auto composed = [](auto& x) {
            return additive_attention_scores_composed(x[0], x[1], x[2]);
        };
        expect_gradcheck(fused, {qp, kp, v});
        expect_same(output_and_gradients(fused, {qp, kp, v}, 24),
                    output_and_gradients(composed, {qp, kp, v}, 24));
        CHECK_THROWS_AS(additive_attention_scores(qp, kp, random_tensor({1, 4}, 25)), Error);
    }
    SUBCASE("context") {
        Tensor weights = random_tensor({3, 4}, 26);
        Tensor values = random_tensor({3, 4, 11}, 27);
        weights.data()[5] = 0;  // a masked position: no gradient to its value row
        auto fused = [](auto& x) { return attention_context(x[0], x[1]); };
        auto composed = [](auto& x) { return attention_context_composed(x[0], x[1]); };
        expect_gradcheck(fused, {weights, values});
        expect_same(output_and_gradients(fused, {weights, values}, 28),
                    output_and_gradients(composed, {weights, values}, 28));
        output_and_gradients(fused, {weights, values}, 29);
        for (int64_t d = 0; d < 11; ++d) CHECK(values.grad_data()[(1 * 4 + 1) * 11 + d] == 0.0);
        CHECK_THROWS_AS(attention_context(weights, random_tensor({3, 5, 11}, 30)), Error);
    }
    SUBCASE("dot scores") {
        Tensor keys = random_tensor({3, 4, 11}, 31);
        Tensor query = random_tensor({3, 11}, 32);
        auto fused = [](auto& x) { return attention_dot_scores(x[0], x[1]); };
        auto composed = [](auto& x) { return attention_dot_scores_composed(x[0], x[1]); };
        expect_gradcheck(fused, {keys, query});
        expect_same(output_and_gradients(fused, {keys, query}, 33),
                    output_and_gradients(composed, {keys, query}, 33));
        CHECK_THROWS_AS(attention_dot_scores(keys, random_tensor({3, 10}, 34)), Error);
    }
}

TEST_CASE("masked positions: weight exactly 0, gradient to their keys exactly 0") {
    const std::vector<int32_t> lengths{3, 1, 4};
    const Tensor mask = padding_mask(lengths, 4);
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(30);
        auto attention = variant.make(rng);
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 31);
        Tensor query = random_tensor({3, variant.query_dim}, 32);
        AttentionResult r = attention->forward(query, keys, mask);
        for (int64_t b = 0; b < 3; ++b) {
            real total = 0;
            for (int64_t s = 0; s < 4; ++s) {
                real w = r.weights.data()[b * 4 + s];
                if (s >= lengths[b])
                    CHECK(w == 0.0);
                else
                    CHECK(w > 0.0);
                total += w;
            }
            CHECK(total == doctest::Approx(1).epsilon(1e-14));
        }
        // Upstream gradient on both the context and the weights.
        Tensor out = concat({r.context, r.weights}, 1);
        out.backward(random_tensor(out.shape(), 33, false));
        const int64_t D = variant.key_dim;
        for (int64_t b = 0; b < 3; ++b)
            for (int64_t s = 0; s < 4; ++s)
                for (int64_t d = 0; d < D; ++d) {
                    real g = keys.grad_data()[(b * 4 + s) * D + d];
                    if (s >= lengths[b])
                        CHECK(g == 0.0);
                    else
                        CHECK(g != 0.0);
                }
    }
}

TEST_CASE("perturbing a valid encoder output changes the context, a padded one changes nothing") {
    const std::vector<int32_t> lengths{3, 1, 4};
    const Tensor mask = padding_mask(lengths, 4);
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(40);
        auto attention = variant.make(rng);
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 41, false);
        Tensor query = random_tensor({3, variant.query_dim}, 42, false);
        std::vector<real> base = attention->forward(query, keys, mask).context.to_vector();
        const int64_t D = variant.key_dim, Dk = variant.key_dim;
        for (int64_t b = 0; b < 3; ++b)
            for (int64_t s = 0; s < 4; ++s) {
                CAPTURE(b);
                CAPTURE(s);
                real& x = keys.data()[(b * 4 + s) * D + 1];
                real saved = x;
                x += 0.5;
                std::vector<real> changed =
                    attention->forward(query, keys, mask).context.to_vector();
                x = saved;
                bool row_changed = false;
                for (int64_t d = 0; d < Dk; ++d)
                    row_changed = row_changed || changed[b * Dk + d] != base[b * Dk + d];
                CHECK(row_changed == (s < lengths[b]));
                for (int64_t other = 0; other < 3; ++other)  // other rows never move
                    if (other != b)
                        for (int64_t d = 0; d < Dk; ++d)
                            CHECK(changed[other * Dk + d] == base[other * Dk + d]);
            }
    }
}

TEST_CASE("a batch row with no valid position is an error naming the row, not NaN") {
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(50);
        auto attention = variant.make(rng);
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 51);
        Tensor query = random_tensor({3, variant.query_dim}, 52);
        std::string message;
        try {
            attention->forward(query, keys, padding_mask({3, 0, 4}, 4));
        } catch (const Error& e) {
            message = e.what();
        }
        CHECK(message.find("batch row 1 has no valid position") != std::string::npos);
    }
}

TEST_CASE("a padded batch == each sentence alone: contexts, weights and gradients") {
    const std::vector<int32_t> lengths{3, 1, 4};
    const Tensor mask = padding_mask(lengths, 4);
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(60);
        auto attention = variant.make(rng);
        scale_parameters(*attention, 2);
        auto params = attention->named_parameters();
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 61);
        Tensor query = random_tensor({3, variant.query_dim}, 62);
        Tensor upstream = random_tensor({3, variant.key_dim}, 63, false);

        // The padded batch, loss = Σ upstream ⊙ context.
        AttentionResult batch = attention->forward(query, keys, mask);
        sum(mul(batch.context, upstream)).backward();
        std::vector<std::vector<real>> batch_param_grads;
        for (auto& [_, p] : params) {
            batch_param_grads.push_back(p.grad().to_vector());
            p.zero_grad();
        }

        // Each sentence alone (no mask, S = its length); parameter gradients summed.
        const int64_t D = variant.key_dim;
        for (int64_t b = 0; b < 3; ++b) {
            CAPTURE(b);
            Tensor keys_b = sentence(keys, b, lengths[b]);
            Tensor query_b = row(query, b);
            AttentionResult alone = attention->forward(query_b, keys_b, Tensor());
            Tensor upstream_b = Tensor::from_vector(
                {1, D}, std::vector<real>(upstream.data() + b * D, upstream.data() + (b + 1) * D));
            sum(mul(alone.context, upstream_b)).backward();
            for (int64_t d = 0; d < D; ++d)
                CHECK(std::fabs(alone.context.data()[d] - batch.context.data()[b * D + d]) < 1e-13);
            for (int64_t s = 0; s < lengths[b]; ++s)
                CHECK(std::fabs(alone.weights.data()[s] - batch.weights.data()[b * 4 + s]) < 1e-13);
            for (int64_t i = 0; i < lengths[b] * D; ++i)
                CHECK(std::fabs(keys_b.grad_data()[i] - keys.grad_data()[b * 4 * D + i]) < 1e-12);
            for (int64_t d = 0; d < variant.query_dim; ++d)
                CHECK(std::fabs(query_b.grad_data()[d] -
                                query.grad_data()[b * variant.query_dim + d]) < 1e-12);
        }
        for (size_t k = 0; k < params.size(); ++k) {
            CAPTURE(params[k].first);
            std::vector<real> summed = params[k].second.grad().to_vector();
            for (size_t i = 0; i < summed.size(); ++i)
                CHECK(std::fabs(summed[i] - batch_param_grads[k][i]) < 1e-12);
        }
    }
}

TEST_CASE("scores are the raw pre-softmax scores, Luong dot by hand") {
    Rng rng(70);
    LuongAttention dot(LuongScore::dot, 3, 3, rng, true);
    Tensor keys = Tensor::from_vector({1, 2, 3}, {1, 0, 2, -1, 1, 0});
    Tensor query = Tensor::from_vector({1, 3}, {0.5, 2, 1});
    AttentionResult r = dot.forward(query, keys, padding_mask({2}, 2));
    // q·k_0 = 0.5 + 2 = 2.5, q·k_1 = -0.5 + 2 = 1.5, both ÷ √3
    CHECK(r.scores.data()[0] == doctest::Approx(2.5 / std::sqrt(3.0)));
    CHECK(r.scores.data()[1] == doctest::Approx(1.5 / std::sqrt(3.0)));
    double w0 = 1 / (1 + std::exp(-1 / std::sqrt(3.0)));
    CHECK(r.weights.data()[0] == doctest::Approx(w0));
    CHECK(r.context.data()[0] == doctest::Approx(w0 * 1 + (1 - w0) * -1));
    // Masked: the score stays (diagnostics), the weight is 0, the context is k_0.
    AttentionResult masked = dot.forward(query, keys, padding_mask({1}, 2));
    CHECK(masked.scores.data()[1] == doctest::Approx(1.5 / std::sqrt(3.0)));
    CHECK(masked.weights.data()[1] == 0.0);
    CHECK(masked.context.to_vector() == std::vector<real>{1, 0, 2});
}

TEST_CASE("Bahdanau diagnostics: pre-activations and saturated share") {
    Rng rng(80);
    BahdanauAttention attention(4, 6, 5, rng);
    Tensor keys = random_tensor({2, 3, 6}, 81, false);
    Tensor query = random_tensor({2, 4}, 82, false);
    Tensor keys_projected = attention.project_keys(keys);
    Tensor x = attention.pre_activations(query, keys_projected);
    CHECK(x.shape() == Shape{2, 3, 5});
    CHECK_FALSE(x.requires_grad());
    // x[b,s,a] = (W_q q_b)[a] + keys_projected[b,s,a], e.g. b = 1, s = 2, a = 3
    double wq = 0;
    for (int i = 0; i < 4; ++i) wq += attention.W_q.weight.data()[3 * 4 + i] * query.data()[4 + i];
    CHECK(x.data()[(1 * 3 + 2) * 5 + 3] ==
          doctest::Approx(wq + keys_projected.data()[(1 * 3 + 2) * 5 + 3]));
    // Default init, inputs in [-1, 1]: far from saturation.
    CHECK(attention.saturated_share(query, keys_projected, Tensor()) == 0.0);
    // Huge key weights saturate every valid position; the padded one is not counted.
    for (int64_t i = 0; i < attention.W_k.weight.numel(); ++i) attention.W_k.weight.data()[i] = 100;
    Tensor big = attention.project_keys(Tensor::full({2, 3, 6}, 1));
    CHECK(attention.saturated_share(query, big, padding_mask({2, 3}, 3)) == 1.0);
}
