// LayerNorm over the last dimension, PyTorch's nn.LayerNorm(E): parameters "weight" [E] (ones)
// and "bias" [E] (zeros), ε = 1e-5.  y = (x − μ) / √(σ² + ε) ⊙ weight + bias  (maths and backward:
// autograd/fused_layer_norm.h).
#pragma once

#include <cstdint>

#include "seqgrad/autograd/fused_layer_norm.h"
#include "seqgrad/layers/module.h"

namespace seqgrad {

// The composed twin of layer_norm (autograd/fused_layer_norm.h), built from primitive ops with
// broadcasting; what a learner reads first:
//   μ = mean(x, -1),  xc = x − μ,  σ² = mean(xc², -1),  y = xc / √(σ² + ε) ⊙ weight + bias
Tensor layer_norm_composed(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           real eps = 1e-5);

class LayerNorm : public Module {
  public:
    explicit LayerNorm(int64_t normalized_size, real eps = 1e-5);

    // x [..., E] -> [..., E]: the fused op, or the composed twin when use_fused is false
    Tensor forward(const Tensor& x) const;

    Tensor weight;  // [E]
    Tensor bias;    // [E]
    real eps;
    bool use_fused = true;
};

}  // namespace seqgrad
