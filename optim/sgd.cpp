#include "seqgrad/optim/sgd.h"

#include <fmt/format.h>

#include <cstring>

#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {

SGD::SGD(NamedTensors named_params, double lr, double momentum, bool nesterov, double weight_decay)
    : Optimizer(std::move(named_params), lr),
      momentum_(momentum),
      nesterov_(nesterov),
      weight_decay_(weight_decay) {
    if (!(momentum >= 0)) throw Error(fmt::format("SGD: momentum {} must be >= 0", momentum));
    if (!(weight_decay >= 0))
        throw Error(fmt::format("SGD: weight_decay {} must be >= 0", weight_decay));
    if (nesterov && momentum == 0) throw Error("SGD: Nesterov momentum needs momentum > 0");
    if (momentum > 0) momentum_buffer_ = add_state_buffer("momentum_buffer");
}

nlohmann::json SGD::hyperparameters() const {
    return {{"momentum", momentum_}, {"nesterov", nesterov_}, {"weight_decay", weight_decay_}};
}

namespace {

// One parameter's update; a template per mode, so that each is a branch-free loop. Without a
// scale, g is used as it is (see adam.cpp).
template <bool WeightDecay, bool Momentum, bool Nesterov, bool Scaled>
void sgd_loop(real lr, real mu, real wd, real grad_scale, int64_t n, const real* __restrict g,
              real* __restrict w, real* __restrict buf) {
    for (int64_t i = 0; i < n; ++i) {
        real d = Scaled ? g[i] * grad_scale : g[i];
        if constexpr (WeightDecay) d += wd * w[i];
        if constexpr (Momentum) {
            buf[i] = mu * buf[i] + d;
            d = Nesterov ? d + mu * buf[i] : buf[i];
        }
        w[i] -= lr * d;
    }
}

template <bool WeightDecay, bool Momentum, bool Nesterov>
void sgd_update(real lr, real mu, real wd, real grad_scale, int64_t n, const real* g, real* w,
                real* buf) {
    if (grad_scale == real(1))
        sgd_loop<WeightDecay, Momentum, Nesterov, false>(lr, mu, wd, grad_scale, n, g, w, buf);
    else
        sgd_loop<WeightDecay, Momentum, Nesterov, true>(lr, mu, wd, grad_scale, n, g, w, buf);
}

}  // namespace

// p ← p − lr · d,  d = g + wd p (no momentum),  buf = μ buf + d,  d = buf or d + μ buf
void SGD::update(real grad_scale, bool zero_grads) {
    const real lr = real(this->lr()), mu = real(momentum_), wd = real(weight_decay_);
    const bool decay = weight_decay_ != 0;
    struct Arrays {
        real *g, *w, *buf;
    };
    std::vector<Arrays> arrays;
    std::vector<int64_t> sizes;
    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;
        arrays.push_back({p.mutable_grad_data(), p.data(),
                          momentum_ == 0 ? nullptr : state(momentum_buffer_, k).data()});
        sizes.push_back(p.numel());
    }
    // memory-bound: cut between the threads, as Adam's
    kernels::for_each_array(sizes, kParallelGrain, [&](size_t i, int64_t begin, int64_t end) {
        const int64_t n = end - begin;
        real* g = arrays[i].g + begin;
        real* w = arrays[i].w + begin;
        real* buf = momentum_ == 0 ? nullptr : arrays[i].buf + begin;
        if (momentum_ == 0 && decay)
            sgd_update<true, false, false>(lr, mu, wd, grad_scale, n, g, w, nullptr);
        else if (momentum_ == 0)
            sgd_update<false, false, false>(lr, mu, wd, grad_scale, n, g, w, nullptr);
        else if (decay && nesterov_)
            sgd_update<true, true, true>(lr, mu, wd, grad_scale, n, g, w, buf);
        else if (decay)
            sgd_update<true, true, false>(lr, mu, wd, grad_scale, n, g, w, buf);
        else if (nesterov_)
            sgd_update<false, true, true>(lr, mu, wd, grad_scale, n, g, w, buf);
        else
            sgd_update<false, true, false>(lr, mu, wd, grad_scale, n, g, w, buf);
        // step_and_zero_grad: a pass of its own here (Adam clears in its loop; SGD is not on
        // the benchmarks' path)
        if (zero_grads) std::memset(g, 0, sizeof(real) * size_t(n));
    });
}

}  // namespace seqgrad
