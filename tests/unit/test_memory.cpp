// Memory: the buffer pool's size classes and the output projection fused with the loss (one [N, V]
// buffer instead of two) — each giving exactly the numbers of the plain version.
#include <unistd.h>

#include <cmath>
#include <thread>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/loss.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::max_abs_difference;
using seqgrad::testing::random_tensor;

TEST_CASE("buffer pool: one size class per power of two, and a cached class above serves") {
    real* first;
    {
        Buffer a(1500);  // capacity 2048
        first = a.data();
    }
    {
        Buffer b(1100);  // the same class: reused
        CHECK(b.data() == first);
    }
    // Nothing cached in the class of 1000 (capacity 1024): the cached 2048 serves it rather
    // than a system allocation, and goes back to its own class afterwards.
    const int64_t allocations = buffer_pool_stats().system_allocations;
    {
        Buffer c(1000);
        CHECK(c.data() == first);
        CHECK(c.size() == 1000);
    }
    CHECK(buffer_pool_stats().system_allocations == allocations);
    Buffer d(2048);
    CHECK(d.data() == first);
}

TEST_CASE("linear_cross_entropy equals cross_entropy(linear(...)) in value and gradient") {
    const std::vector<int32_t> targets{3, 0, -100, 6, 1, 6};  // row 2 is padding
    for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none})
        for (real smoothing : {0.0, 0.2})
            for (bool with_bias : {true, false}) {
                CAPTURE(int(reduction));
                CAPTURE(smoothing);
                CAPTURE(with_bias);
                Tensor x = random_tensor({6, 5}, 31), w = random_tensor({7, 5}, 32, true, -2, 2);
                Tensor b = with_bias ? random_tensor({7}, 33) : Tensor();
                auto copy = [](const Tensor& t) {
                    return t.defined() ? Tensor::from_vector(t.shape(), t.to_vector(), true)
                                       : Tensor();
                };
                Tensor x2 = copy(x), w2 = copy(w), b2 = copy(b);
                int64_t correct = -1, correct2 = -1;
                Tensor fused =
                    linear_cross_entropy(x, w, b, targets, -100, reduction, smoothing, &correct);
                Tensor composed = cross_entropy(linear(x2, w2, b2), targets, -100, reduction,
                                                smoothing, &correct2);
                CHECK(max_abs_difference(fused.to_vector(), composed.to_vector()) < 1e-12);
                CHECK(correct == correct2);
                Tensor upstream = random_tensor(fused.shape(), 34, false);
                fused.backward(upstream);
                composed.backward(upstream);
                CHECK(max_abs_difference(x.grad().to_vector(), x2.grad().to_vector()) < 1e-12);
                CHECK(max_abs_difference(w.grad().to_vector(), w2.grad().to_vector()) < 1e-12);
                if (with_bias)
                    CHECK(max_abs_difference(b.grad().to_vector(), b2.grad().to_vector()) < 1e-12);
                expect_gradcheck(
                    [&](auto& v) {
                        return linear_cross_entropy(v[0], v[1], with_bias ? v[2] : Tensor(),
                                                    targets, -100, reduction, smoothing);
                    },
                    with_bias ? std::vector<Tensor>{x, w, b} : std::vector<Tensor>{x, w});
            }
}

TEST_CASE("linear_cross_entropy: bad shapes and targets are named errors") {
    Tensor x = random_tensor({2, 3}, 1), w = random_tensor({4, 3}, 2);
    CHECK_THROWS_WITH_AS(
        linear_cross_entropy(x, random_tensor({4, 5}, 3), Tensor(), {0, 1}, -1, Reduction::mean, 0),
        doctest::Contains("linear_cross_entropy: x [2,3] x weight [4,5]"), Error);
    CHECK_THROWS_WITH_AS(
        linear_cross_entropy(x, w, random_tensor({3}, 4), {0, 1}, -1, Reduction::mean, 0),
        doctest::Contains("bias"), Error);
    CHECK_THROWS_WITH_AS(linear_cross_entropy(x, w, Tensor(), {0, 4}, -1, Reduction::mean, 0),
                         doctest::Contains("target 4 at row 1 is out of range"), Error);
    CHECK_THROWS_AS(linear_cross_entropy(x, w, Tensor(), {0}, -1, Reduction::mean, 0), Error);
    // No grad mode: the value only.
    NoGradGuard no_grad;
    Tensor loss = linear_cross_entropy(x, w, Tensor(), {0, 3}, -1, Reduction::sum, 0);
    CHECK(!loss.requires_grad());
    CHECK(loss.item() ==
          doctest::Approx(cross_entropy(linear(x, w, Tensor()), {0, 3}, -1, Reduction::sum).item())
              .epsilon(1e-14));
}
