#include "seqgrad/optim/sgd.h"

#include <fmt/format.h>

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

// The update of one parameter, as the textbook writes it (optim/sgd.h). This loop is the
// reference kernel: the build with SEQGRAD_KERNELS=reference runs it; the fast build runs a
// version of it cut between threads, one branch-free loop per mode
// (autograd/kernels/fast/optimizer_kernels.cpp), tested equal to it.
void sgd_update_reference(const kernels::SgdStep& s, const kernels::SgdArrays& p) {
    const real lr = real(s.lr), momentum = real(s.momentum), weight_decay = real(s.weight_decay);
    for (int64_t i = 0; i < p.n; ++i) {
        real d = p.grad[i] * s.grad_scale;                  // the gradient, clipped
        if (weight_decay != 0) d += weight_decay * p.w[i];  // weight decay as an L2 term
        if (momentum != 0) {
            p.buf[i] = momentum * p.buf[i] + d;  // the velocity (it starts at 0: buf_1 = d_1)
            d = s.nesterov ? d + momentum * p.buf[i] : p.buf[i];  // Nesterov looks one step ahead
        }
        p.w[i] -= lr * d;
    }
}

void SGD::update(real grad_scale, bool zero_grads) {
    const kernels::SgdStep step{lr(), momentum_, weight_decay_, nesterov_, grad_scale};
    std::vector<kernels::SgdArrays> arrays;
    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;  // no backward reached it: left alone, as PyTorch does
        arrays.push_back({p.mutable_grad_data(), p.data(),
                          momentum_ == 0 ? nullptr : state(momentum_buffer_, k).data(), p.numel()});
    }
    // sgd_update_reference over every parameter, or its fast version
    kernels::sgd_update(step, arrays, zero_grads, sgd_update_reference);
}

}  // namespace seqgrad
