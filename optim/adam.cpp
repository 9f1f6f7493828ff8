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

// m ← β1 m + (1−β1) g,  v ← β2 v + (1−β2) g²,  p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + eps)
void Adam::update(real grad_scale, bool zero_grads) {
    const double t = double(step_count_);
    const double bias_correction1 = 1 - std::pow(options_.beta1, t);
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(options_.beta2, t));
    kernels::AdamConstants c;
    c.step_size = real(lr() / bias_correction1);
    c.inv_bc2_sqrt = real(1 / bias_correction2_sqrt);
    c.beta2 = real(options_.beta2);
    c.one_minus_beta1 = real(1 - options_.beta1);
    c.one_minus_beta2 = real(1 - options_.beta2);
    c.eps = real(options_.eps);
    c.wd = real(options_.weight_decay);
    c.decay = real(1 - lr() * options_.weight_decay);
    c.grad_scale = grad_scale;
    c.l2 = !options_.decoupled_weight_decay && options_.weight_decay != 0;
    c.decoupled = options_.decoupled_weight_decay && options_.weight_decay != 0;

    std::vector<kernels::AdamArrays> arrays;
    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;
        arrays.push_back({p.mutable_grad_data(), p.data(), state(exp_avg_, k).data(),
                          state(exp_avg_sq_, k).data(), p.numel()});
    }
    // the update of every element (a kernel, autograd/kernels/kernels.h)
    kernels::adam_update(c, arrays, zero_grads);
}

}  // namespace seqgrad
