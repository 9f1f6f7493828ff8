// SGD with optional momentum, Nesterov momentum and (L2) weight decay, as torch.optim.SGD
// (dampening 0). For every parameter p with gradient g, at each step:
//   g ← g + weight_decay · p
//   with momentum μ > 0:   buf ← μ buf + g           (buf starts at 0, so buf_1 = g_1)
//                          g   ← g + μ buf  (Nesterov)   or   g ← buf  (classical)
//   p ← p − lr · g
// State tensors (momentum > 0 only): "sgd.momentum_buffer.<parameter>".
#pragma once

#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/optim/optimizer.h"

namespace seqgrad {

class SGD : public Optimizer {
  public:
    // Throws seqgrad::Error on momentum or weight_decay < 0, or Nesterov without momentum.
    SGD(NamedTensors named_params, double lr, double momentum = 0, bool nesterov = false,
        double weight_decay = 0);

    const char* kind() const override { return "sgd"; }

    double momentum() const { return momentum_; }
    bool nesterov() const { return nesterov_; }
    double weight_decay() const { return weight_decay_; }

  protected:
    nlohmann::json hyperparameters() const override;
    void update(real grad_scale, bool zero_grads) override;

  private:
    double momentum_;
    bool nesterov_;
    double weight_decay_;
    size_t momentum_buffer_ = 0;
};

// One SGD step of one parameter, the loop above written out: the reference version of
// kernels::sgd_update (autograd/kernels/kernels.h).
void sgd_update_reference(const kernels::SgdStep& step, const kernels::SgdArrays& param);

}  // namespace seqgrad
