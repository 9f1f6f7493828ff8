#include "seqgrad/layers/layer_norm.h"

#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// y = (x − mean(x)) / √(var(x) + ε) ⊙ w + b, from mean, sub, mul, sqrt, div, add
Tensor layer_norm_composed(const Tensor& x, const Tensor& weight, const Tensor& bias, real eps) {
    if (x.rank() < 1)
        throw Error(fmt::format("layer_norm_composed: x {} has no last dim", x.shape().str()));
    const int last = x.rank() - 1;
    Tensor centred = x - mean(x, last, /*keepdim=*/true);               // [..., E]
    Tensor variance = mean(centred * centred, last, /*keepdim=*/true);  // [..., 1]
    Tensor y = centred / sqrt(variance + eps);
    if (weight.defined()) y = y * weight;
    if (bias.defined()) y = y + bias;
    return y;
}

LayerNorm::LayerNorm(int64_t normalized_size, real eps) : eps(eps) {
    if (normalized_size < 1)
        throw Error(fmt::format("LayerNorm: normalized_size {} must be >= 1", normalized_size));
    weight = register_parameter("weight", Tensor::full({normalized_size}, 1));
    bias = register_parameter("bias", Tensor::zeros({normalized_size}));
}

Tensor LayerNorm::forward(const Tensor& x) const {
    if (x.rank() < 1 || x.size(-1) != weight.size(0))
        throw Error(fmt::format("LayerNorm({}): input {} must be [..., {}]", weight.size(0),
                                x.shape().str(), weight.size(0)));
    return use_fused ? layer_norm(x, weight, bias, eps) : layer_norm_composed(x, weight, bias, eps);
}

}  // namespace seqgrad
