#include "seqgrad/layers/gru.h"

#include <fmt/format.h>

#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// x [B,in], h [B,H] -> h' [B,H]: gi = x W_ihᵀ + b_ih (linear), then the fused cell
Tensor GRUCell::forward(const Tensor& x, const Tensor& h, const Tensor& step_mask) const {
    if (!use_fused) return forward_composed(x, h, step_mask);
    if (x.rank() != 2 || x.size(1) != input_size())
        throw Error(
            fmt::format("{}: x {} must be [B, {}]", describe(), x.shape().str(), input_size()));
    Tensor input_gates = linear(x, weight_ih, bias_ih);  // [B,3H]
    return gru_cell(input_gates, h, weight_hh, bias_hh, step_mask);
}

Tensor GRUCell::forward_composed(const Tensor& x, const Tensor& h, const Tensor& step_mask) const {
    if (x.rank() != 2 || x.size(1) != input_size())
        throw Error(
            fmt::format("{}: x {} must be [B, {}]", describe(), x.shape().str(), input_size()));
    return gru_cell_composed(x, h, weight_ih, weight_hh, bias_ih, bias_hh, step_mask);
}

}  // namespace seqgrad
