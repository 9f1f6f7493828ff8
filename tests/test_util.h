// Helpers shared by the test suites.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "seqgrad/autograd/gradcheck.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad::testing {

// max_i |a_i − b_i| (the two the same size)
inline double max_abs_difference(const std::vector<real>& a, const std::vector<real>& b) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return m;
}

// A tensor of values uniform in [lo, hi) from a seeded generator.
inline Tensor random_tensor(const Shape& shape, uint64_t seed, bool requires_grad = true,
                            double lo = -1, double hi = 1) {
    Rng rng(seed);
    std::vector<real> v(shape.numel());
    for (auto& x : v) x = real(rng.uniform(lo, hi));
    return Tensor::from_vector(shape, v, requires_grad);
}

// Runs gradcheck and fails the test with the worst element when it does not pass. Gradient
// checks are only sharp in double: the unit tests link the real = double library.
inline GradcheckResult expect_gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                        GradcheckOptions options = {}) {
    static_assert(sizeof(real) == 8, "gradient checks need real = double (link seqgrad_f64)");
    GradcheckResult r = gradcheck(fn, inputs, options);
    INFO(fmt::format("inputs {}, elements {}, max abs err {:.3g}, max rel err {:.3g}; {}",
                     r.inputs_checked, r.elements_checked, r.max_abs_error, r.max_rel_error,
                     r.worst));
    CHECK(r.passed);
    CHECK(r.inputs_checked > 0);
    return r;
}

}  // namespace seqgrad::testing
