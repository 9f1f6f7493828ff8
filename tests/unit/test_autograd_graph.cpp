// Behaviour of the graph: ordering, accumulation, freeing, grad mode, memory.
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;

TEST_CASE("a tensor used twice accumulates both gradient paths") {
    Tensor x = Tensor::from_vector({2}, {3, -2}, true);
    Tensor y = sum(add(mul(x, x), x));  // y = Σ x² + x, dy/dx = 2x + 1
    y.backward();
    CHECK(x.grad_data()[0] == 7);
    CHECK(x.grad_data()[1] == -3);
    expect_gradcheck([](auto& v) { return mul(tanh(v[0]), sigmoid(mul(v[0], v[0]))); },
                     {random_tensor({3}, 1)});
}

TEST_CASE("a 5000-op-deep chain backpropagates without recursion") {
    Tensor x = Tensor::scalar(0.5, true);
    Tensor h = x;
    for (int i = 0; i < 5000; ++i) h = add(mul(h, 0.999), 0.001);
    h.backward();
    CHECK(x.grad_data()[0] == doctest::Approx(std::pow(0.999, 5000)).epsilon(1e-9));
    expect_gradcheck(
        [](auto& v) {
            Tensor h = v[0];
            for (int i = 0; i < 200; ++i) h = tanh(add(h, v[1]));
            return h;
        },
        {random_tensor({2}, 2), random_tensor({2}, 3)});
}

TEST_CASE("backward seeds a scalar with 1, a non-scalar needs an explicit gradient") {
    Tensor x = random_tensor({3}, 4);
    Tensor y = mul(x, 2.0);
    CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("not a scalar"), Error);
    y.backward(Tensor::from_vector({3}, {1, 2, 3}));
    CHECK(x.grad_data()[2] == 6);
    CHECK_THROWS_AS(mul(x, 2.0).backward(Tensor::zeros({4})), Error);
}

TEST_CASE("gradients accumulate across backward calls until zero_grad") {
    Tensor x = Tensor::from_vector({1}, {2}, true);
    for (int i = 0; i < 3; ++i) sum(mul(x, x)).backward();  // graph rebuilt each time
    CHECK(x.grad_data()[0] == 12);
    x.zero_grad();
    CHECK(x.grad_data()[0] == 0);
}

TEST_CASE("backward through a freed graph is a clear error") {
    Tensor x = random_tensor({2}, 5);
    Tensor y = sum(tanh(x));
    y.backward();
    CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("already freed"), Error);
    Tensor hidden = tanh(x);
    sum(hidden).backward();
    CHECK_THROWS_WITH_AS(sum(mul(hidden, 2.0)).backward(), doctest::Contains("already freed"),
                         Error);
}

TEST_CASE("NoGradGuard records nothing") {
    Tensor x = random_tensor({2}, 6);
    {
        NoGradGuard guard;
        Tensor y = tanh(x);
        CHECK_FALSE(y.requires_grad());
        CHECK(y.node().parents.empty());
        CHECK_FALSE(grad_enabled());
    }
    CHECK(grad_enabled());
    CHECK(tanh(x).requires_grad());
}

TEST_CASE("detach cuts the graph, retain_grad keeps an intermediate gradient") {
    Tensor x = random_tensor({2}, 7);
    Tensor h = mul(x, 3.0);
    h.retain_grad();
    Tensor d = h.detach();
    CHECK_FALSE(d.requires_grad());
    sum(mul(h, d)).backward();
    CHECK(h.grad_data() != nullptr);
    CHECK(h.grad_data()[0] == doctest::Approx(d.data()[0]));
    CHECK(x.grad_data()[0] == doctest::Approx(3 * d.data()[0]));
    CHECK_THROWS_AS(h.set_requires_grad(false), Error);
}

TEST_CASE("memory stays flat across many training-like steps") {
    Tensor w = random_tensor({16, 16}, 8), b = random_tensor({16}, 9);
    auto step = [&]() {
        Tensor h = random_tensor({4, 16}, 10, false);
        for (int t = 0; t < 10; ++t) h = tanh(linear(h, w, b));
        Tensor loss = mean(mul(h, h));
        loss.backward();
        w.zero_grad();
        b.zero_grad();
    };
    for (int i = 0; i < 5; ++i) step();
    BufferPoolStats before = buffer_pool_stats();
    for (int i = 0; i < 200; ++i) step();
    BufferPoolStats after = buffer_pool_stats();
    CHECK(after.live_buffers == before.live_buffers);
    CHECK(after.system_allocations == before.system_allocations);  // all served by the pool
    CHECK(after.pool_hits > before.pool_hits);
}

TEST_CASE("buffer pool reuses a freed buffer of the same bucket") {
    real* first;
    {
        Buffer a(1000);
        first = a.data();
    }
    Buffer b(990);  // same bucket (capacity 1024)
    CHECK(b.data() == first);
    CHECK(b.size() == 990);
}

TEST_CASE("gradcheck catches a wrong gradient") {
    // An op whose backward is deliberately wrong by a factor 2 must fail the check.
    auto broken = [](const std::vector<Tensor>& v) {
        Tensor out = make_result(v[0].shape());
        for (int64_t i = 0; i < out.numel(); ++i) out.data()[i] = v[0].data()[i] * v[0].data()[i];
        record(out, "broken_square", {v[0]}, [](Node& out) {
            real* g = parent_grad(out, 0);
            for (int64_t i = 0; i < out.numel(); ++i)
                g[i] += 4 * out.parent(0).data[i] * out.grad.data()[i];
        });
        return out;
    };
    GradcheckResult r = gradcheck(broken, {random_tensor({3}, 11)});
    CHECK_FALSE(r.passed);
    CHECK(r.max_rel_error > 0.1);
}

TEST_CASE("rng: same seed, same numbers, state round trip") {
    Rng a(42), b(42);
    for (int i = 0; i < 10; ++i) CHECK(a.next_u64() == b.next_u64());
    auto state = a.state();
    double next = a.uniform();
    b.set_state(state);
    CHECK(b.uniform() == next);
    for (int i = 0; i < 1000; ++i) CHECK(a.below(7) < 7);
}
