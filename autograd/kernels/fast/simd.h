// 8-lane float arithmetic for the fast row kernels (autograd/kernels/fast/vector_kernels.h).
//
// A loop calling std::exp or std::tanh is not vectorised without -ffast-math, and the fused GRU
// cell, cross-entropy and attention spend most of their non-GEMM time there. GCC/Clang vector
// extensions give plain arithmetic on 8 floats, mapped to AVX instructions. Used in the float
// build only; the double build (gradient checks) keeps std::exp / std::tanh.
#pragma once

#include <cstdint>
#include <cstring>

#pragma GCC diagnostic ignored "-Wpsabi"  // 32-byte vectors in internal functions: no ABI at stake

namespace seqgrad::simd {

using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = int32_t __attribute__((vector_size(32)));

inline f32x8 splat(float v) {
    return f32x8{v, v, v, v, v, v, v, v};
}
inline f32x8 load8(const float* p) {
    f32x8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store8(float* p, f32x8 v) {
    std::memcpy(p, &v, sizeof v);
}

// e^x on 8 lanes (Cephes expf):  e^x = 2^k e^r,  k = round(x / ln 2),  r = x − k ln 2 with
// |r| <= ln2/2, e^r by a degree-6 polynomial, 2^k written straight into the exponent bits.
// Relative error < 3e-7; x < −87.3 (where 2^k would leave the normal floats) gives exactly 0.
inline f32x8 exp8(f32x8 x) {
    const f32x8 lo = splat(-87.3365478515625f), hi = splat(88.3762626647949f);
    f32x8 xc = x < lo ? lo : x;
    xc = xc > hi ? hi : xc;
    // round(x / ln 2) by adding and subtracting 1.5 · 2^23 (the FPU's round-to-nearest)
    const f32x8 k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const f32x8 r = xc - k * 0.693359375f + k * 2.12194440e-4f;  // ln 2 in two parts
    f32x8 p = splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const i32x8 exponent_bits = (__builtin_convertvector(k, i32x8) + 127) << 23;
    f32x8 two_to_k;
    std::memcpy(&two_to_k, &exponent_bits, sizeof two_to_k);
    return x < lo ? splat(0.0f) : p * two_to_k;
}

// tanh on 8 lanes: x · P(x²) / Q(x²) with x clamped to ±7.90531 (beyond it tanh rounds to ±1
// in float): the rational approximation of Eigen's fast float tanh, absolute error < 3e-7 and
// relative accuracy near 0 (it needs no exp, hence no cancellation in 1 − 2/(e^2x + 1)).
inline f32x8 tanh8(f32x8 x) {
    const f32x8 bound = splat(7.90531110763549805f);
    x = x > bound ? bound : x;
    x = x < -bound ? -bound : x;
    const f32x8 x2 = x * x;
    f32x8 p = splat(-2.76076847742355e-16f);
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 - 8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    f32x8 q = splat(1.19825839466702e-06f);
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    return x * p / q;
}

// max of x[0..n), 8 lanes at a time; -inf for n = 0. A NaN never wins a comparison, so it is
// skipped (the callers' exp of it still gives NaN downstream).
inline float max_f32(const float* x, int64_t n) {
    const float neg_inf = -__builtin_inff();
    f32x8 lanes = splat(neg_inf);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const f32x8 v = load8(x + j);
        lanes = v > lanes ? v : lanes;
    }
    float m = neg_inf;
    for (int k = 0; k < 8; ++k) m = lanes[k] > m ? lanes[k] : m;
    for (; j < n; ++j) m = x[j] > m ? x[j] : m;
    return m;
}

}  // namespace seqgrad::simd
