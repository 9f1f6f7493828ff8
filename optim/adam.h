// Adam and AdamW with bias correction, exactly torch.optim.Adam / AdamW's update rule
// (amsgrad off). For every parameter p with gradient g, at step t = 1, 2, ...:
//   Adam:   g ← g + weight_decay · p                    (L2 penalty folded into the gradient)
//   AdamW:  p ← p · (1 − lr · weight_decay)             (decoupled weight decay)
//   m ← β1 m + (1 − β1) g                               (first moment, "exp_avg")
//   v ← β2 v + (1 − β2) g²                              (second moment, "exp_avg_sq")
//   m̂ = m / (1 − β1^t),  v̂ = v / (1 − β2^t)            (bias correction)
//   p ← p − lr · m̂ / (√v̂ + eps)                         (eps added AFTER the square root)
// The loop is adam_update_reference below; the fast kernel computes it as PyTorch does,
// p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps) with m updated by lerp, and is tested
// equal to it.
// The step count t is the optimizer's (PyTorch keeps one per parameter; they agree whenever
// every parameter gets a gradient at every step, as in seq2seq training).
// State tensors: "adam.exp_avg.<parameter>", "adam.exp_avg_sq.<parameter>" ("adamw." for AdamW).
#pragma once

#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/optim/optimizer.h"

namespace seqgrad {

struct AdamOptions {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0;
    bool decoupled_weight_decay = false;  // true: AdamW
};

class Adam : public Optimizer {
  public:
    // Throws seqgrad::Error on betas outside [0, 1), eps or weight_decay < 0.
    Adam(NamedTensors named_params, const AdamOptions& options = {});

    const char* kind() const override { return options_.decoupled_weight_decay ? "adamw" : "adam"; }
    const AdamOptions& options() const { return options_; }

  protected:
    nlohmann::json hyperparameters() const override;
    void update(real grad_scale, bool zero_grads) override;

  private:
    AdamOptions options_;
    size_t exp_avg_, exp_avg_sq_;
};

// AdamW: Adam with decoupled weight decay (options.decoupled_weight_decay is forced on).
class AdamW : public Adam {
  public:
    AdamW(NamedTensors named_params, const AdamOptions& options = defaults());
    // PyTorch's AdamW defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01.
    static AdamOptions defaults();
};

// One Adam / AdamW step of one parameter, the loop above written out: the reference version of
// kernels::adam_update (autograd/kernels/kernels.h).
void adam_update_reference(const kernels::AdamStep& step, const kernels::AdamArrays& param);

}  // namespace seqgrad
