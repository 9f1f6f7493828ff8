// One step of gradient descent on one batch: the loop every training run repeats.
//
//   optimizer.zero_grad();                       g ← 0
//   loss = model.forward_loss(batch);            forward (teacher forcing)
//   loss.backward();                             g ← ∂loss/∂θ
//   clip_grad_norm(parameters, max_norm);        g ← g · min(1, max_norm / ‖g‖)
//   optimizer.step();                            θ ← update(θ, g)
//
// examples/reverse_digits.cpp writes exactly this loop in ten lines; train_step is it, with the
// two things a real run cannot do without: a loss or gradient norm that is not finite stops the
// run (NonFiniteError) instead of poisoning every weight, and the gradient may come from the
// batch's rows split over threads and processes (DataParallel, models/training/data_parallel.h)
// instead of one forward and backward. The trainer (models/training/trainer.h) adds what a run
// needs around it: epochs, the learning-rate schedule, validation, checkpoints, resume.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/optim/clip.h"
#include "seqgrad/optim/optimizer.h"

namespace seqgrad {

// The loss of a batch, and its gradient: afterwards every parameter's .grad holds ∂loss/∂θ.
using LossAndGradient = std::function<LossOutput(const Batch&)>;

// forward_loss then backward, on this thread: the LossAndGradient of a run in one process.
// A loss that is not finite is returned without a backward pass (train_step stops there).
LossOutput forward_backward(const TranslationModel& model, const Batch& batch,
                            const LossOptions& options = {});

// What one step measured.
struct TrainStepStats {
    double loss = 0;        // mean cross-entropy over the batch's real target tokens
    int64_t tokens = 0;     // real target tokens in the batch
    double grad_norm = 0;   // ‖g‖ before clipping
    double grad_scale = 1;  // the clipping factor the step applied (1: not clipped)
};

// The loss or the gradient norm became NaN or ±inf: the weights diverged. Nothing was updated.
struct NonFiniteError : Error {
    NonFiniteError(const std::string& what, double value);
};

// Called between clipping and the update, with the gradients still in .grad, unclipped, and the
// factor the update will apply (what a run logs about its gradients, on logging steps).
using GradientObserver = std::function<void(const GradClip& clip)>;

// zero_grad → loss_and_gradient (forward_loss, backward) → clip → step, on one batch, written as
// those five calls. How the optimizer makes them cheap is its own matter: clipping scales each
// gradient as the update reads it (clip_grad_norm(optimizer, ...), optim/clip.h), and an
// optimizer set to zero the gradients in its update (Optimizer::set_zero_grads_in_step, what
// the trainer does) leaves zero_grad nothing to do.
// clip_norm > 0 clips the global gradient norm to it; 0 measures the norm only. The optimizer's
// learning rate is whatever it was set to (the trainer's schedule sets it before the step).
// Throws NonFiniteError (nothing updated) on a non-finite loss or gradient norm, and whatever
// loss_and_gradient throws.
TrainStepStats train_step(Optimizer& optimizer, const Batch& batch,
                          const LossAndGradient& loss_and_gradient, double clip_norm,
                          const GradientObserver& observe = {});

}  // namespace seqgrad
