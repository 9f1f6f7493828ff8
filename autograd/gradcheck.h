// gradcheck: compares the analytic gradient (backward) with central finite differences.
//
// The function's output is reduced to a scalar through a fixed random weighting,
// L = Σ w ⊙ f(inputs), not a plain sum: an all-ones upstream gradient hides bugs such as a
// transposed gradient of a square matrix. For every input that requires grad and every
// element x_i:  numeric_i = (L(x_i + eps) - L(x_i - eps)) / (2 eps)  and the check passes when
// |analytic_i - numeric_i| <= atol + rtol |numeric_i| everywhere.
// Use it with real = double (the seqgrad_f64 library): in float the differences are noise.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

struct GradcheckOptions {
    double eps = 1e-6;
    double atol = 1e-7;
    double rtol = 1e-6;
    uint64_t seed = 1234;  // of the output weighting
};

struct GradcheckResult {
    bool passed = true;
    int inputs_checked = 0;
    int64_t elements_checked = 0;
    double max_abs_error = 0;
    double max_rel_error = 0;  // |a - n| / max(|a|, |n|) over elements where that exceeds 1e-10
    std::string worst;         // where the largest violation is, e.g. "input 1 [3]: 0.5 vs 0.49"
};

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Inputs that require grad are perturbed in place (and restored). Their .grad is reset.
GradcheckResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace seqgrad
