// Helpers shared by the recurrent-layer suites (test_gru, test_recurrent, test_recurrent_torch).
#pragma once

#include <cmath>
#include <vector>

#include "seqgrad/layers/recurrent.h"
#include "test_util.h"

namespace seqgrad::testing {

// max |a - b| over all elements (shapes must match)
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
    REQUIRE(a.shape() == b.shape());
    double worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, std::fabs(double(a.data()[i]) - double(b.data()[i])));
    return worst;
}

// Fills every parameter of a module, in named order, with 0.5 sin(0.7 k + 0.3), k counting
// elements across all parameters (the formula of test_gru.cpp's PyTorch reference).
inline void fill_parameters(Module& m) {
    int64_t k = 0;
    for (auto& [name, p] : m.named_parameters())
        for (int64_t i = 0; i < p.numel(); ++i, ++k)
            p.data()[i] = real(0.5 * std::sin(0.7 * k + 0.3));
}

// The module's parameters after `extra` inputs, as gradcheck inputs.
inline std::vector<Tensor> with_parameters(std::vector<Tensor> extra, const Module& m) {
    for (const Tensor& p : m.parameters()) extra.push_back(p);
    return extra;
}

// outputs, final_hidden (and final_cell when defined) flattened into one vector, so that one
// gradcheck covers them all
inline Tensor flat_result(const RecurrentOutput& out) {
    std::vector<Tensor> parts{reshape(out.outputs, {-1}), reshape(out.final_hidden, {-1})};
    if (out.final_cell.defined()) parts.push_back(reshape(out.final_cell, {-1}));
    return concat(parts, 0);
}

inline Tensor mask_of(std::vector<real> values) {
    return Tensor::from_vector({int64_t(values.size())}, values);
}

}  // namespace seqgrad::testing
