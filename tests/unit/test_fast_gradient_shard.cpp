// GradientShard (autograd/kernels/fast/gradient_shard.h): the per-thread gradient buffers of the fast
// data-parallel kernels — that a shard holds only the rows a step wrote, and that shards reduced
// into the leaves give exactly the gradient of one thread. (Fast build only.)
#include <cmath>
#include <thread>

#include "seqgrad/autograd/kernels/fast/gradient_shard.h"
#include "seqgrad/autograd/ops.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::max_abs_difference;
using seqgrad::testing::random_tensor;

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
    // projection would): the rows kept so far must end up in the whole gradient, once.
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

TEST_CASE("gradient shards: two threads accumulate into one leaf without a race") {
    Tensor w = Tensor::full({1000}, 1, true);
    GradientShard shard_a, shard_b;
    auto work = [&](GradientShard& shard, real scale) {
        GradientShard::Scope scope(shard);
        for (int i = 0; i < 50; ++i) sum(mul(w, scale)).backward();  // dw += scale, 50 times
    };
    std::thread a(work, std::ref(shard_a), real(1));
    std::thread b(work, std::ref(shard_b), real(2));
    a.join();
    b.join();
    CHECK(!w.has_grad());  // nothing reached the leaf yet
    CHECK(!shard_a.empty());
    shard_a.reduce_into_leaves();
    shard_b.reduce_into_leaves();
    CHECK(shard_a.empty());
    const std::vector<real> g = w.grad().to_vector();
    for (real x : g) CHECK(x == doctest::Approx(150.0));
    // on two threads: two leaves, each element in one part, give the same sums
    Tensor v = Tensor::full({10}, 1, true);
    Tensor w2 = Tensor::full({30}, 1, true);
    GradientShard shard_c;
    {
        GradientShard::Scope scope(shard_c);
        (sum(v) + sum(mul(w2, real(3)))).backward();
    }
    CHECK(!shard_c.empty());
    GradientShard::reduce_into_leaves({&shard_c}, 2);
    CHECK(shard_c.empty());
    CHECK(v.grad().to_vector()[9] == doctest::Approx(1.0));
    CHECK(w2.grad().to_vector()[29] == doctest::Approx(3.0));
    // reduced buffers are zeroed: a second reduce adds nothing
    shard_a.reduce_into_leaves();
    CHECK(w.grad().to_vector()[0] == doctest::Approx(150.0));
}

TEST_CASE("gradient shards: a reduce on several threads adds every element of every shard once") {
    // Two shards that met the leaves in opposite orders; `table` is written densely by one
    // shard and by rows (an embedding) in the other, and `big` carries most of the work, so
    // the cut into parts falls inside it (between rows). Whatever the cut, each element must
    // receive each shard's value exactly once: a row given to two parts would be added twice,
    // one given to none would be missing.
    Tensor a = Tensor::full({100}, 1, true), big = Tensor::full({50, 7}, 1, true);
    Tensor table = Tensor::full({40, 3}, 1, true);
    for (int threads : {2, 3, 5}) {
        GradientShard x, y;
        {
            GradientShard::Scope scope(x);
            sum(mul(a, real(2))).backward();  // a first
            sum(mul(big, real(3))).backward();
            sum(mul(table, real(0.5))).backward();
        }
        {
            GradientShard::Scope scope(y);
            sum(mul(big, real(5))).backward();  // big first
            sum(embedding(table, {3, 39, 3, 0}, {4}, -1)).backward();
            sum(mul(a, real(7))).backward();
        }
        a.zero_grad();
        big.zero_grad();
        table.zero_grad();
        GradientShard::reduce_into_leaves({&x, &y}, threads);
        CHECK(x.empty());
        CHECK(y.empty());
        for (real g : a.grad().to_vector()) CHECK(g == 9.0);
        for (real g : big.grad().to_vector()) CHECK(g == 8.0);
        const std::vector<real> t = table.grad().to_vector();
        for (int64_t r = 0; r < 40; ++r)
            for (int64_t j = 0; j < 3; ++j)
                CHECK(t[size_t(r * 3 + j)] == 0.5 + (r == 3 ? 2 : r == 39 || r == 0 ? 1 : 0));
    }
}
