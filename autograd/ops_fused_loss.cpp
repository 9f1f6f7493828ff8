// Fused log_softmax + cross-entropy (see autograd/fused_loss.h for the maths).
//
// Forward, per row: one pass for the max, one pass for Σ e^(x − max) and Σ x. When a gradient
// will be needed, the second pass also stores e^(x − max), and a third pass turns it into the
// gradient of the loss for an upstream gradient of 1:  G_ij = scale_i (p_ij − q_ij).
// Backward is then a single scaled add, dx += dL · G, with no exp at all. The price is one
// [N, V] buffer, the same size as the logits' own gradient.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "autograd/fused_loss.h"

namespace seqgrad {

// loss_i = lse_i − (1 − ε) x_it − (ε/V) Σ_j x_ij;   dx_ij += scale_i (p_ij − q_ij)
Tensor fused_cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets,
                           int32_t ignore_index, Reduction reduction, real label_smoothing) {
    if (logits.rank() != 2 || logits.size(1) == 0)
        throw Error(fmt::format("cross_entropy: logits must be [N, V] with V > 0, got {}",
                                logits.shape().str()));
    const int64_t N = logits.size(0), V = logits.size(1);
    if (int64_t(targets.size()) != N)
        throw Error(fmt::format("cross_entropy: {} targets for logits {}", targets.size(),
                                logits.shape().str()));
    if (!(label_smoothing >= 0 && label_smoothing <= 1))
        throw Error(
            fmt::format("cross_entropy: label_smoothing {} is outside [0, 1]", label_smoothing));
    int64_t count = 0;  // rows whose target is not ignored
    for (int64_t i = 0; i < N; ++i) {
        int32_t t = targets[i];
        if (t == ignore_index) continue;
        if (t < 0 || t >= V)
            throw Error(fmt::format(
                "cross_entropy: target {} at row {} is out of range [0, {}) (ignore_index {})", t,
                i, V, ignore_index));
        ++count;
    }

    const double eps = label_smoothing;
    const double on_target = 1 - eps;          // weight of −log p_it
    const double per_class = eps / double(V);  // weight of every −log p_ij
    // Mean divides by the number of real targets; max(count, 1) makes an all-ignored batch 0.
    const double row_scale =
        reduction == Reduction::mean ? 1.0 / double(std::max<int64_t>(count, 1)) : 1.0;

    const bool need_grad = grad_enabled() && logits.requires_grad();
    Buffer gradient;  // G [N, V] = dL/dlogits for an upstream gradient of 1 (per row for none)
    if (need_grad) gradient = Buffer(size_t(N * V));

    Tensor out = make_result(reduction == Reduction::none ? Shape{N} : Shape{});
    double total = 0;
    for (int64_t i = 0; i < N; ++i) {
        const real* x = logits.data() + i * V;
        real* G = need_grad ? gradient.data() + i * V : nullptr;
        const int32_t t = targets[i];
        if (t == ignore_index) {
            if (G) std::memset(G, 0, sizeof(real) * V);
            if (reduction == Reduction::none) out.data()[i] = 0;
            continue;
        }
        real max = x[0];
        for (int64_t j = 1; j < V; ++j) max = x[j] > max ? x[j] : max;
        double sum_exp = 0, sum_x = 0;
        if (G) {
            for (int64_t j = 0; j < V; ++j) {
                G[j] = std::exp(x[j] - max);
                sum_exp += G[j];
                sum_x += x[j];
            }
        } else {
            for (int64_t j = 0; j < V; ++j) {
                sum_exp += std::exp(x[j] - max);
                sum_x += x[j];
            }
        }
        const double lse = double(max) + std::log(sum_exp);
        const double loss = lse - on_target * double(x[t]) - per_class * sum_x;
        if (reduction == Reduction::none) out.data()[i] = real(loss);
        total += loss;
        if (G) {  // G_ij = scale (p_ij − ε/V) − scale (1 − ε) [j == t]
            const real p_scale = real(row_scale / sum_exp);
            const real smooth = real(row_scale * per_class);
            for (int64_t j = 0; j < V; ++j) G[j] = G[j] * p_scale - smooth;
            G[t] -= real(row_scale * on_target);
        }
    }
    if (reduction != Reduction::none) out.data()[0] = real(total * row_scale);

    if (record(out, "cross_entropy", {logits}, [N, V, reduction](Node& out) {
            real* dx = parent_grad(out, 0);
            if (!dx) return;
            const real *G = out.saved.data(), *dL = out.grad.data();
            if (reduction != Reduction::none) {  // dx += dL · G
                const real g = dL[0];
                for (int64_t k = 0; k < N * V; ++k) dx[k] += g * G[k];
            } else {  // dx_i += dL_i · G_i
                for (int64_t i = 0; i < N; ++i)
                    for (int64_t j = 0; j < V; ++j) dx[i * V + j] += dL[i] * G[i * V + j];
            }
        }))
        out.node().saved = std::move(gradient);
    return out;
}

}  // namespace seqgrad
