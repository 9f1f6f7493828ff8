// Elementwise ops: forward and backward of each side by side, with the maths above it.
// Binary ops broadcast (autograd/broadcast.h); their backward accumulates into the stretched
// operand, which is exactly the sum over the broadcast dims.
#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/broadcast.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {
namespace {

// Runs a binary op: out[o] = forward(a[ia], b[ib]); backward adds
// grad_a(g, a, b) into a's gradient and grad_b(g, a, b) into b's.
template <class Forward, class GradA, class GradB>
Tensor binary(const char* op, const Tensor& a, const Tensor& b, Forward forward, GradA grad_a,
              GradB grad_b) {
    if (a.shape() == b.shape()) {  // the common case: no index arithmetic
        Tensor out = make_result(a.shape());
        const real *pa = a.data(), *pb = b.data();
        real* po = out.data();
        int64_t n = out.numel();
        for (int64_t i = 0; i < n; ++i) po[i] = forward(pa[i], pb[i]);
        record(out, op, {a, b}, [grad_a, grad_b](Node& out) {
            const real *g = out.grad.data(), *pa = out.parent(0).data, *pb = out.parent(1).data;
            int64_t n = out.numel();
            if (real* ga = parent_grad(out, 0))
                for (int64_t i = 0; i < n; ++i) ga[i] += grad_a(g[i], pa[i], pb[i]);
            if (real* gb = parent_grad(out, 1))
                for (int64_t i = 0; i < n; ++i) gb[i] += grad_b(g[i], pa[i], pb[i]);
        });
        return out;
    }
    Broadcast bc = Broadcast::make(op, a.shape(), b.shape());
    Tensor out = make_result(bc.out);
    const real *pa = a.data(), *pb = b.data();
    real* po = out.data();
    bc.for_each([&](int64_t o, int64_t ia, int64_t ib) { po[o] = forward(pa[ia], pb[ib]); });
    record(out, op, {a, b}, [bc, grad_a, grad_b](Node& out) {
        const real *g = out.grad.data(), *pa = out.parent(0).data, *pb = out.parent(1).data;
        if (real* ga = parent_grad(out, 0))
            bc.for_each(
                [&](int64_t o, int64_t ia, int64_t ib) { ga[ia] += grad_a(g[o], pa[ia], pb[ib]); });
        if (real* gb = parent_grad(out, 1))
            bc.for_each(
                [&](int64_t o, int64_t ia, int64_t ib) { gb[ib] += grad_b(g[o], pa[ia], pb[ib]); });
    });
    return out;
}

// Runs a unary op y = forward(x); backward adds grad(dy, x, y) into x's gradient.
template <class Forward, class Grad>
Tensor unary(const char* op, const Tensor& x, Forward forward, Grad grad) {
    Tensor out = make_result(x.shape());
    const real* px = x.data();
    real* py = out.data();
    int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) py[i] = forward(px[i]);
    record(out, op, {x}, [grad](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real *g = out.grad.data(), *px = out.parent(0).data, *py = out.data;
        int64_t n = out.numel();
        for (int64_t i = 0; i < n; ++i) gx[i] += grad(g[i], px[i], py[i]);
    });
    return out;
}

}  // namespace

// c = a + b;  da += dc,  db += dc
Tensor add(const Tensor& a, const Tensor& b) {
    return binary(
        "add", a, b, [](real x, real y) { return x + y; }, [](real g, real, real) { return g; },
        [](real g, real, real) { return g; });
}

// c = a - b;  da += dc,  db -= dc
Tensor sub(const Tensor& a, const Tensor& b) {
    return binary(
        "sub", a, b, [](real x, real y) { return x - y; }, [](real g, real, real) { return g; },
        [](real g, real, real) { return -g; });
}

// c = a * b;  da += dc * b,  db += dc * a
Tensor mul(const Tensor& a, const Tensor& b) {
    return binary(
        "mul", a, b, [](real x, real y) { return x * y; },
        [](real g, real, real y) { return g * y; }, [](real g, real x, real) { return g * x; });
}

// c = a / b;  da += dc / b,  db -= dc * a / b²
Tensor div(const Tensor& a, const Tensor& b) {
    return binary(
        "div", a, b, [](real x, real y) { return x / y; },
        [](real g, real, real y) { return g / y; },
        [](real g, real x, real y) { return -g * x / (y * y); });
}

// y = x + c;  dx += dy
Tensor add(const Tensor& x, real c) {
    return unary(
        "add_scalar", x, [c](real v) { return v + c; }, [](real g, real, real) { return g; });
}

// y = c x;  dx += c dy
Tensor mul(const Tensor& x, real c) {
    return unary(
        "mul_scalar", x, [c](real v) { return v * c; }, [c](real g, real, real) { return g * c; });
}

// y = -x;  dx -= dy
Tensor neg(const Tensor& x) {
    return unary(
        "neg", x, [](real v) { return -v; }, [](real g, real, real) { return -g; });
}

// y = tanh(x);  dx += dy (1 - y²)
Tensor tanh(const Tensor& x) {
    return unary(
        "tanh", x, [](real v) { return std::tanh(v); },
        [](real g, real, real y) { return g * (1 - y * y); });
}

// y = σ(x) = 1 / (1 + e^-x);  dx += dy y (1 - y)
Tensor sigmoid(const Tensor& x) {
    return unary(
        "sigmoid", x, [](real v) { return real(1) / (1 + std::exp(-v)); },
        [](real g, real, real y) { return g * y * (1 - y); });
}

// y = max(x, 0);  dx += dy [x > 0]
Tensor relu(const Tensor& x) {
    return unary(
        "relu", x, [](real v) { return v > 0 ? v : real(0); },
        [](real g, real v, real) { return v > 0 ? g : real(0); });
}

// y = x Φ(x) = x (1 + erf(x/√2)) / 2  (exact GELU);  dx += dy (Φ(x) + x φ(x))
// (Φ the standard normal's distribution function, φ = e^(−x²/2)/√(2π) its density)
Tensor gelu(const Tensor& x) {
    return unary(
        "gelu", x,
        [](real v) { return real(0.5) * v * (1 + std::erf(v * real(0.70710678118654752440))); },
        [](real g, real v, real) {
            const real cdf = real(0.5) * (1 + std::erf(v * real(0.70710678118654752440)));
            const real pdf = std::exp(real(-0.5) * v * v) * real(0.39894228040143267794);
            return g * (cdf + v * pdf);
        });
}

// y = √x;  dx += dy / (2 y)
Tensor sqrt(const Tensor& x) {
    return unary(
        "sqrt", x, [](real v) { return std::sqrt(v); },
        [](real g, real, real y) { return g / (2 * y); });
}

// y = e^x;  dx += dy y
Tensor exp(const Tensor& x) {
    return unary(
        "exp", x, [](real v) { return std::exp(v); }, [](real g, real, real y) { return g * y; });
}

// y = ln x;  dx += dy / x
Tensor log(const Tensor& x) {
    return unary(
        "log", x, [](real v) { return std::log(v); }, [](real g, real v, real) { return g / v; });
}

// y = min(max(x, lo), hi);  dx += dy [lo <= x <= hi]   (PyTorch's convention at the bounds)
Tensor clamp(const Tensor& x, real lo, real hi) {
    if (!(lo <= hi)) throw Error(fmt::format("clamp: lo {} > hi {}", lo, hi));
    return unary(
        "clamp", x, [lo, hi](real v) { return v < lo ? lo : (v > hi ? hi : v); },
        [lo, hi](real g, real v, real) { return (v >= lo && v <= hi) ? g : real(0); });
}

// y = mask ? value : x;  dx += mask ? 0 : dy
Tensor masked_fill(const Tensor& x, const Tensor& mask, real value) {
    if (mask.requires_grad()) throw Error("masked_fill: the mask must not require grad");
    Broadcast bc = Broadcast::make("masked_fill", x.shape(), mask.shape());
    if (bc.out != x.shape())
        throw Error(fmt::format("masked_fill: mask {} does not broadcast to x {}",
                                mask.shape().str(), x.shape().str()));
    Tensor out = make_result(x.shape());
    const real *px = x.data(), *pm = mask.data();
    real* py = out.data();
    bc.for_each([&](int64_t o, int64_t ix, int64_t im) { py[o] = pm[im] != 0 ? value : px[ix]; });
    record(out, "masked_fill", {x, mask}, [bc](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real *g = out.grad.data(), *pm = out.parent(1).data;
        bc.for_each([&](int64_t o, int64_t ix, int64_t im) {
            if (pm[im] == 0) gx[ix] += g[o];
        });
    });
    return out;
}

}  // namespace seqgrad
