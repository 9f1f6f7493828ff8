// The fast kernels (autograd/kernels/fast/) against their references
// (autograd/kernels/kernels_reference.h, kernels_reference.cpp, gemm.cpp): the row kernels in float
// and double on sizes with and without a tail of 8, the products, the optimizers' passes (against
// optim/'s loops); and the float kernels' own accuracy. (Fast build only: the reference build has
// no fast kernels.)
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <vector>

#include "seqgrad/autograd/kernels/fast/kernels.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "seqgrad/optim/sgd.h"
#include "test_util.h"

using namespace seqgrad;
using namespace seqgrad::kernels;
using seqgrad::testing::random_tensor;

namespace {

// deterministic values in [lo, hi)
template <class T>
std::vector<T> values(size_t n, uint64_t seed, double lo = -3, double hi = 3) {
    std::vector<T> v(n);
    for (auto& x : v) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        x = T(lo + (hi - lo) * double(seed >> 11) * 0x1.0p-53);
    }
    return v;
}

// |a − b| <= tol · (1 + |b|) for every element
template <class T>
void check_close(const std::vector<T>& a, const std::vector<T>& b, double tol) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("element " << i << ": " << a[i] << " vs " << b[i]);
        CHECK(std::fabs(double(a[i]) - double(b[i])) <= tol * (1 + std::fabs(double(b[i]))));
    }
}

const std::vector<int64_t> kSizes{1, 3, 7, 8, 9, 16, 17, 31, 100, 257};

// Every row kernel, fast against reference, in T; tol: relative (0: bit for bit).
template <class T>
void check_row_kernels(double tol) {
    for (int64_t n : kSizes) {
        INFO("n = " << n);
        const auto x = values<T>(size_t(n), 1 + uint64_t(n)), y = values<T>(size_t(n), 99);
        const auto z = values<T>(size_t(n), 7, -1, 1);
        auto close = [&](double a, double b) {
            CHECK(std::fabs(a - b) <= (tol == 0 ? 0 : tol * (1 + std::fabs(b)) * double(n)));
        };
        CHECK(fast::row_max(x.data(), n) == reference::row_max(x.data(), n));
        close(fast::sum_exp_shifted(x.data(), T(0.5), n),
              reference::sum_exp_shifted(x.data(), T(0.5), n));
        std::vector<T> out_f(static_cast<size_t>(n)), out_r(static_cast<size_t>(n));
        double sx_f = 0, sx_r = 0;
        close(fast::exp_shifted(x.data(), T(0.5), out_f.data(), n, &sx_f),
              reference::exp_shifted(x.data(), T(0.5), out_r.data(), n, &sx_r));
        close(sx_f, sx_r);
        check_close(out_f, out_r, tol);
        auto a = y, b = y;
        fast::scale_shift(a.data(), T(0.75), T(0.25), n);
        reference::scale_shift(b.data(), T(0.75), T(0.25), n);
        check_close(a, b, tol);
        a = y, b = y;
        fast::add_scaled(a.data(), T(-1.5), x.data(), n);
        reference::add_scaled(b.data(), T(-1.5), x.data(), n);
        check_close(a, b, tol);
        close(fast::dot(x.data(), y.data(), n), reference::dot(x.data(), y.data(), n));
        a = x, b = x;
        fast::sigmoid_inplace(a.data(), n);
        reference::sigmoid_inplace(b.data(), n);
        check_close(a, b, tol);
        a = x, b = x;
        fast::tanh_inplace(a.data(), n);
        reference::tanh_inplace(b.data(), n);
        check_close(a, b, tol);
        std::vector<T> t_f(static_cast<size_t>(n)), t_r(static_cast<size_t>(n));
        close(fast::tanh_row_dot(x.data(), y.data(), z.data(), t_f.data(), n),
              reference::tanh_row_dot(x.data(), y.data(), z.data(), t_r.data(), n));
        check_close(t_f, t_r, tol);
        close(fast::tanh_row_dot(x.data(), y.data(), z.data(), static_cast<T*>(nullptr), n),
              reference::tanh_row_dot(x.data(), y.data(), z.data(), static_cast<T*>(nullptr), n));
        auto dq_f = y, dq_r = y, dk_f = x, dk_r = x;
        fast::tanh_backward_row(T(0.3), z.data(), t_r.data(), dq_f.data(), dk_f.data(), n);
        reference::tanh_backward_row(T(0.3), z.data(), t_r.data(), dq_r.data(), dk_r.data(), n);
        check_close(dq_f, dq_r, tol);
        check_close(dk_f, dk_r, tol);
        fast::tanh_backward_row(T(0.3), z.data(), t_r.data(), static_cast<T*>(nullptr), dk_f.data(),
                                n);
        reference::tanh_backward_row(T(0.3), z.data(), t_r.data(), static_cast<T*>(nullptr),
                                     dk_r.data(), n);
        check_close(dk_f, dk_r, tol);
    }
}

}  // namespace

TEST_CASE("row kernels: fast equals reference in float (to 1e-6) and double (bit for bit)") {
    check_row_kernels<float>(1e-6);
    check_row_kernels<double>(0);
}

TEST_CASE("row kernels: a row with a NaN or all −inf gives the same max in both") {
    const float inf = INFINITY;
    std::vector<float> all_masked(11, -inf), with_nan{1, NAN, 3, 2, 0, 0, 0, 0, 5};
    CHECK(fast::row_max(all_masked.data(), 11) == -inf);
    CHECK(reference::row_max(all_masked.data(), 11) == -inf);
    CHECK(fast::row_max(with_nan.data(), 9) == reference::row_max(with_nan.data(), 9));
    CHECK(fast::row_max(with_nan.data(), 0) == -inf);
}

TEST_CASE("gemm: the fast product equals the reference one for every transpose, M 1..12") {
    for (int64_t M : {1, 2, 3, 5, 8, 9, 12})
        for (int64_t N : {1, 7, 50})
            for (int64_t K : {1, 9, 33})
                for (int ta = 0; ta < 2; ++ta)
                    for (int tb = 0; tb < 2; ++tb) {
                        INFO("M=" << M << " N=" << N << " K=" << K << " ta=" << ta << " tb=" << tb);
                        const auto A = values<real>(size_t(M * K), 3);
                        const auto B = values<real>(size_t(K * N), 4);
                        auto C_fast = values<real>(size_t(M * N), 5), C_ref = C_fast;
                        fast::gemm(ta, tb, M, N, K, real(0.5), A.data(), B.data(), real(0.25),
                                   C_fast.data());
                        reference::gemm(ta, tb, M, N, K, real(0.5), A.data(), B.data(), real(0.25),
                                        C_ref.data());
                        check_close(C_fast, C_ref, 1e-13);
                    }
}

TEST_CASE("products by a weight: fast (packed, on a shared_over_steps view) equals reference") {
    for (int64_t rows : {1, 3, 16, 40})  // packed below 16 rows, BLAS above
        for (const auto& shape : {std::pair<int64_t, int64_t>{48, 20}, {13, 37}}) {
            const int64_t N = shape.first, K = shape.second;  // (clang: no binding in INFO)
            INFO("rows=" << rows << " N=" << N << " K=" << K);
            Tensor w = random_tensor({N, K}, 11);
            Tensor view = fast::shared_over_steps(w);
            REQUIRE(view.node_ptr().get() != w.node_ptr().get());
            const auto x = values<real>(size_t(rows * K), 12);
            auto y_fast = values<real>(size_t(rows * N), 13), y_ref = y_fast;
            fast::product_x_wt(view.node(), rows, x.data(), 1, y_fast.data());
            reference::product_x_wt(w.node(), rows, x.data(), 1, y_ref.data());
            check_close(y_fast, y_ref, 1e-13);
            const auto dy = values<real>(size_t(rows * N), 14);
            auto dx_fast = values<real>(size_t(rows * K), 15), dx_ref = dx_fast;
            fast::product_dy_w(view.node(), rows, dy.data(), dx_fast.data());
            reference::product_dy_w(w.node(), rows, dy.data(), dx_ref.data());
            check_close(dx_fast, dx_ref, 1e-13);
        }
}

TEST_CASE("Adam update: fast (blocked, threaded) equals optim/adam.cpp's loop in every mode") {
    // the fast kernel keeps PyTorch's arrangement (m by lerp, lr / (1 − β1^t) and 1 / √(1 − β2^t)
    // folded into constants); the textbook loop divides by both bias corrections: equal to a few
    // units in the last place of double
    for (int mode = 0; mode < 3; ++mode)
        for (double scale : {1.0, 0.375})
            for (bool zero : {false, true})
                for (int64_t t : {1, 7}) {
                    INFO("mode " << mode << " scale " << scale << " zero " << zero << " t " << t);
                    const AdamStep step{1e-3,      0.9, 0.999,      1e-8, mode == 0 ? 0.0 : 0.01,
                                        mode == 2, t,   real(scale)};
                    const size_t n = 70001;  // more than the grain: cut between threads; a tail
                    std::vector<std::vector<real>> fast_arrays, reference_arrays;
                    for (uint64_t k = 0; k < 4; ++k)
                        fast_arrays.push_back(values<real>(n, 20 + k, -1, 1));
                    for (auto& v : fast_arrays[3]) v = std::fabs(v);  // the second moment is >= 0
                    reference_arrays = fast_arrays;
                    auto arrays = [&](std::vector<std::vector<real>>& a) {
                        return AdamArrays{a[0].data(), a[1].data(), a[2].data(), a[3].data(),
                                          int64_t(n)};
                    };
                    fast::adam_update(step, {arrays(fast_arrays)}, zero);
                    adam_update_reference(step, arrays(reference_arrays));
                    if (zero) std::fill(reference_arrays[0].begin(), reference_arrays[0].end(), 0);
                    for (size_t k = 0; k < 4; ++k)
                        check_close(fast_arrays[k], reference_arrays[k], 1e-14);
                }
}

TEST_CASE("SGD update: fast (one loop per mode, threaded) equals optim/sgd.cpp's loop") {
    struct Mode {
        double momentum, weight_decay;
        bool nesterov;
    };
    for (const Mode& mode : {Mode{0, 0, false}, Mode{0, 0.01, false}, Mode{0.9, 0, false},
                             Mode{0.9, 0.01, false}, Mode{0.9, 0, true}, Mode{0.9, 0.01, true}})
        for (double scale : {1.0, 0.375})
            for (bool zero : {false, true}) {
                INFO("momentum " << mode.momentum << " wd " << mode.weight_decay << " nesterov "
                                 << mode.nesterov << " scale " << scale << " zero " << zero);
                const SgdStep step{0.1, mode.momentum, mode.weight_decay, mode.nesterov,
                                   real(scale)};
                const size_t n = 70001;
                std::vector<std::vector<real>> fast_arrays, reference_arrays;
                for (uint64_t k = 0; k < 3; ++k)
                    fast_arrays.push_back(values<real>(n, 30 + k, -1, 1));
                reference_arrays = fast_arrays;
                auto arrays = [&](std::vector<std::vector<real>>& a) {
                    return SgdArrays{a[0].data(), a[1].data(),
                                     mode.momentum > 0 ? a[2].data() : nullptr, int64_t(n)};
                };
                fast::sgd_update(step, {arrays(fast_arrays)}, zero);
                sgd_update_reference(step, arrays(reference_arrays));
                if (zero) std::fill(reference_arrays[0].begin(), reference_arrays[0].end(), 0);
                for (size_t k = 0; k < 3; ++k)
                    check_close(fast_arrays[k], reference_arrays[k], 1e-14);
            }
}

TEST_CASE("Σ g²: fast (blocked, interleaved, threaded) equals optim/clip.cpp's loop") {
    // arrays below one block, with a tail, and long enough to be cut between threads
    std::vector<std::vector<real>> grads;
    for (size_t n : {size_t(1), size_t(4097), size_t(70001), size_t(300 * 257)})
        grads.push_back(values<real>(n, 40 + n));
    std::vector<const real*> arrays;
    std::vector<int64_t> sizes;
    double plain = 0;
    for (const auto& g : grads) {
        arrays.push_back(g.data());
        sizes.push_back(int64_t(g.size()));
        plain += sum_of_squares_reference(g.data(), int64_t(g.size()));
    }
    const double fast_sum = fast::sum_of_squares(arrays, sizes);
    CHECK(std::fabs(fast_sum - plain) <= 1e-14 * plain);
    CHECK(fast::sum_of_squares({}, {}) == 0);
}

TEST_CASE("fast sigmoid_inplace and tanh_inplace in float: within 4e-7 relative of exact") {
    // The float kernels (8 lanes, polynomial e^x) are what training runs; these unit tests are
    // built in double, so the float templates are checked here against double-precision maths.
    std::vector<float> xs;
    for (double x = -100; x <= 100; x += 0.00731) xs.push_back(float(x));
    for (float x : {0.0f, -0.0f, 1e-30f, -1e-20f, 1e-6f, 0.625f, -0.625f, 0.62499f, 88.7f, -88.7f,
                    87.5f, -87.5f, 1e4f, -1e4f})
        xs.push_back(x);
    std::vector<float> sig = xs, th = xs;
    fast::sigmoid_inplace(sig.data(),
                          int64_t(sig.size()));  // sizes not a multiple of 8: the tail too
    fast::tanh_inplace(th.data(), int64_t(th.size()));
    // error measure: |f − exact| / (|exact| + floor); below σ(−87) ~ 1.6e-38 the float sigmoid
    // is clamped there, hence its floor of 1e-31 (an absolute error < 2e-38 passes)
    double worst_sigmoid = 0, worst_tanh = 0, worst_sigmoid_x = 0, worst_tanh_x = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        const double x = xs[i];
        const double exact_sigmoid = 1 / (1 + std::exp(-x)), exact_tanh = std::tanh(x);
        const double e_sigmoid = std::fabs(sig[i] - exact_sigmoid) / (exact_sigmoid + 1e-31);
        const double e_tanh =
            x == 0 ? std::fabs(th[i]) : std::fabs(th[i] - exact_tanh) / std::fabs(exact_tanh);
        if (e_sigmoid > worst_sigmoid) worst_sigmoid = e_sigmoid, worst_sigmoid_x = x;
        if (e_tanh > worst_tanh) worst_tanh = e_tanh, worst_tanh_x = x;
    }
    INFO(fmt::format("max relative error: sigmoid {:.2g} at x = {}, tanh {:.2g} at x = {}",
                     worst_sigmoid, worst_sigmoid_x, worst_tanh, worst_tanh_x));
    CHECK(worst_sigmoid <= 4e-7);
    CHECK(worst_tanh <= 4e-7);
}

// ---- GRUCell -----------------------------------------------------------------------------

TEST_CASE(
    "fast tanh_inplace in float is accurate to 3e-7 absolute, and keeps small arguments' relative "
    "accuracy") {
    std::vector<float> x, y;
    for (double v = -12; v <= 12; v += 0.00731) x.push_back(float(v));
    for (float v : {0.f, 1e-6f, -1e-4f, 1e4f, -1e4f, 0.5f}) x.push_back(v);
    y = x;
    fast::tanh_inplace(y.data(), int64_t(y.size()));
    double worst_abs = 0, worst_rel_small = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        double exact = std::tanh(double(x[i]));
        worst_abs = std::max(worst_abs, std::fabs(y[i] - exact));
        if (x[i] != 0 && std::fabs(x[i]) < 0.1)
            worst_rel_small = std::max(worst_rel_small, std::fabs(y[i] - exact) / std::fabs(exact));
    }
    CHECK(worst_abs < 3e-7);
    CHECK(worst_rel_small < 1e-6);              // small arguments keep their relative accuracy
    CHECK(std::fabs(y[x.size() - 3]) <= 1.0f);  // ±1e4: clamped, never beyond ±1
}

TEST_CASE(
    "fast exp_shifted in float is accurate to 3e-7 relative, and exactly 0 far below the range") {
    std::vector<float> x, y;
    for (double v = -87.3; v <= 88.3; v += 0.0137) x.push_back(float(v));
    x.push_back(0);
    y.resize(x.size());
    double sum_x = 0;  // size not a multiple of 8: the tail too
    fast::exp_shifted(x.data(), 0.0f, y.data(), int64_t(x.size()), &sum_x);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        double exact = std::exp(double(x[i]));
        worst = std::max(worst, std::fabs(y[i] - exact) / exact);
    }
    CHECK(worst < 3e-7);
    CHECK(y.back() == 1.0f);
    // Far below the float range: exactly 0 (a masked or hopeless logit), never NaN.
    std::vector<float> tiny{-88.f, -1e4f, -2e4f, -INFINITY, -100.f, -90.f, -1e3f, -88.5f};
    std::vector<float> out(tiny.size());
    fast::exp_shifted(tiny.data(), 0.0f, out.data(), int64_t(tiny.size()), &sum_x);
    for (float e : out) CHECK(e == 0.0f);
}
