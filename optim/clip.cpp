#include "seqgrad/optim/clip.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {

// Σ_i x_i², in double: a million float squares summed in float would lose digits. The
// reference version of the sum; the fast one (autograd/kernels/fast/optimizer_kernels.cpp) sums
// fixed blocks on several threads, and is tested equal to it.
double sum_of_squares_reference(const real* x, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
    return sum;
}

// ‖g‖ = √(Σ g²) over every gradient element of every parameter
double grad_norm(const std::vector<Tensor>& params) {
    std::vector<const real*> grads;
    std::vector<int64_t> sizes;
    for (const Tensor& p : params) {
        if (!p.grad_data()) continue;  // no gradient: counts as zero
        grads.push_back(p.grad_data());
        sizes.push_back(p.numel());
    }
    return std::sqrt(kernels::sum_of_squares(grads, sizes, sum_of_squares_reference));
}

// max_norm / (‖g‖ + 1e-6)  when that factor is < 1
GradClip clip_grad_norm_factor(const std::vector<Tensor>& params, double max_norm) {
    if (!(max_norm > 0))
        throw Error(fmt::format("clip_grad_norm: max_norm {} must be > 0", max_norm));
    GradClip clip;
    clip.norm = grad_norm(params);
    if (!std::isfinite(clip.norm)) return clip;  // reported, not applied: see clip.h
    const double factor = max_norm / (clip.norm + 1e-6);
    if (factor < 1) clip.scale = factor;
    return clip;
}

void scale_grads(const std::vector<Tensor>& params, double scale) {
    const real s = real(scale);
    for (Tensor p : params) {
        if (!p.has_grad()) continue;
        real* g = p.mutable_grad_data();
        const int64_t n = p.numel();
        for (int64_t i = 0; i < n; ++i) g[i] *= s;
    }
}

// g ← g · max_norm / (‖g‖ + 1e-6)  when that factor is < 1
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
    const GradClip clip = clip_grad_norm_factor(params, max_norm);
    if (clip.clipped()) scale_grads(params, clip.scale);
    return clip.norm;
}

double clip_grad_norm(const NamedTensors& params, double max_norm) {
    std::vector<Tensor> tensors;
    for (const auto& [_, p] : params) tensors.push_back(p);
    return clip_grad_norm(tensors, max_norm);
}

GradClip clip_grad_norm(Optimizer& optimizer, double max_norm) {
    const GradClip clip = clip_grad_norm_factor(optimizer.parameters(), max_norm);
    optimizer.set_grad_scale(clip.scale);
    return clip;
}

void clip_grad_value(const std::vector<Tensor>& params, double clip_value) {
    if (!(clip_value > 0))
        throw Error(fmt::format("clip_grad_value: clip_value {} must be > 0", clip_value));
    const real hi = real(clip_value), lo = -hi;
    for (Tensor p : params) {
        if (!p.has_grad()) continue;
        real* g = p.mutable_grad_data();
        for (int64_t i = 0; i < p.numel(); ++i) g[i] = g[i] > hi ? hi : (g[i] < lo ? lo : g[i]);
    }
}

}  // namespace seqgrad
