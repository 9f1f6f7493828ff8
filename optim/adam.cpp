#include "seqgrad/optim/adam.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {

Adam::Adam(NamedTensors named_params, const AdamOptions& options)
    : Optimizer(std::move(named_params), options.lr), options_(options) {
    const char* who = options.decoupled_weight_decay ? "AdamW" : "Adam";
    if (!(options.beta1 >= 0 && options.beta1 < 1) || !(options.beta2 >= 0 && options.beta2 < 1))
        throw Error(fmt::format("{}: betas ({}, {}) must lie in [0, 1)", who, options.beta1,
                                options.beta2));
    if (!(options.eps >= 0)) throw Error(fmt::format("{}: eps {} must be >= 0", who, options.eps));
    if (!(options.weight_decay >= 0))
        throw Error(fmt::format("{}: weight_decay {} must be >= 0", who, options.weight_decay));
    exp_avg_ = add_state_buffer("exp_avg");
    exp_avg_sq_ = add_state_buffer("exp_avg_sq");
}

namespace {
AdamOptions decoupled(AdamOptions options) {
    options.decoupled_weight_decay = true;
    return options;
}
}  // namespace

AdamW::AdamW(NamedTensors named_params, const AdamOptions& options)
    : Adam(std::move(named_params), decoupled(options)) {}

AdamOptions AdamW::defaults() {
    AdamOptions o;
    o.weight_decay = 0.01;
    o.decoupled_weight_decay = true;
    return o;
}

nlohmann::json Adam::hyperparameters() const {
    return {{"beta1", options_.beta1},
            {"beta2", options_.beta2},
            {"eps", options_.eps},
            {"weight_decay", options_.weight_decay}};
}

// The update of one parameter, as the textbook writes it (optim/adam.h). This loop is the
// reference kernel: the build with SEQGRAD_KERNELS=reference runs it; the fast build runs a
// version of it cut between threads, one branch-free loop per mode
// (autograd/kernels/fast/optimizer_kernels.cpp), tested equal to it.
void adam_update_reference(const kernels::AdamStep& s, const kernels::AdamArrays& p) {
    const real lr = real(s.lr), beta1 = real(s.beta1), beta2 = real(s.beta2), eps = real(s.eps);
    const real weight_decay = real(s.weight_decay), decay = real(1 - s.lr * s.weight_decay);
    const real bias_correction1 = real(1 - std::pow(s.beta1, double(s.t)));
    const real bias_correction2 = real(1 - std::pow(s.beta2, double(s.t)));
    for (int64_t i = 0; i < p.n; ++i) {
        real g = p.grad[i] * s.grad_scale;  // the gradient, clipped
        if (s.decoupled)
            p.w[i] *= decay;  // AdamW: decay the weight itself
        else
            g += weight_decay * p.w[i];  // Adam: weight decay as an L2 term of the gradient
        p.m[i] = beta1 * p.m[i] + (1 - beta1) * g;      // first moment: running mean of g
        p.v[i] = beta2 * p.v[i] + (1 - beta2) * g * g;  // second moment: running mean of g²
        // bias-correct both moments (they start at 0)
        const real m_hat = p.m[i] / bias_correction1;
        const real v_hat = p.v[i] / bias_correction2;
        p.w[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
}

void Adam::update(real grad_scale, bool zero_grads) {
    const kernels::AdamStep step{lr(),
                                 options_.beta1,
                                 options_.beta2,
                                 options_.eps,
                                 options_.weight_decay,
                                 options_.decoupled_weight_decay,
                                 step_count_,
                                 grad_scale};
    std::vector<kernels::AdamArrays> arrays;
    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;  // no backward reached it: left alone, as PyTorch does
        arrays.push_back({p.mutable_grad_data(), p.data(), state(exp_avg_, k).data(),
                          state(exp_avg_sq_, k).data(), p.numel()});
    }
    // adam_update_reference over every parameter, or its fast version
    kernels::adam_update(step, arrays, zero_grads, adam_update_reference);
}

}  // namespace seqgrad
