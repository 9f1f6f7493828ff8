// Fused log_softmax + cross-entropy (see autograd/fused_loss.h for the maths).
//
// Forward, per row: one pass for the max, one pass for Σ e^(x − max) and Σ x. When a gradient
// will be needed, the second pass also stores e^(x − max), and a third pass turns it into the
// gradient of the loss for an upstream gradient of 1:  G_ij = scale_i (p_ij − q_ij).
// Backward is then a single scaled add, dx += dL · G, with no exp at all. The price is one
// [N, V] buffer, the same size as the logits' own gradient — and when the logits have no
// gradient buffer yet (this op is their only consumer), G itself, scaled by dL, becomes it.
// linear_cross_entropy computes the logits itself, into a buffer no one else sees, and writes G
// over them: one [N, V] buffer for the whole output layer and loss, the same products.
//
// The row passes are kernels (autograd/kernels/kernels.h): plain loops with std::exp in the
// reference build, 8 float lanes at a time in the fast one.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {
namespace {

using kernels::add_scaled;
using kernels::exp_shifted;
using kernels::row_max;
using kernels::scale_shift;

int64_t check_targets(const char* op, const Shape& logits_shape, int64_t N, int64_t V,
                      const std::vector<int32_t>& targets, int32_t ignore_index,
                      real label_smoothing) {
    if (int64_t(targets.size()) != N)
        throw Error(
            fmt::format("{}: {} targets for logits {}", op, targets.size(), logits_shape.str()));
    if (!(label_smoothing >= 0 && label_smoothing <= 1))
        throw Error(fmt::format("{}: label_smoothing {} is outside [0, 1]", op, label_smoothing));
    int64_t count = 0;  // rows whose target is not ignored
    for (int64_t i = 0; i < N; ++i) {
        int32_t t = targets[i];
        if (t == ignore_index) continue;
        if (t < 0 || t >= V)
            throw Error(
                fmt::format("{}: target {} at row {} is out of range [0, {}) (ignore_index {})", op,
                            t, i, V, ignore_index));
        ++count;
    }
    return count;
}

// The forward row passes of the loss over logits x [N, V]. Writes the result into `out`
// ([N] for none, [] otherwise) and, when G is not null, G_ij = scale_i (p_ij − q_ij) for an
// upstream gradient of 1. G may be x itself: each row is read (max, x_t) before it is overwritten.
void cross_entropy_rows(const real* logits, real* gradient, int64_t N, int64_t V,
                        const std::vector<int32_t>& targets, int64_t count, int32_t ignore_index,
                        Reduction reduction, real label_smoothing, int64_t* num_correct,
                        real* out) {
    const double eps = label_smoothing;
    const double on_target = 1 - eps;          // weight of −log p_it
    const double per_class = eps / double(V);  // weight of every −log p_ij
    // Mean divides by the number of real targets; max(count, 1) makes an all-ignored batch 0.
    const double row_scale =
        reduction == Reduction::mean ? 1.0 / double(std::max<int64_t>(count, 1)) : 1.0;
    Buffer scratch(gradient ? 0 : size_t(V));  // e^(x − max) of one row when G is not kept
    double total = 0;
    for (int64_t i = 0; i < N; ++i) {
        const real* x = logits + i * V;
        real* G = gradient ? gradient + i * V : nullptr;
        const int32_t t = targets[i];
        if (t == ignore_index) {
            if (G) std::memset(G, 0, sizeof(real) * V);
            if (reduction == Reduction::none) out[i] = 0;
            continue;
        }
        const real max = row_max(x, V);
        const real x_t = x[t];
        if (num_correct && x_t == max && std::find(x, x + t, max) == x + t) ++*num_correct;
        double sum_x = 0;
        const double sum_exp = exp_shifted(x, max, G ? G : scratch.data(), V, &sum_x);
        const double lse = double(max) + std::log(sum_exp);
        const double loss = lse - on_target * double(x_t) - per_class * sum_x;
        if (reduction == Reduction::none) out[i] = real(loss);
        total += loss;
        if (G) {  // G_ij = scale (p_ij − ε/V) − scale (1 − ε) [j == t]
            const real p_scale = real(row_scale / sum_exp);
            const real smooth = real(row_scale * per_class);
            scale_shift(G, p_scale, smooth, V);
            G[t] -= real(row_scale * on_target);
        }
    }
    if (reduction != Reduction::none) out[0] = real(total * row_scale);
}

// G := dL · G (row by row for none), in place.
void scale_by_upstream(real* G, const real* dL, int64_t N, int64_t V, Reduction reduction) {
    const int64_t rows = reduction == Reduction::none ? N : 1;
    const int64_t cols = reduction == Reduction::none ? V : N * V;
    for (int64_t i = 0; i < rows; ++i)
        if (dL[i] != real(1)) scale_shift(G + i * cols, dL[i], real(0), cols);
}

}  // namespace

// loss_i = lse_i − (1 − ε) x_it − (ε/V) Σ_j x_ij;   dx_ij += scale_i (p_ij − q_ij)
Tensor fused_cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets,
                           int32_t ignore_index, Reduction reduction, real label_smoothing,
                           int64_t* num_correct) {
    if (num_correct) *num_correct = 0;
    if (logits.rank() != 2 || logits.size(1) == 0)
        throw Error(fmt::format("cross_entropy: logits must be [N, V] with V > 0, got {}",
                                logits.shape().str()));
    const int64_t N = logits.size(0), V = logits.size(1);
    const int64_t count = check_targets("cross_entropy", logits.shape(), N, V, targets,
                                        ignore_index, label_smoothing);

    const bool need_grad = grad_enabled() && logits.requires_grad();
    Buffer gradient;  // G [N, V] = dL/dlogits for an upstream gradient of 1 (per row for none)
    if (need_grad) gradient = Buffer(size_t(N * V));
    Tensor out = make_result(reduction == Reduction::none ? Shape{N} : Shape{});
    cross_entropy_rows(logits.data(), need_grad ? gradient.data() : nullptr, N, V, targets, count,
                       ignore_index, reduction, label_smoothing, num_correct, out.data());

    if (record(out, "cross_entropy", {logits}, [N, V, reduction](Node& out) {
            Node& x = out.parent(0);
            if (!x.requires_grad) return;
            real* G = out.saved.data();
            const real* dL = out.grad.data();
            // Usually this op is the logits' only consumer and their gradient buffer does not
            // exist yet: then G, which is freed after this rule anyway, becomes that buffer,
            // scaled in place by dL (not at all for dL = 1, the loss itself) — instead of a
            // zero fill and a pass of dx += dL · G over [N, V]. The same values: 0 + dL·G = dL·G.
            // Only for non-leaves: a leaf's gradient goes through mutable_grad_data(), which owns
            // where it lives.
            if (!x.is_leaf && x.grad.size() == 0) {
                scale_by_upstream(G, dL, N, V, reduction);
                x.grad = std::move(out.saved);
                return;
            }
            real* dx = x.mutable_grad_data();
            if (reduction != Reduction::none)  // dx += dL · G
                add_scaled(dx, dL[0], G, N * V);
            else  // dx_i += dL_i · G_i
                for (int64_t i = 0; i < N; ++i) add_scaled(dx + i * V, dL[i], G + i * V, V);
        }))
        out.node().saved = std::move(gradient);
    return out;
}

// z = x Wᵀ + b [N, V], then the loss of fused_cross_entropy over z; G (as there) overwrites z.
// Backward with D = dL · G:  dx += D W,  dW += Dᵀ x,  db += Σ_i D_i.
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const std::vector<int32_t>& targets, int32_t ignore_index,
                            Reduction reduction, real label_smoothing, int64_t* num_correct) {
    if (num_correct) *num_correct = 0;
    if (x.rank() != 2 || weight.rank() != 2 || x.size(1) != weight.size(1) || weight.size(0) == 0)
        throw Error(fmt::format(
            "linear_cross_entropy: x {} x weight {}ᵀ: expected x [N, in] and weight [V, in]",
            x.shape().str(), weight.shape().str()));
    const int64_t N = x.size(0), in = x.size(1), V = weight.size(0);
    if (bias.defined() && (bias.rank() != 1 || bias.size(0) != V))
        throw Error(fmt::format("linear_cross_entropy: bias {} for weight {}: expected [{}]",
                                bias.shape().str(), weight.shape().str(), V));
    const Shape logits_shape{N, V};
    const int64_t count = check_targets("linear_cross_entropy", logits_shape, N, V, targets,
                                        ignore_index, label_smoothing);

    Buffer z(size_t(N * V));  // the logits, then G in their place
    if (bias.defined())
        for (int64_t r = 0; r < N; ++r) std::copy(bias.data(), bias.data() + V, z.data() + r * V);
    if (N > 0)
        gemm(false, true, N, V, in, 1, x.data(), weight.data(), bias.defined() ? 1 : 0, z.data());

    const bool need_grad = grad_enabled() && (x.requires_grad() || weight.requires_grad() ||
                                              (bias.defined() && bias.requires_grad()));
    Tensor out = make_result(reduction == Reduction::none ? Shape{N} : Shape{});
    cross_entropy_rows(z.data(), need_grad ? z.data() : nullptr, N, V, targets, count, ignore_index,
                       reduction, label_smoothing, num_correct, out.data());

    std::vector<Tensor> inputs{x, weight};
    if (bias.defined()) inputs.push_back(bias);
    if (record(out, "linear_cross_entropy", inputs, [N, in, V, reduction](Node& out) {
            if (N == 0) return;
            real* D = out.saved.data();
            scale_by_upstream(D, out.grad.data(), N, V, reduction);  // G is freed after this
            const real *X = out.parent(0).data, *W = out.parent(1).data;
            if (real* dx = parent_grad(out, 0)) gemm(false, false, N, in, V, 1, D, W, 1, dx);
            if (real* dW = parent_grad(out, 1)) gemm(true, false, V, in, N, 1, D, X, 1, dW);
            if (out.parents.size() > 2)
                if (real* db = parent_grad(out, 2))
                    for (int64_t r = 0; r < N; ++r) add_scaled(db, real(1), D + r * V, V);
        }))
        out.node().saved = std::move(z);
    return out;
}

}  // namespace seqgrad
