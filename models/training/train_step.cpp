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
    optimizer.zero_grad();                            // g ← 0
    const LossOutput out = loss_and_gradient(batch);  // forward_loss; backward: g ← ∂loss/∂θ
    stats.loss = out.loss.item();
    stats.tokens = out.num_tokens;
    if (!std::isfinite(stats.loss)) {
        optimizer.zero_grad();
        throw NonFiniteError("loss", stats.loss);
    }
    // g ← g · min(1, clip_norm / (‖g‖ + 1e-6)); clip_norm 0 measures ‖g‖ only
    const GradClip clip = clip_grad_norm(optimizer, clip_norm > 0 ? clip_norm : INFINITY);
    stats.grad_norm = clip.norm;
    stats.grad_scale = clip.scale;
    if (!std::isfinite(clip.norm)) {
        optimizer.zero_grad();
        throw NonFiniteError("gradient norm", clip.norm);
    }
    if (observe) observe(clip);
    optimizer.step();  // θ ← update(θ, g)
    return stats;
}

}  // namespace seqgrad
