// Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_.
//
// clip_grad_norm: the global L2 norm over ALL gradients, ‖g‖ = √(Σ_params Σ_i g_i²), summed in
// double. When it exceeds max_norm, every gradient is scaled by max_norm / (‖g‖ + 1e-6); the
// 1e-6 is PyTorch's, it keeps the division safe, and it makes the post-clip norm
// max_norm · ‖g‖/(‖g‖ + 1e-6), i.e. max_norm to a relative 1e-6/‖g‖. Returns the norm BEFORE
// clipping (what training logs). A non-finite norm (NaN/inf gradients) is returned as it is and
// the gradients are left untouched: the caller decides (skip the step, stop, ...); scaling by
// a NaN factor would silently poison every parameter.
// Parameters without a gradient buffer count as zero.
#pragma once

#include <vector>

#include "seqgrad/optim/optimizer.h"

namespace seqgrad {

// ‖g‖ without clipping.
double grad_norm(const std::vector<Tensor>& params);
// Σ_i x_i² of one array, in double: the reference version of the sum grad_norm takes
// (kernels::sum_of_squares, autograd/kernels/kernels.h).
double sum_of_squares_reference(const real* x, int64_t n);

// Throws seqgrad::Error unless max_norm > 0 (+inf is allowed: measure only).
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);
double clip_grad_norm(const NamedTensors& params, double max_norm);

// clip_grad_norm without touching the gradients: the norm, and the factor clip_grad_norm would
// scale them by, max_norm / (‖g‖ + 1e-6) when that is < 1, else 1 (also 1 for a non-finite
// norm). optimizer.step(clip.scale) applies it on the fly: the same update as clip_grad_norm +
// step(), one pass over the gradients fewer (clip_grad_norm(optimizer, ...) below does this).
struct GradClip {
    double norm = 0;   // ‖g‖ before clipping
    double scale = 1;  // in (0, 1]
    bool clipped() const { return scale < 1; }
};
GradClip clip_grad_norm_factor(const std::vector<Tensor>& params, double max_norm);

// clip_grad_norm of the gradients `optimizer` updates from, the way a training step clips: the
// norm now, the scaling as the optimizer's next step() reads each gradient
// (Optimizer::set_grad_scale): the same update as clip_grad_norm + step(), one pass over the
// gradients fewer. A non-finite norm sets no scale (see above).
GradClip clip_grad_norm(Optimizer& optimizer, double max_norm);

// g ← g · scale for every gradient (rounded to real, as clip_grad_norm and Optimizer::step do).
void scale_grads(const std::vector<Tensor>& params, double scale);

// g_i ← clamp(g_i, −clip_value, clip_value) for every gradient element (NaN stays NaN).
// Throws seqgrad::Error unless clip_value > 0.
void clip_grad_value(const std::vector<Tensor>& params, double clip_value);

}  // namespace seqgrad
