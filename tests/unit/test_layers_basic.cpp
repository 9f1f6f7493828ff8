// Linear, Embedding and Dropout: gradients (double-precision gradcheck), parameter names and
// shapes as in PyTorch, initialisation ranges, and errors.
#include <cmath>

#include "seqgrad/layers/dropout.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/linear.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;

// ---- Linear ------------------------------------------------------------------------------

TEST_CASE("Linear: parameter names, shapes and PyTorch's U(-1/sqrt(in), 1/sqrt(in)) init") {
    Rng rng(1);
    Linear layer(16, 5, true, rng);
    auto named = layer.named_parameters();
    REQUIRE(named.size() == 2);
    CHECK(named[0].first == "weight");
    CHECK(named[0].second.shape() == Shape{5, 16});
    CHECK(named[1].first == "bias");
    CHECK(named[1].second.shape() == Shape{5});
    CHECK(layer.parameter_count() == 5 * 16 + 5);
    const double bound = 1.0 / std::sqrt(16.0);
    for (auto& [name, p] : named) {
        CAPTURE(name);
        CHECK(p.requires_grad());
        double lo = 1, hi = -1;
        for (real v : p.to_vector()) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
        CHECK(lo >= -bound);
        CHECK(hi < bound);
        CHECK(hi - lo > bound / 2);  // really spread over the range, not all zero
    }

    Linear no_bias(3, 2, false, rng);
    CHECK(no_bias.named_parameters().size() == 1);
    CHECK_FALSE(no_bias.bias.defined());
}

TEST_CASE("Linear: forward is x W^T + b") {
    Rng rng(2);
    Linear layer(2, 2, true, rng);
    std::copy_n(std::vector<real>{1, 2, 3, 4}.begin(), 4, layer.weight.data());
    std::copy_n(std::vector<real>{0.5, -1}.begin(), 2, layer.bias.data());
    Tensor y = layer.forward(Tensor::from_vector({1, 2}, {10, 100}));
    CHECK(y.shape() == Shape{1, 2});
    CHECK(y.data()[0] == 1 * 10 + 2 * 100 + 0.5);
    CHECK(y.data()[1] == 3 * 10 + 4 * 100 - 1);
}

TEST_CASE("Linear: gradcheck with and without bias, 2-D and 3-D input") {
    Rng rng(3);
    for (bool bias : {true, false}) {
        CAPTURE(bias);
        Linear layer(4, 3, bias, rng);
        for (const Shape& shape : {Shape{5, 4}, Shape{2, 3, 4}}) {
            CAPTURE(shape.str());
            Tensor x = random_tensor(shape, 4);
            std::vector<Tensor> inputs{x};
            for (const Tensor& p : layer.parameters()) inputs.push_back(p);
            auto r = expect_gradcheck([&](auto& in) { return layer.forward(in[0]); }, inputs);
            CHECK(r.inputs_checked == (bias ? 3 : 2));
            CHECK(layer.forward(x).shape() == shape.with_dim(-1, 3));
        }
    }
}

TEST_CASE("Linear: a wrong input size names the layer and the shapes") {
    Rng rng(4);
    Linear layer(4, 3, true, rng);
    CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({2, 5})),
                         "Linear(4 -> 3): input [2,5] must be [..., 4]", Error);
    CHECK_THROWS_AS(Linear(0, 3, true, rng), Error);
}

// ---- Embedding ---------------------------------------------------------------------------

TEST_CASE("Embedding: N(0,1) init with a zero padding row, name and shape") {
    Rng rng(5);
    Embedding emb(50, 8, 0, rng);
    auto named = emb.named_parameters();
    REQUIRE(named.size() == 1);
    CHECK(named[0].first == "weight");
    CHECK(named[0].second.shape() == Shape{50, 8});
    for (int j = 0; j < 8; ++j) CHECK(emb.weight.data()[j] == 0);
    double sum = 0, sum_sq = 0;
    const int64_t n = 49 * 8;
    for (int64_t i = 8; i < 50 * 8; ++i) sum += emb.weight.data()[i];
    for (int64_t i = 8; i < 50 * 8; ++i) sum_sq += emb.weight.data()[i] * emb.weight.data()[i];
    CHECK(std::fabs(sum / n) < 0.2);
    CHECK(sum_sq / n == doctest::Approx(1).epsilon(0.25));

    Embedding no_pad(4, 3, -1, rng);
    bool row0_nonzero = false;
    for (int j = 0; j < 3; ++j) row0_nonzero = row0_nonzero || no_pad.weight.data()[j] != 0;
    CHECK(row0_nonzero);
}

TEST_CASE("Embedding: forward picks rows, repeated ids accumulate, the padding row gets none") {
    Rng rng(6);
    Embedding emb(5, 3, 0, rng);
    // [2,3] ids with a repeated id (2, three times) and padding (0, twice)
    std::vector<int32_t> ids{2, 4, 2, 2, 0, 0};
    Tensor y = emb.forward(ids, Shape{2, 3});
    CHECK(y.shape() == Shape{2, 3, 3});
    for (int j = 0; j < 3; ++j) CHECK(y.data()[1 * 3 + j] == emb.weight.data()[4 * 3 + j]);

    Tensor upstream = random_tensor({2, 3, 3}, 7, false);
    y.backward(upstream);
    const real* g = emb.weight.grad_data();
    REQUIRE(g != nullptr);
    for (int j = 0; j < 3; ++j) {
        CHECK(g[0 * 3 + j] == 0);  // padding row: no gradient although used twice
        CHECK(g[1 * 3 + j] == 0);  // unused row
        CHECK(g[2 * 3 + j] ==
              doctest::Approx(upstream.data()[0 * 3 + j] + upstream.data()[2 * 3 + j] +
                              upstream.data()[3 * 3 + j]));
        CHECK(g[4 * 3 + j] == doctest::Approx(upstream.data()[1 * 3 + j]));
    }

    // gradcheck with repeated ids (the padding row is left out: its numeric gradient is not
    // zero, it is zero only by convention)
    emb.zero_grad();
    const std::vector<int32_t> repeated{2, 4, 2, 2, 1, 3};
    expect_gradcheck([&](auto&) { return emb.forward(repeated, Shape{2, 3}); }, {emb.weight});
}

TEST_CASE("Embedding: bad ids and bad padding_idx are errors") {
    Rng rng(8);
    Embedding emb(5, 3, 0, rng);
    CHECK_THROWS_WITH_AS(emb.forward({1, 5}, Shape{2}),
                         doctest::Contains("embedding: id 5 at position 1 is out of range"), Error);
    CHECK_THROWS_WITH_AS(emb.forward({1, 2, 3}, Shape{2}), doctest::Contains("embedding: 3 ids"),
                         Error);
    CHECK_THROWS_WITH_AS(Embedding(5, 3, 5, rng), doctest::Contains("padding_idx 5"), Error);
}

// ---- Dropout -----------------------------------------------------------------------------

TEST_CASE("Dropout: identity in eval mode, zeros or x/(1-p) in training at rate ~p") {
    Rng rng(9);
    Dropout drop(0.25, rng);
    Tensor x = random_tensor({100, 40}, 10, true, 0.5, 1.5);  // never 0

    drop.eval();
    Tensor same = drop.forward(x);
    CHECK(same.to_vector() == x.to_vector());

    drop.train();
    Tensor y = drop.forward(x);
    int64_t zeros = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
        if (y.data()[i] == 0) {
            ++zeros;
        } else {
            CHECK(y.data()[i] == doctest::Approx(x.data()[i] / 0.75));
        }
    }
    CHECK(double(zeros) / double(x.numel()) == doctest::Approx(0.25).epsilon(0.1));
    // a new call draws a new mask from the shared generator
    CHECK(drop.forward(x).to_vector() != y.to_vector());
}

TEST_CASE("Dropout: gradcheck in training (the same mask for each evaluation) and eval mode") {
    Rng rng(11);
    Dropout drop(0.4, rng);
    Tensor x = random_tensor({6, 5}, 12);
    expect_gradcheck(
        [&](auto& in) {
            rng.seed_with(99);  // every evaluation draws the same mask
            return mul(drop.forward(in[0]), in[0]);
        },
        {x});
    drop.eval();
    expect_gradcheck([&](auto& in) { return mul(drop.forward(in[0]), in[0]); }, {x});
}

TEST_CASE("Dropout: p outside 0 <= p < 1 is an error") {
    Rng rng(13);
    CHECK_THROWS_WITH_AS(Dropout(1.0, rng), "Dropout: p must be in [0, 1), got 1", Error);
    CHECK_THROWS_AS(Dropout(-0.1, rng), Error);
}
