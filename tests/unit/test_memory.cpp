// Memory: the buffer pool's size classes, gradient shards that hold only the pages a step wrote,
// and the output projection fused with the loss (one [N, V] buffer instead of two) — each
// giving exactly the numbers of the plain version.
#include <unistd.h>

#include <cmath>
#include <thread>

#include "autograd/fused_loss.h"
#include "autograd/ops.h"
#include "layers/loss.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;

namespace {

double max_abs_difference(const std::vector<real>& a, const std::vector<real>& b) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return m;
}

}  // namespace

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

TEST_CASE("gradient shard: an embedding table's shard holds only the rows a step wrote") {
    const int64_t V = 3000, E = 64;
    Tensor table = random_tensor({V, E}, 1);
    Tensor reference = Tensor::from_vector(table.shape(), table.to_vector(), true);
    Tensor upstream = random_tensor({6, E}, 2, false);
    const std::vector<std::vector<int32_t>> steps{{5, 17, 5, 2999, 0, 1200},
                                                  {7, 7, 1500, 42, 2999, 3}};
    GradientShard shard;
    for (const auto& ids : steps) {
        {
            GradientShard::Scope scope(shard);
            sum(mul(embedding(table, ids, {6}, -1), upstream)).backward();
        }
        sum(mul(embedding(reference, ids, {6}, -1), upstream)).backward();
        // at most 6 rows (capacity rounds up to 8), not the table's 1.5 MB
        CHECK(shard.resident_bytes() >= 5 * E * int64_t(sizeof(real)));
        CHECK(shard.resident_bytes() <= 8 * E * int64_t(sizeof(real)));
        if (&ids == &steps[0]) CHECK(!table.has_grad());  // nothing reached the leaf yet
        shard.reduce_into_leaves();
        CHECK(shard.empty());
        CHECK(max_abs_difference(table.grad().to_vector(), reference.grad().to_vector()) == 0);
    }
    // Rows written twice in a step accumulate, and nothing of the first step is left over.
    const std::vector<real> g = table.grad().to_vector();
    for (int64_t j = 0; j < E; ++j) {
        CHECK(g[size_t(7 * E + j)] == upstream.data()[j] + upstream.data()[E + j]);
        CHECK(g[size_t(17 * E + j)] == upstream.data()[E + j]);
    }
}

TEST_CASE("gradient shard: rows and then the whole gradient of one leaf in one step") {
    // An embedding writes rows, then an op asks for the whole gradient (a tied output
    // projection would): the rows held so far must end up in the whole gradient, once.
    Tensor table = random_tensor({50, 4}, 4);
    Tensor reference = Tensor::from_vector(table.shape(), table.to_vector(), true);
    Tensor upstream = random_tensor({3, 4}, 5, false);
    auto backward = [&](const Tensor& t) {  // rows first, then the whole gradient
        sum(mul(embedding(t, {9, 2, 9}, {3}, -1), upstream)).backward();
        sum(mul(t, t)).backward();
    };
    GradientShard shard;
    {
        GradientShard::Scope scope(shard);
        backward(table);
    }
    shard.reduce_into_leaves();
    backward(reference);
    CHECK(max_abs_difference(table.grad().to_vector(), reference.grad().to_vector()) < 1e-15);
    CHECK(shard.resident_bytes() >= 50 * 4 * int64_t(sizeof(real)));
}

TEST_CASE("gradient shard: a dense large leaf stays exact over steps") {
    Tensor w = random_tensor({300, 200}, 3);  // 480 kB of doubles, every element written
    Tensor reference = Tensor::from_vector(w.shape(), w.to_vector(), true);
    GradientShard shard_a, shard_b;
    for (int step = 0; step < 3; ++step) {
        Tensor x = random_tensor({300, 200}, 10 + uint64_t(step), false);
        auto work = [&](GradientShard& shard, real scale) {
            GradientShard::Scope scope(shard);
            sum(mul(mul(w, x), scale)).backward();
        };
        std::thread a(work, std::ref(shard_a), real(1));
        std::thread b(work, std::ref(shard_b), real(-0.5));
        a.join();
        b.join();
        GradientShard::reduce_into_leaves({&shard_a}, 2);  // on two threads, as DataParallel does
        shard_b.reduce_into_leaves();
        CHECK(shard_a.resident_bytes() >= 300 * 200 * int64_t(sizeof(real)));
        sum(mul(mul(reference, x), real(1))).backward();
        sum(mul(mul(reference, x), real(-0.5))).backward();
        CHECK(max_abs_difference(w.grad().to_vector(), reference.grad().to_vector()) < 1e-12);
    }
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
