#include "optim/clip.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/parallel.h"

namespace seqgrad {

// ‖g‖ = √(Σ g²), accumulated in double (10^6 float squares would lose digits).
// Each gradient is summed in blocks of kBlock elements, the blocks' sums then added in order:
// the threads (autograd/parallel.h) share out whole blocks, so the result has the same bits
// whatever the number of threads.
double grad_norm(const std::vector<Tensor>& params) {
    constexpr int64_t kBlock = 4096;
    std::vector<const real*> grads;
    std::vector<int64_t> sizes;
    std::vector<size_t> first_block;  // of gradient i in block_sums
    size_t blocks = 0;
    for (const Tensor& p : params) {
        const real* g = p.grad_data();
        if (!g) continue;
        grads.push_back(g);
        sizes.push_back(p.numel());
        first_block.push_back(blocks);
        blocks += size_t((p.numel() + kBlock - 1) / kBlock);
    }
    std::vector<double> block_sums(blocks, 0.0);
    auto sum_block = [](const real* g, int64_t n) {
        // Eight independent partial sums: the additions can run in parallel lanes (a single
        // running sum is one long dependency chain).
        double partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; ++k) partial[k] += double(g[i + k]) * double(g[i + k]);
        for (; i < n; ++i) partial[0] += double(g[i]) * double(g[i]);
        return ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
               ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    };
    parallel_for_arrays(
        sizes, 8 * kBlock,
        [&](size_t i, int64_t begin, int64_t end) {
            for (int64_t b = begin; b < end; b += kBlock)
                block_sums[first_block[i] + size_t(b / kBlock)] =
                    sum_block(grads[i] + b, std::min(kBlock, end - b));
        },
        kBlock);
    double sum_squares = 0;
    for (double s : block_sums) sum_squares += s;
    return std::sqrt(sum_squares);
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
