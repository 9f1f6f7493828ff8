// kernels::shared_over_steps (autograd/kernels/kernels.h): a weight used by every step of a recurrence,
// whose gradient is summed over the steps in one product. It must give the gradient of the weight
// itself.
#include <doctest/doctest.h>

#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;
using seqgrad::kernels::shared_over_steps;

namespace {

// T steps of h' = gru_cell(x_t W_ihᵀ + b_ih, h, W_hh, b_hh) with rows dropping out as in a
// length-sorted batch (rows_at[t] rows at step t), then Σ of the last state times a fixed
// pattern; `share` runs it on shared_over_steps views of W_ih and W_hh, else on the weights.
Tensor unrolled_gru(const std::vector<Tensor>& v, bool share, const std::vector<int64_t>& rows_at) {
    const Tensor &xs = v[0], &w_ih = v[1], &w_hh = v[2], &b_ih = v[3], &b_hh = v[4];
    const int64_t B = xs.size(1), in = xs.size(2), H = w_hh.size(1);
    const Tensor w_ih_used = share ? shared_over_steps(w_ih) : w_ih;
    const Tensor w_hh_used = share ? shared_over_steps(w_hh) : w_hh;
    Tensor h = Tensor::zeros({B, H});
    Tensor total = Tensor::scalar(0);
    for (int64_t t = 0; t < xs.size(0); ++t) {
        const int64_t n = rows_at[size_t(t)];
        Tensor x_t = slice(reshape(slice(xs, 0, t, t + 1), {B, in}), 0, 0, n);
        h = gru_cell(linear(x_t, w_ih_used, b_ih), slice(h, 0, 0, n), w_hh_used, b_hh);
        total = add(total, sum(mul(h, real(t + 1))));
    }
    return total;
}

}  // namespace

TEST_CASE("shared_over_steps: an unrolled GRU gradchecks, and equals the unshared graph") {
    const int64_t T = 4, B = 3, in = 5, H = 4;
    const std::vector<int64_t> rows_at{3, 3, 2, 1};
    std::vector<Tensor> inputs{random_tensor({T, B, in}, 1), random_tensor({3 * H, in}, 2),
                               random_tensor({3 * H, H}, 3), random_tensor({3 * H}, 4),
                               random_tensor({3 * H}, 5)};
    expect_gradcheck([&](auto& v) { return unrolled_gru(v, true, rows_at); }, inputs);

    // the same gradients as the per-step products, to rounding
    auto gradients = [&](bool share) {
        for (Tensor& t : inputs) t.zero_grad();
        unrolled_gru(inputs, share, rows_at).backward();
        std::vector<std::vector<real>> g;
        for (const Tensor& t : inputs) g.push_back(t.grad().to_vector());
        return g;
    };
    const auto shared = gradients(true), per_step = gradients(false);
    for (size_t i = 0; i < inputs.size(); ++i)
        for (size_t j = 0; j < shared[i].size(); ++j)
            CHECK(shared[i][j] == doctest::Approx(per_step[i][j]).epsilon(1e-12));
}

TEST_CASE("shared_over_steps: more rows than one product holds, and ops that do not know it") {
    // 5 steps of 100 rows: the view adds its rows in more than one product (it holds at most
    // 256), and a mul that reads the view directly adds through the view's .grad.
    const int64_t T = 5, B = 100, in = 3, out = 2;
    Tensor xs = random_tensor({T, B, in}, 6), w = random_tensor({out, in}, 7);
    auto loss = [&](bool share) {
        const Tensor used = share ? shared_over_steps(w) : w;
        Tensor total = sum(mul(used, used));  // not a product with rows: a plain .grad
        for (int64_t t = 0; t < T; ++t)
            total = add(total, sum(tanh(linear(reshape(slice(xs, 0, t, t + 1), {B, in}), used))));
        return total;
    };
    w.zero_grad();
    loss(true).backward();
    const std::vector<real> shared = w.grad().to_vector();
    w.zero_grad();
    loss(false).backward();
    const std::vector<real> per_step = w.grad().to_vector();
    for (size_t j = 0; j < shared.size(); ++j)
        CHECK(shared[j] == doctest::Approx(per_step[j]).epsilon(1e-12));
    expect_gradcheck(
        [&](auto& v) {
            const Tensor used = shared_over_steps(v[1]);
            Tensor total = sum(mul(used, used));
            for (int64_t t = 0; t < T; ++t)
                total =
                    add(total, sum(tanh(linear(reshape(slice(v[0], 0, t, t + 1), {B, in}), used))));
            return total;
        },
        {xs, w});
}

TEST_CASE("shared_over_steps: the weight itself without grad, and a named error for a bad rank") {
    Tensor w = random_tensor({3, 2}, 8);
    Tensor view = shared_over_steps(w);
    // the fast kernels make a view (no copy); the reference build uses the weight itself
    CHECK((view.node_ptr().get() != w.node_ptr().get()) == bool(SEQGRAD_FAST_KERNELS));
    CHECK(view.data() == w.data());
    {
        NoGradGuard no_grad;
        CHECK(shared_over_steps(w).node_ptr().get() == w.node_ptr().get());
    }
    Tensor frozen = random_tensor({3, 2}, 9, false);
    CHECK(shared_over_steps(frozen).node_ptr().get() == frozen.node_ptr().get());
    CHECK_THROWS_WITH_AS(shared_over_steps(random_tensor({3}, 10)),
                         "shared_over_steps: weight [3] must be [N, K]", Error);
}
