// Double-precision gradient check of every primitive op, plus their forward values.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;

TEST_CASE("add/sub/mul/div: same shape") {
    Tensor a = random_tensor({3, 4}, 1), b = random_tensor({3, 4}, 2, true, 0.5, 2);
    expect_gradcheck([](auto& x) { return add(x[0], x[1]); }, {a, b});
    expect_gradcheck([](auto& x) { return sub(x[0], x[1]); }, {a, b});
    expect_gradcheck([](auto& x) { return mul(x[0], x[1]); }, {a, b});
    expect_gradcheck([](auto& x) { return div(x[0], x[1]); }, {a, b});
}

TEST_CASE("binary ops broadcast a lower-rank or size-1 operand over leading dims") {
    Tensor a = random_tensor({2, 3, 4}, 3);
    Tensor bias = random_tensor({4}, 4, true, 0.5, 2);
    Tensor column = random_tensor({2, 3, 1}, 5, true, 0.5, 2);
    Tensor middle = random_tensor({3, 1}, 6, true, 0.5, 2);
    Tensor s = random_tensor({}, 7, true, 0.5, 2);
    for (const Tensor& b : {bias, column, middle, s}) {
        CAPTURE(b.shape().str());
        expect_gradcheck([](auto& x) { return add(x[0], x[1]); }, {a, b});
        expect_gradcheck([](auto& x) { return mul(x[0], x[1]); }, {a, b});
        expect_gradcheck([](auto& x) { return div(x[1], x[0]); }, {a, b});  // b broadcast on left
        expect_gradcheck([](auto& x) { return sub(x[1], x[0]); }, {a, b});
    }
    Tensor out = add(a, bias);
    CHECK(out.shape() == Shape{2, 3, 4});
    CHECK(out.data()[5] == doctest::Approx(a.data()[5] + bias.data()[1]));
}

TEST_CASE("binary op shape mismatch names the op and both shapes") {
    Tensor a = random_tensor({2, 3}, 1), b = random_tensor({4}, 2);
    CHECK_THROWS_WITH_AS(add(a, b), "add: [2,3] and [4] cannot be broadcast together", Error);
}

TEST_CASE("scalar operands, neg") {
    Tensor a = random_tensor({5}, 8);
    expect_gradcheck([](auto& x) { return add(x[0], 2.5); }, {a});
    expect_gradcheck([](auto& x) { return mul(x[0], -3.0); }, {a});
    expect_gradcheck([](auto& x) { return neg(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return 1.0 - x[0] * 2.0; }, {a});
}

TEST_CASE("unary ops: tanh, sigmoid, relu, exp, log, clamp") {
    Tensor a = random_tensor({4, 5}, 9, true, -2, 2);
    Tensor positive = random_tensor({4, 5}, 10, true, 0.1, 3);
    expect_gradcheck([](auto& x) { return tanh(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return sigmoid(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return relu(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return exp(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return log(x[0]); }, {positive});
    expect_gradcheck([](auto& x) { return clamp(x[0], -0.5, 0.7); }, {a});
    CHECK(sigmoid(Tensor::scalar(0)).item() == doctest::Approx(0.5));
    CHECK(clamp(Tensor::scalar(5), -1, 1).item() == 1);
}

TEST_CASE("matmul 2-D with every transpose combination") {
    // Square operands: a transposed gradient would have the right shape and still be wrong.
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            CAPTURE(ta);
            CAPTURE(tb);
            Tensor a = random_tensor({4, 4}, 11), b = random_tensor({4, 4}, 12);
            expect_gradcheck([=](auto& x) { return matmul(x[0], x[1], ta, tb); }, {a, b});
            Tensor r = random_tensor(ta ? Shape{5, 3} : Shape{3, 5}, 13);
            Tensor s = random_tensor(tb ? Shape{2, 5} : Shape{5, 2}, 14);
            Tensor c = matmul(r, s, ta, tb);
            CHECK(c.shape() == Shape{3, 2});
            expect_gradcheck([=](auto& x) { return matmul(x[0], x[1], ta, tb); }, {r, s});
        }
}

TEST_CASE("matmul forward values") {
    Tensor a = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor b = Tensor::from_vector({3, 2}, {7, 8, 9, 10, 11, 12});
    CHECK(matmul(a, b).to_vector() == std::vector<real>{58, 64, 139, 154});
    CHECK(matmul(a, a, false, true).to_vector() == std::vector<real>{14, 32, 32, 77});
}

TEST_CASE("batched matmul (B,n,m)x(B,m,p) with transposes, and (B,n,m)x(m,p)") {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            Tensor a = random_tensor({2, 3, 3}, 15), b = random_tensor({2, 3, 3}, 16);
            expect_gradcheck([=](auto& x) { return matmul(x[0], x[1], ta, tb); }, {a, b});
        }
    Tensor a = random_tensor({2, 3, 4}, 17), w = random_tensor({4, 5}, 18);
    expect_gradcheck([](auto& x) { return matmul(x[0], x[1]); }, {a, w});
    Tensor wt = random_tensor({5, 4}, 19);
    expect_gradcheck([](auto& x) { return matmul(x[0], x[1], false, true); }, {a, wt});
    CHECK(matmul(a, w).shape() == Shape{2, 3, 5});
}

TEST_CASE("matmul shape errors name the op and both shapes") {
    Tensor a = random_tensor({32, 256}, 1, false), b = random_tensor({128, 768}, 2, false);
    CHECK_THROWS_WITH_AS(matmul(a, b), "matmul: [32,256] x [128,768]: inner dims 256 != 128",
                         Error);
    Tensor c = random_tensor({2, 3, 4}, 3, false), d = random_tensor({3, 4, 5}, 4, false);
    CHECK_THROWS_AS(matmul(c, d), Error);
}

TEST_CASE("linear: y = x W^T + b, with and without bias, 2-D and 3-D input") {
    Tensor x = random_tensor({3, 4}, 20), w = random_tensor({5, 4}, 21), b = random_tensor({5}, 22);
    expect_gradcheck([](auto& v) { return linear(v[0], v[1], v[2]); }, {x, w, b});
    expect_gradcheck([](auto& v) { return linear(v[0], v[1]); }, {x, w});
    Tensor x3 = random_tensor({2, 3, 4}, 23);
    expect_gradcheck([](auto& v) { return linear(v[0], v[1], v[2]); }, {x3, w, b});
    // against the composed form
    Tensor composed = add(matmul(x, w, false, true), b);
    Tensor fused = linear(x, w, b);
    for (int64_t i = 0; i < fused.numel(); ++i)
        CHECK(fused.data()[i] == doctest::Approx(composed.data()[i]).epsilon(1e-12));
}

TEST_CASE("transpose of the last two dims") {
    Tensor a = random_tensor({2, 3, 4}, 24);
    expect_gradcheck([](auto& x) { return transpose(x[0]); }, {a});
    Tensor t = transpose(a);
    CHECK(t.shape() == Shape{2, 4, 3});
    CHECK(t.data()[1 * 12 + 2 * 3 + 1] == a.data()[1 * 12 + 1 * 4 + 2]);
}

TEST_CASE("reshape is a view with -1 inference") {
    Tensor a = random_tensor({2, 6}, 25);
    Tensor r = reshape(a, {3, -1});
    CHECK(r.shape() == Shape{3, 4});
    CHECK(r.data() == a.data());
    expect_gradcheck(
        [](auto& x) {
            return mul(reshape(x[0], {4, 3}), reshape(x[0], {4, 3}));
        },
        {a});
    CHECK_THROWS_AS(reshape(a, {5, -1}), Error);
}

TEST_CASE("sum and mean: all, and along a dim with keepdim") {
    Tensor a = random_tensor({2, 3, 4}, 26);
    expect_gradcheck([](auto& x) { return sum(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return mean(x[0]); }, {a});
    for (int dim : {0, 1, 2, -1})
        for (bool keep : {false, true}) {
            CAPTURE(dim);
            expect_gradcheck([=](auto& x) { return sum(x[0], dim, keep); }, {a});
            expect_gradcheck([=](auto& x) { return mean(x[0], dim, keep); }, {a});
        }
    CHECK(sum(a, 1, true).shape() == Shape{2, 1, 4});
    CHECK(mean(a, 1).shape() == Shape{2, 4});
    Tensor b = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
    CHECK(sum(b).item() == 10);
    CHECK(mean(b, 0).to_vector() == std::vector<real>{2, 3});
}

TEST_CASE("softmax and log_softmax along the last dim") {
    Tensor a = random_tensor({3, 5}, 27, true, -3, 3);
    expect_gradcheck([](auto& x) { return softmax(x[0]); }, {a});
    expect_gradcheck([](auto& x) { return log_softmax(x[0]); }, {a});
    Tensor s = softmax(a);
    for (int r = 0; r < 3; ++r) {
        double total = 0;
        for (int j = 0; j < 5; ++j) total += s.data()[r * 5 + j];
        CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }
}

TEST_CASE("softmax/log_softmax are stable for inputs of +-1e4") {
    Tensor big = Tensor::from_vector({2, 3}, {1e4, 1e4 - 1, -1e4, -1e4, -1e4 + 2, 1e4}, true);
    Tensor s = softmax(big), ls = log_softmax(big);
    for (real v : s.to_vector()) CHECK(std::isfinite(v));
    for (real v : ls.to_vector()) CHECK(std::isfinite(v));
    CHECK(ls.data()[0] == doctest::Approx(-std::log(1 + std::exp(-1.0))));
    CHECK(s.data()[5] == doctest::Approx(1.0));
    // eps must be large enough to move an input of 1e4 by more than its rounding error
    GradcheckOptions coarse;
    coarse.eps = 1e-3;
    expect_gradcheck([](auto& x) { return log_softmax(x[0]); }, {big}, coarse);
    expect_gradcheck([](auto& x) { return softmax(x[0]); }, {big}, coarse);
}

TEST_CASE("masked_fill with -inf then softmax: exactly zero weight and zero gradient") {
    Tensor scores = random_tensor({2, 4}, 28);
    Tensor mask = Tensor::from_vector({2, 4}, {0, 0, 1, 1, 0, 1, 1, 1});
    const real inf = std::numeric_limits<real>::infinity();
    Tensor w = softmax(masked_fill(scores, mask, -inf));
    CHECK(w.data()[2] == 0);
    CHECK(w.data()[3] == 0);
    CHECK(w.data()[4] == 1);
    Tensor upstream = random_tensor({2, 4}, 29, false);
    w.backward(upstream);
    const real* g = scores.grad_data();
    for (int i : {2, 3, 5, 6, 7}) CHECK(g[i] == 0);
    CHECK(g[0] != 0);
    expect_gradcheck([&](auto& x) { return softmax(masked_fill(x[0], mask, -inf)); }, {scores});
}

TEST_CASE("masked_fill broadcasts its mask over leading dims") {
    Tensor x = random_tensor({3, 2, 4}, 30);
    Tensor mask = Tensor::from_vector({2, 4}, {0, 1, 0, 0, 1, 0, 0, 1});
    Tensor y = masked_fill(x, mask, 7);
    CHECK(y.data()[8 + 1] == 7);
    CHECK(y.data()[8 + 0] == x.data()[8]);
    expect_gradcheck([&](auto& v) { return masked_fill(v[0], mask, 0.5); }, {x});
}

TEST_CASE("a row with every position masked is an error, not NaN") {
    const real inf = std::numeric_limits<real>::infinity();
    Tensor x = Tensor::from_vector({2, 2}, {0, 1, -inf, -inf});
    CHECK_THROWS_WITH_AS(softmax(x), doctest::Contains("row 1 has no finite entry"), Error);
    CHECK_THROWS_AS(log_softmax(x), Error);
}

TEST_CASE("concat and slice along any dim, round trip") {
    Tensor a = random_tensor({2, 3, 4}, 31), b = random_tensor({2, 1, 4}, 32);
    Tensor c = random_tensor({2, 3, 2}, 33);
    expect_gradcheck([](auto& x) { return concat({x[0], x[1]}, 1); }, {a, b});
    expect_gradcheck([](auto& x) { return concat({x[0], x[1], x[0]}, -1); }, {a, c});
    expect_gradcheck([](auto& x) { return concat({x[0], x[0]}, 0); }, {a});
    for (int dim : {0, 1, 2}) {
        expect_gradcheck([=](auto& x) { return slice(x[0], dim, 1, 2); }, {a});
        Tensor parts = concat({slice(a, dim, 0, 1), slice(a, dim, 1, a.size(dim))}, dim);
        CHECK(parts.to_vector() == a.to_vector());
    }
    CHECK_THROWS_AS(concat({a, c}, 1), Error);
    CHECK_THROWS_AS(slice(a, 1, 2, 5), Error);
}

TEST_CASE("stack along a new dim") {
    Tensor a = random_tensor({2, 3}, 34), b = random_tensor({2, 3}, 35);
    for (int dim : {0, 1, 2})
        expect_gradcheck([=](auto& x) { return stack({x[0], x[1]}, dim); }, {a, b});
    Tensor s = stack({a, b}, 1);
    CHECK(s.shape() == Shape{2, 2, 3});
    CHECK(s.data()[3] == b.data()[0]);
}

TEST_CASE("embedding gather, repeated ids accumulate, padding row gets no gradient") {
    Tensor w = random_tensor({5, 3}, 36);
    std::vector<int32_t> ids{1, 3, 1, 0, 1, 4};
    expect_gradcheck([&](auto& x) { return embedding(x[0], ids, {2, 3}); }, {w});
    Tensor e = embedding(w, ids, {2, 3}, /*padding_idx=*/0);
    CHECK(e.shape() == Shape{2, 3, 3});
    CHECK(e.data()[3 * 3 + 2] == w.data()[0 * 3 + 2]);
    sum(e).backward();
    CHECK(w.grad_data()[1 * 3] == 3);  // id 1 used three times
    CHECK(w.grad_data()[0] == 0);      // padding row
    CHECK(w.grad_data()[2 * 3] == 0);  // unused row
    CHECK_THROWS_WITH_AS(embedding(w, {5}, {1}), doctest::Contains("id 5"), Error);
}

TEST_CASE("gather_rows picks rows along the first dim, scatter-adds their gradient") {
    Tensor x = random_tensor({4, 2, 3}, 37);
    const std::vector<int32_t> rows{2, 0, 2, 3, 1};
    expect_gradcheck([&](auto& in) { return gather_rows(in[0], rows); }, {x});
    Tensor g = gather_rows(x, rows);
    CHECK(g.shape() == Shape{5, 2, 3});
    for (size_t i = 0; i < rows.size(); ++i)
        for (int64_t j = 0; j < 6; ++j) CHECK(g.data()[i * 6 + j] == x.data()[rows[i] * 6 + j]);
    sum(g).backward();
    CHECK(x.grad_data()[2 * 6] == 2);  // row 2 picked twice
    CHECK(x.grad_data()[0] == 1);
    CHECK_THROWS_WITH_AS(gather_rows(x, {4}), doctest::Contains("row 4 at position 0"), Error);
}

TEST_CASE("dropout: identity in eval, inverted scaling in training, gradient through the mask") {
    Tensor x = random_tensor({1000}, 37);
    Rng rng(1);
    CHECK(dropout(x, 0.5, false, rng).data() == x.data());
    Tensor y = dropout(x, 0.25, true, rng);
    int zeros = 0;
    for (int i = 0; i < 1000; ++i) {
        if (y.data()[i] == 0)
            ++zeros;
        else
            CHECK(y.data()[i] == doctest::Approx(x.data()[i] / 0.75));
    }
    CHECK(zeros > 200);
    CHECK(zeros < 300);
    Tensor small = random_tensor({20}, 38);
    // the same seed at every call, so the mask is a fixed function for the finite differences
    expect_gradcheck(
        [](auto& v) {
            Rng r(7);
            return dropout(v[0], 0.3, true, r);
        },
        {small});
    CHECK_THROWS_AS(dropout(x, 1.0, true, rng), Error);
}
