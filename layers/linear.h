// Linear: y = x Wᵀ + b, PyTorch's layout (weight [out, in], bias [out]).
#pragma once

#include <cstdint>

#include "seqgrad/layers/module.h"

namespace seqgrad {

class Linear : public Module {
  public:
    // Parameters "weight" [out, in] and (when bias) "bias" [out], both U(-1/√in, 1/√in) as in
    // PyTorch (weight first, then bias, from `rng`).
    Linear(int64_t in_features, int64_t out_features, bool bias, Rng& rng);

    // x [..., in] -> [..., out]
    Tensor forward(const Tensor& x) const;

    int64_t in_features() const { return weight.size(1); }
    int64_t out_features() const { return weight.size(0); }

    Tensor weight;  // [out, in]
    Tensor bias;    // [out], undefined when the layer has no bias
};

}  // namespace seqgrad
