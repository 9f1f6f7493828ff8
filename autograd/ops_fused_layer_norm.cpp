// Layer normalisation (see autograd/fused_layer_norm.h for shapes and maths).
#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/fused_layer_norm.h"

namespace seqgrad {
namespace {

void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    const int64_t E = x.rank() ? x.size(-1) : 0;
    auto bad = [E](const Tensor& t) { return t.defined() && (t.rank() != 1 || t.size(0) != E); };
    if (x.rank() < 1 || E == 0 || bad(weight) || bad(bias))
        throw Error(
            fmt::format("layer_norm: x {}, weight {}, bias {}: expected x [..., E] with "
                        "E >= 1, weight [E] and bias [E]",
                        x.shape().str(), weight.defined() ? weight.shape().str() : "none",
                        bias.defined() ? bias.shape().str() : "none"));
}

}  // namespace

// y = (x − μ) r ⊙ w + b,  r = 1/√(σ² + ε);
//   dx += r (ĝ − mean(ĝ) − x̂ mean(ĝ x̂)) with ĝ = dy ⊙ w,  dw += Σ dy x̂,  db += Σ dy
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, real eps) {
    check_layer_norm(x, weight, bias);
    const int64_t E = x.size(-1), rows = x.numel() / E;
    Tensor out = make_result(x.shape());
    Buffer saved(size_t(2 * rows));  // μ and r of every row
    const real* w = weight.defined() ? weight.data() : nullptr;
    const real* b = bias.defined() ? bias.data() : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
        const real* xr = x.data() + r * E;
        real* yr = out.data() + r * E;
        double total = 0;  // in double: the mean of many values drifts in float
        for (int64_t j = 0; j < E; ++j) total += xr[j];
        const real mu = real(total / double(E));
        double squares = 0;
        for (int64_t j = 0; j < E; ++j) squares += double(xr[j] - mu) * double(xr[j] - mu);
        const real rstd = real(1 / std::sqrt(squares / double(E) + double(eps)));
        for (int64_t j = 0; j < E; ++j) {
            const real xhat = (xr[j] - mu) * rstd;
            yr[j] = (w ? xhat * w[j] : xhat) + (b ? b[j] : 0);
        }
        saved.data()[2 * r] = mu;
        saved.data()[2 * r + 1] = rstd;
    }
    std::vector<Tensor> inputs{x};
    if (weight.defined()) inputs.push_back(weight);
    if (bias.defined()) inputs.push_back(bias);
    const bool has_weight = weight.defined(), has_bias = bias.defined();
    if (record(out, "layer_norm", inputs, [E, rows, has_weight, has_bias](Node& out) {
            real* dx = parent_grad(out, 0);
            real* dw = has_weight ? parent_grad(out, 1) : nullptr;
            real* db = has_bias ? parent_grad(out, has_weight ? 2 : 1) : nullptr;
            const real* x = out.parent(0).data;
            const real* w = has_weight ? out.parent(1).data : nullptr;
            const real *dy = out.grad.data(), *stats = out.saved.data();
            for (int64_t r = 0; r < rows; ++r) {
                const real *xr = x + r * E, *dyr = dy + r * E;
                const real mu = stats[2 * r], rstd = stats[2 * r + 1];
                double mean_g = 0, mean_gx = 0;  // mean(ĝ), mean(ĝ x̂)
                for (int64_t j = 0; j < E; ++j) {
                    const real xhat = (xr[j] - mu) * rstd;
                    const real g = w ? dyr[j] * w[j] : dyr[j];
                    mean_g += g;
                    mean_gx += double(g) * xhat;
                    if (dw) dw[j] += dyr[j] * xhat;
                    if (db) db[j] += dyr[j];
                }
                if (!dx) continue;
                mean_g /= double(E);
                mean_gx /= double(E);
                for (int64_t j = 0; j < E; ++j) {
                    const real xhat = (xr[j] - mu) * rstd;
                    const real g = w ? dyr[j] * w[j] : dyr[j];
                    dx[r * E + j] += rstd * (g - real(mean_g) - xhat * real(mean_gx));
                }
            }
        }))
        out.node().saved = std::move(saved);
    return out;
}

}  // namespace seqgrad
