#include "optim/adam.h"

#include <fmt/format.h>

#include <cmath>

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

// m ← β1 m + (1−β1) g,  v ← β2 v + (1−β2) g²,  p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + eps)
void Adam::step() {
    ++step_count_;
    const double t = double(step_count_);
    const double bias_correction1 = 1 - std::pow(options_.beta1, t);
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(options_.beta2, t));
    const real step_size = real(lr() / bias_correction1);
    const real bc2_sqrt = real(bias_correction2_sqrt);
    const real beta2 = real(options_.beta2), one_minus_beta1 = real(1 - options_.beta1),
               one_minus_beta2 = real(1 - options_.beta2), eps = real(options_.eps),
               wd = real(options_.weight_decay),
               decay = real(1 - lr() * options_.weight_decay);  // AdamW's p ← p (1 − lr wd)
    const bool l2 = !options_.decoupled_weight_decay && options_.weight_decay != 0;
    const bool decoupled = options_.decoupled_weight_decay && options_.weight_decay != 0;

    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;
        // restrict: the four arrays never overlap, which lets the compiler vectorise the loop
        const real* __restrict grad = p.grad_data();
        real* __restrict w = p.data();
        real* __restrict m = state(exp_avg_, k).data();
        real* __restrict v = state(exp_avg_sq_, k).data();
        const int64_t n = p.numel();
        if (l2 || decoupled)
            for (int64_t i = 0; i < n; ++i) {
                if (decoupled) w[i] *= decay;
                if (l2) {
                    real g = grad[i] + wd * w[i];
                    m[i] += (g - m[i]) * one_minus_beta1;
                    v[i] = v[i] * beta2 + one_minus_beta2 * g * g;
                } else {
                    m[i] += (grad[i] - m[i]) * one_minus_beta1;
                    v[i] = v[i] * beta2 + one_minus_beta2 * grad[i] * grad[i];
                }
                w[i] -= step_size * m[i] / (std::sqrt(v[i]) / bc2_sqrt + eps);
            }
        else
            for (int64_t i = 0; i < n; ++i) {
                const real g = grad[i];
                m[i] += (g - m[i]) * one_minus_beta1;  // = β1 m + (1−β1) g  (PyTorch's lerp)
                v[i] = v[i] * beta2 + one_minus_beta2 * g * g;
                w[i] -= step_size * m[i] / (std::sqrt(v[i]) / bc2_sqrt + eps);
            }
    }
}

}  // namespace seqgrad
