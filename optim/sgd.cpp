#include "optim/sgd.h"

#include <fmt/format.h>

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

// p ← p − lr · d,  d = g + wd p (no momentum),  buf = μ buf + d,  d = buf or d + μ buf
void SGD::step() {
    ++step_count_;
    const real lr = real(this->lr()), mu = real(momentum_), wd = real(weight_decay_);
    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;
        const real* g = p.grad_data();
        real* w = p.data();
        real* buf = momentum_ > 0 ? state(momentum_buffer_, k).data() : nullptr;
        for (int64_t i = 0; i < p.numel(); ++i) {
            real d = g[i];
            if (weight_decay_ != 0) d += wd * w[i];
            if (buf) {
                buf[i] = mu * buf[i] + d;
                d = nesterov_ ? d + mu * buf[i] : buf[i];
            }
            w[i] -= lr * d;
        }
    }
}

}  // namespace seqgrad
