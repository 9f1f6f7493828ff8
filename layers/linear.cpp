#include "seqgrad/layers/linear.h"

#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Rng& rng) {
    if (in_features < 1 || out_features < 1)
        throw Error(fmt::format("Linear: in_features {} and out_features {} must be >= 1",
                                in_features, out_features));
    weight = register_parameter("weight", Tensor::empty({out_features, in_features}));
    init::uniform_fan_in(weight, in_features, rng);
    if (bias) {
        this->bias = register_parameter("bias", Tensor::empty({out_features}));
        init::uniform_fan_in(this->bias, in_features, rng);
    }
}

// x [..., in] -> y [..., out] = x Wᵀ + b  (one gemm over all leading dims; see ops_matmul.cpp)
Tensor Linear::forward(const Tensor& x) const {
    if (x.rank() < 1 || x.size(-1) != in_features())
        throw Error(fmt::format("Linear({} -> {}): input {} must be [..., {}]", in_features(),
                                out_features(), x.shape().str(), in_features()));
    return linear(x, weight, bias);
}

}  // namespace seqgrad
