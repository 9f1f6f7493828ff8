// The Transformer's ops: layer_norm and scaled dot-product attention over heads (fused, each
// against its composed twin), GELU, sqrt and transpose of any two dims, gradient-checked in
// double; masked positions get exactly zero weight and zero gradient, and a fully masked row
// gives zeros, not NaN.
#include <cmath>

#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/autograd/fused_layer_norm.h"
#include "seqgrad/layers/layer_norm.h"
#include "seqgrad/layers/multihead_attention.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::max_abs_difference;
using seqgrad::testing::random_tensor;

namespace {

// Σ w ⊙ y: a scalar whose gradient is w (not all ones), to compare gradients of two forms.
Tensor weighted_sum(const Tensor& y, uint64_t seed) {
    return sum(y * random_tensor(y.shape(), seed, false));
}

Tensor mask_of(const Shape& shape, const std::vector<real>& values) {
    return Tensor::from_vector(shape, values);
}

}  // namespace

TEST_CASE("gelu, sqrt and transpose(x, d0, d1) pass gradcheck") {
    Tensor x = random_tensor({3, 4}, 1, true, -3, 3);
    expect_gradcheck([](auto& in) { return gelu(in[0]); }, {x});
    Tensor p = random_tensor({3, 4}, 2, true, 0.5, 2);
    expect_gradcheck([](auto& in) { return sqrt(in[0]); }, {p});
    CHECK(gelu(Tensor::from_vector({3}, {-1, 0, 2})).to_vector()[1] == 0);
    CHECK(std::fabs(gelu(Tensor::from_vector({1}, {1})).item() - 0.8413447460685429) < 1e-15);
    Tensor t = random_tensor({2, 3, 4, 5}, 3);
    expect_gradcheck([](auto& in) { return transpose(in[0], 1, 2); }, {t});
    expect_gradcheck([](auto& in) { return transpose(in[0], 0, 3); }, {t});
    Tensor y = transpose(t, 1, 2);
    CHECK(y.shape() == Shape{2, 4, 3, 5});
    // y[b, j, i, k] == t[b, i, j, k]
    CHECK(y.data()[((1 * 4 + 2) * 3 + 1) * 5 + 3] == t.data()[((1 * 3 + 1) * 4 + 2) * 5 + 3]);
    CHECK(max_abs_difference(transpose(t, 2, 3).to_vector(), transpose(t).to_vector()) == 0);
    CHECK_THROWS_AS(transpose(t, 0, 4), Error);
}

TEST_CASE("layer_norm: gradcheck, equal to its composed twin, known values, errors") {
    Tensor x = random_tensor({2, 3, 5}, 4, true, -2, 2);
    Tensor w = random_tensor({5}, 5, true, 0.5, 1.5), b = random_tensor({5}, 6);
    expect_gradcheck([](auto& in) { return layer_norm(in[0], in[1], in[2]); }, {x, w, b});
    expect_gradcheck([](auto& in) { return layer_norm(in[0], Tensor(), Tensor(), 1e-3); }, {x});
    expect_gradcheck([](auto& in) { return layer_norm_composed(in[0], in[1], in[2]); }, {x, w, b});

    Tensor y_fused = weighted_sum(layer_norm(x, w, b), 7);
    y_fused.backward();
    const Tensor gx = x.grad(), gw = w.grad(), gb = b.grad();
    x.zero_grad(), w.zero_grad(), b.zero_grad();
    Tensor y_composed = weighted_sum(layer_norm_composed(x, w, b), 7);
    y_composed.backward();
    CHECK(std::fabs(y_fused.item() - y_composed.item()) < 1e-12);
    CHECK(max_abs_difference(gx.to_vector(), x.grad().to_vector()) < 1e-12);
    CHECK(max_abs_difference(gw.to_vector(), w.grad().to_vector()) < 1e-12);
    CHECK(max_abs_difference(gb.to_vector(), b.grad().to_vector()) < 1e-12);

    // [1, 3]: μ = 2, σ² = 2/3 -> x̂ = (−1, 0, 1)/√(2/3 + ε)
    Tensor y = layer_norm(Tensor::from_vector({1, 3}, {1, 2, 3}), Tensor(), Tensor(), 0);
    CHECK(std::fabs(y.to_vector()[2] - 1 / std::sqrt(2.0 / 3)) < 1e-14);
    CHECK_THROWS_WITH_AS(layer_norm(x, random_tensor({4}, 1), b),
                         "layer_norm: x [2,3,5], weight [4], bias [5]: expected x [..., E] with "
                         "E >= 1, weight [E] and bias [E]",
                         Error);
}

TEST_CASE("scaled_dot_product_attention: gradcheck with masks, equal to its composed twin") {
    const int64_t B = 2, H = 2, T = 3, S = 4, d = 3;
    Tensor q = random_tensor({B, H, T, d}, 11), k = random_tensor({B, H, S, d}, 12);
    Tensor v = random_tensor({B, H, S, 2}, 13);
    Tensor pad = mask_of({B, S}, {0, 0, 0, 1, 0, 0, 1, 1});
    for (bool causal : {false, true})
        for (bool masked : {false, true}) {
            CAPTURE(causal);
            CAPTURE(masked);
            Tensor mask = masked ? pad : Tensor();
            // causal with T < S: queries are the last T positions, so none is fully masked
            expect_gradcheck(
                [&](auto& in) {
                    return scaled_dot_product_attention(in[0], in[1], in[2], mask, causal).output;
                },
                {q, k, v});
            DotProductAttention fused = scaled_dot_product_attention(q, k, v, mask, causal, true);
            Tensor loss = weighted_sum(fused.output, 14);
            loss.backward();
            const Tensor gq = q.grad(), gk = k.grad(), gv = v.grad();
            q.zero_grad(), k.zero_grad(), v.zero_grad();
            Tensor weights;
            Tensor loss2 = weighted_sum(
                scaled_dot_product_attention_composed(q, k, v, mask, causal, &weights), 14);
            loss2.backward();
            CHECK(std::fabs(loss.item() - loss2.item()) < 1e-12);
            CHECK(max_abs_difference(fused.weights.to_vector(), weights.to_vector()) < 1e-14);
            CHECK(max_abs_difference(gq.to_vector(), q.grad().to_vector()) < 1e-12);
            CHECK(max_abs_difference(gk.to_vector(), k.grad().to_vector()) < 1e-12);
            CHECK(max_abs_difference(gv.to_vector(), v.grad().to_vector()) < 1e-12);
            q.zero_grad(), k.zero_grad(), v.zero_grad();
        }
}

TEST_CASE(
    "masked keys get exactly zero weight and zero gradient; the causal mask hides the future") {
    const int64_t B = 2, H = 2, T = 3, S = 3, d = 4;
    Tensor q = random_tensor({B, H, T, d}, 21), k = random_tensor({B, H, S, d}, 22);
    Tensor v = random_tensor({B, H, S, d}, 23);
    Tensor pad = mask_of({B, S}, {0, 0, 1, 0, 1, 1});  // row 0: key 2 padded; row 1: keys 1, 2
    DotProductAttention a = scaled_dot_product_attention(q, k, v, pad, true, true);
    weighted_sum(a.output, 24).backward();
    const std::vector<real> w = a.weights.to_vector(), gk = k.grad().to_vector(),
                            gv = v.grad().to_vector();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < T; ++i) {
                double row_sum = 0;
                for (int64_t j = 0; j < S; ++j) {
                    const real wij = w[size_t(((b * H + h) * T + i) * S + j)];
                    const bool hidden = pad.data()[b * S + j] != 0 || j > i;
                    if (hidden) CHECK(wij == 0);
                    row_sum += wij;
                }
                CHECK(std::fabs(row_sum - 1) < 1e-14);
            }
    for (int64_t h = 0; h < H; ++h)
        for (int64_t c = 0; c < d; ++c) {
            CHECK(gk[size_t(((0 * H + h) * S + 2) * d + c)] == 0);  // padded keys: no gradient
            CHECK(gv[size_t(((1 * H + h) * S + 1) * d + c)] == 0);
            CHECK(gk[size_t(((1 * H + h) * S + 2) * d + c)] == 0);
        }
}

TEST_CASE("a fully masked row gives zero weights, a zero output and zero gradient, not NaN") {
    const int64_t H = 2, T = 2, S = 3, d = 2;
    Tensor q = random_tensor({2, H, T, d}, 31), k = random_tensor({2, H, S, d}, 32);
    Tensor v = random_tensor({2, H, S, d}, 33);
    Tensor pad = mask_of({2, S}, {0, 1, 0, 1, 1, 1});  // batch row 1: every key padded
    DotProductAttention a = scaled_dot_product_attention(q, k, v, pad, false, true);
    weighted_sum(a.output, 34).backward();
    const std::vector<real> out = a.output.to_vector(), w = a.weights.to_vector();
    for (size_t i = 0; i < out.size(); ++i) CHECK(std::isfinite(out[i]));
    for (size_t i = out.size() / 2; i < out.size(); ++i) CHECK(out[i] == 0);
    for (size_t i = w.size() / 2; i < w.size(); ++i) CHECK(w[i] == 0);
    const std::vector<real> gq = q.grad().to_vector(), gv = v.grad().to_vector();
    for (size_t i = gq.size() / 2; i < gq.size(); ++i) CHECK(gq[i] == 0);
    for (size_t i = gv.size() / 2; i < gv.size(); ++i) CHECK(gv[i] == 0);
    q.zero_grad(), k.zero_grad(), v.zero_grad();
    expect_gradcheck(
        [&](auto& in) { return scaled_dot_product_attention(in[0], in[1], in[2], pad).output; },
        {q, k, v});
}

TEST_CASE("scaled_dot_product_attention names the op and the shapes on bad input") {
    Tensor q = random_tensor({1, 2, 3, 4}, 1), k = random_tensor({1, 2, 5, 3}, 2);
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, k),
                         "scaled_dot_product_attention: q [1,2,3,4], k [1,2,5,3], v [1,2,5,3]: "
                         "expected [B,h,T,d], [B,h,S,d] and [B,h,S,dv] with S, d >= 1",
                         Error);
    Tensor k2 = random_tensor({1, 2, 2, 4}, 3);
    CHECK_THROWS_AS(scaled_dot_product_attention(q, k2, k2, Tensor(), true), Error);
    CHECK_THROWS_AS(scaled_dot_product_attention(q, k2, k2, Tensor::zeros({1, 3})), Error);
}
