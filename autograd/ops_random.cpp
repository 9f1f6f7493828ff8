// Dropout, the one op that draws random numbers.
#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// y = x m / (1 - p), m_i ~ Bernoulli(1 - p);  dx += dy m / (1 - p)
// The scaled mask m / (1 - p) is saved for backward.
Tensor dropout(const Tensor& x, real p, bool training, Rng& rng) {
    if (!(p >= 0 && p < 1)) throw Error(fmt::format("dropout: p must be in [0, 1), got {}", p));
    if (!training || p == 0) return x;
    const int64_t n = x.numel();
    Buffer scaled_mask(n);
    const real keep_scale = real(1) / (1 - p);
    for (int64_t i = 0; i < n; ++i) scaled_mask.data()[i] = rng.uniform() < p ? 0 : keep_scale;
    Tensor out = make_result(x.shape());
    for (int64_t i = 0; i < n; ++i) out.data()[i] = x.data()[i] * scaled_mask.data()[i];
    if (record(out, "dropout", {x}, [](Node& out) {
            real* gx = parent_grad(out, 0);
            if (!gx) return;
            const real *g = out.grad.data(), *m = out.saved.data();
            const int64_t n = out.numel();
            for (int64_t i = 0; i < n; ++i) gx[i] += g[i] * m[i];
        }))
        out.node().saved = std::move(scaled_mask);
    return out;
}

}  // namespace seqgrad
