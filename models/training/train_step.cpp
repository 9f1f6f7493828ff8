#include "seqgrad/models/training/train_step.h"

#include <fmt/format.h>

#include <cmath>

namespace seqgrad {

NonFiniteError::NonFiniteError(const std::string& what, double value)
    : Error(fmt::format("the {} became {}", what, value)) {}

LossOutput forward_backward(const TranslationModel& model, const Batch& batch,
                            const LossOptions& options) {
    LossOutput out = model.forward_loss(batch, options);
    if (std::isfinite(out.loss.item())) out.loss.backward();
    return out;
}

TrainStepStats train_step(Optimizer& optimizer, const Batch& batch,
                          const LossAndGradient& loss_and_gradient, double clip_norm,
                          const GradientObserver& observe) {
    TrainStepStats stats;
    // zero_grad: the gradients are already 0 here. The previous step's update zeroed each one
    // as it read it (step_and_zero_grad, below: one pass over them instead of two), a new
    // optimizer's start at 0, and a step that throws zeroes them before it does.
    const LossOutput out = loss_and_gradient(batch);  // forward_loss, backward
    stats.loss = out.loss.item();
    stats.tokens = out.num_tokens;
    if (!std::isfinite(stats.loss)) {
        optimizer.zero_grad();
        throw NonFiniteError("loss", stats.loss);
    }

    // ‖g‖, and the factor min(1, clip_norm / (‖g‖ + 1e-6)) that clip_grad_norm would scale the
    // gradients by; the update applies it to each gradient as it reads it (Optimizer::step), the
    // same numbers as clip_grad_norm followed by step(), without a pass of its own.
    const GradClip clip =
        clip_grad_norm_factor(optimizer.parameters(), clip_norm > 0 ? clip_norm : INFINITY);
    stats.grad_norm = clip.norm;
    stats.grad_scale = clip.scale;
    if (!std::isfinite(clip.norm)) {
        optimizer.zero_grad();
        throw NonFiniteError("gradient norm", clip.norm);
    }
    if (observe) observe(clip);

    optimizer.step_and_zero_grad(clip.scale);  // θ ← update(θ, g · scale), then g ← 0
    return stats;
}

}  // namespace seqgrad
