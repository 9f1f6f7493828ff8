// Reductions (sum, mean) and the normalisations along the last dim (softmax, log_softmax).
#include <fmt/format.h>

#include <type_traits>

#include <cmath>
#include <limits>

#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {
namespace {

// x seen as [outer, n, inner] around dimension `dim`.
struct AroundDim {
    int64_t outer = 1, n = 1, inner = 1;
    AroundDim(const Shape& s, int dim) {
        int d = s.normalize_dim(dim);
        for (int i = 0; i < d; ++i) outer *= s[i];
        n = s[d];
        for (int i = d + 1; i < s.rank(); ++i) inner *= s[i];
    }
};

Tensor sum_all_scaled(const char* op, const Tensor& x, real scale) {
    Tensor out = make_result(Shape{});
    double total = 0;  // accumulate in double: a float sum of 10^5 terms drifts
    for (int64_t i = 0; i < x.numel(); ++i) total += x.data()[i];
    out.data()[0] = real(total * scale);
    record(out, op, {x}, [scale](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        real g = out.grad.data()[0] * scale;
        for (int64_t i = 0; i < out.parent(0).numel(); ++i) gx[i] += g;
    });
    return out;
}

Tensor sum_dim_scaled(const char* op, const Tensor& x, int dim, bool keepdim, real scale) {
    AroundDim a(x.shape(), dim);
    Shape out_shape = keepdim ? x.shape().with_dim(dim, 1) : x.shape().without_dim(dim);
    Tensor out = Tensor::zeros(out_shape);
    const real* px = x.data();
    real* py = out.data();
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t k = 0; k < a.n; ++k)
            for (int64_t i = 0; i < a.inner; ++i)
                py[o * a.inner + i] += px[(o * a.n + k) * a.inner + i];
    if (scale != 1)
        for (int64_t i = 0, n = out.numel(); i < n; ++i) py[i] *= scale;
    record(out, op, {x}, [a, scale](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real* g = out.grad.data();
        for (int64_t o = 0; o < a.outer; ++o)
            for (int64_t k = 0; k < a.n; ++k)
                for (int64_t i = 0; i < a.inner; ++i)
                    gx[(o * a.n + k) * a.inner + i] += scale * g[o * a.inner + i];
    });
    return out;
}

void check_last_dim(const char* op, const Tensor& x) {
    if (x.rank() < 1 || x.size(-1) == 0)
        throw Error(fmt::format("{}: needs a non-empty last dim, got {}", op, x.shape().str()));
}

// The row max, or an error when the row has no finite entry (all positions masked with -inf).
real row_max(const char* op, const real* row, int64_t n, int64_t row_index) {
    const real m = kernels::row_max(row, n);
    if (!std::isfinite(m))
        throw Error(
            fmt::format("{}: row {} has no finite entry (max {}): every position is "
                        "masked, or the input holds NaN/inf",
                        op, row_index, m));
    return m;
}

// Σ_j e^(x_j − shift), summed in double (a kernel: autograd/kernels/kernels.h)
double sum_exp_shifted(const real* x, real shift, int64_t n) {
    return kernels::sum_exp_shifted(x, shift, n);
}

}  // namespace

// s = Σ x;  dx += ds
Tensor sum(const Tensor& x) {
    return sum_all_scaled("sum", x, 1);
}
// m = Σ x / n;  dx += dm / n
Tensor mean(const Tensor& x) {
    return sum_all_scaled("mean", x, real(1) / real(x.numel()));
}
// s[o,i] = Σ_k x[o,k,i];  dx[o,k,i] += ds[o,i]
Tensor sum(const Tensor& x, int dim, bool keepdim) {
    return sum_dim_scaled("sum_dim", x, dim, keepdim, 1);
}
// m[o,i] = Σ_k x[o,k,i] / n;  dx[o,k,i] += dm[o,i] / n
Tensor mean(const Tensor& x, int dim, bool keepdim) {
    return sum_dim_scaled("mean_dim", x, dim, keepdim, real(1) / real(x.shape()[dim]));
}

// y_j = e^(x_j - max) / Σ_k e^(x_k - max);  dx_j += y_j (dy_j - Σ_k dy_k y_k)
// A masked position (x = -inf) gets y = 0 exactly, hence dx = 0 exactly.
Tensor softmax(const Tensor& x) {
    check_last_dim("softmax", x);
    const int64_t n = x.size(-1), rows = x.numel() / n;
    Tensor out = make_result(x.shape());
    for (int64_t r = 0; r < rows; ++r) {
        const real* xr = x.data() + r * n;
        real* yr = out.data() + r * n;
        real m = row_max("softmax", xr, n, r);
        real total = 0;
        for (int64_t j = 0; j < n; ++j) total += (yr[j] = std::exp(xr[j] - m));
        real inv = 1 / total;
        for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
    }
    record(out, "softmax", {x}, [n, rows](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        for (int64_t r = 0; r < rows; ++r) {
            const real *y = out.data + r * n, *dy = out.grad.data() + r * n;
            real dot = 0;
            for (int64_t j = 0; j < n; ++j) dot += dy[j] * y[j];
            for (int64_t j = 0; j < n; ++j) gx[r * n + j] += y[j] * (dy[j] - dot);
        }
    });
    return out;
}

// y_j = x_j - max - ln Σ_k e^(x_k - max);  dx_j += dy_j - softmax_j Σ_k dy_k
Tensor log_softmax(const Tensor& x) {
    check_last_dim("log_softmax", x);
    const int64_t n = x.size(-1), rows = x.numel() / n;
    Tensor out = make_result(x.shape());
    for (int64_t r = 0; r < rows; ++r) {
        const real* xr = x.data() + r * n;
        real* yr = out.data() + r * n;
        real m = row_max("log_softmax", xr, n, r);
        real log_total = m + real(std::log(sum_exp_shifted(xr, m, n)));
        for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - log_total;
    }
    record(out, "log_softmax", {x}, [n, rows](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        for (int64_t r = 0; r < rows; ++r) {
            const real *y = out.data + r * n, *dy = out.grad.data() + r * n;
            real total = 0;
            for (int64_t j = 0; j < n; ++j) total += dy[j];
            for (int64_t j = 0; j < n; ++j) gx[r * n + j] += dy[j] - std::exp(y[j]) * total;
        }
    });
    return out;
}

}  // namespace seqgrad
