// The fast versions of the row kernels (autograd/kernels/kernels.h): 8 float lanes at a time.
//
// A loop calling std::exp or std::tanh is not vectorised without -ffast-math, and the fused GRU
// cell, cross-entropy, softmax and attention spend most of their non-GEMM time there. In float
// these run on GCC/Clang vector extensions (autograd/kernels/fast/simd.h: plain arithmetic on 8 floats,
// mapped to AVX instructions, with a polynomial e^x and a rational tanh, relative error
// < 3e-7). For any other element type (the double build's gradient checks) each is its
// reference version, exactly. tests/unit/test_fast_kernels.cpp holds them to the references.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "seqgrad/autograd/kernels/fast/simd.h"
#include "seqgrad/autograd/kernels/kernels_reference.h"

namespace seqgrad::kernels::fast {

template <class T>
T row_max(const T* x, int64_t n) {
    if constexpr (std::is_same_v<T, float>)
        return simd::max_f32(x, n);
    else
        return reference::row_max(x, n);
}

// 8 partial sums of e^(x − shift), then the tail one by one
template <class T>
double sum_exp_shifted(const T* x, T shift, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
        int64_t j = 0;
        double total = 0;
        simd::f32x8 acc = simd::splat(0.0f);
        for (; j + 8 <= n; j += 8) acc += simd::exp8(simd::load8(x + j) - shift);
        for (int k = 0; k < 8; ++k) total += double(acc[k]);
        for (; j < n; ++j) total += double(std::exp(x[j] - shift));
        return total;
    } else {
        return reference::sum_exp_shifted(x, shift, n);
    }
}

template <class T>
double exp_shifted(const T* x, T shift, T* out, int64_t n, double* sum_x) {
    if constexpr (std::is_same_v<T, float>) {
        using namespace simd;
        int64_t j = 0;
        f32x8 acc_e = splat(0), acc_x = splat(0);
        for (; j + 8 <= n; j += 8) {
            const f32x8 v = load8(x + j), e = exp8(v - shift);
            store8(out + j, e);
            acc_e += e;
            acc_x += v;
        }
        double sum_e = 0, sum_v = 0;
        for (int k = 0; k < 8; ++k) sum_e += acc_e[k], sum_v += acc_x[k];
        for (; j < n; ++j) {  // x_j read before out_j is written: out may be x
            const T v = x[j];
            out[j] = std::exp(v - shift);
            sum_e += out[j];
            sum_v += v;
        }
        *sum_x = sum_v;
        return sum_e;
    } else {
        return reference::exp_shifted(x, shift, out, n, sum_x);
    }
}

template <class T>
void scale_shift(T* y, T a, T b, int64_t n) {
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>)
        for (; j + 8 <= n; j += 8) simd::store8(y + j, simd::load8(y + j) * a - b);
    reference::scale_shift(y + j, a, b, n - j);
}

template <class T>
void add_scaled(T* y, T a, const T* x, int64_t n) {
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>)
        for (; j + 8 <= n; j += 8) simd::store8(y + j, simd::load8(y + j) + a * simd::load8(x + j));
    reference::add_scaled(y + j, a, x + j, n - j);
}

template <class T>
T dot(const T* x, const T* y, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
        int64_t j = 0;
        simd::f32x8 acc = simd::splat(0);
        for (; j + 8 <= n; j += 8) acc += simd::load8(x + j) * simd::load8(y + j);
        float total = 0;
        for (int k = 0; k < 8; ++k) total += acc[k];
        for (; j < n; ++j) total += x[j] * y[j];
        return total;
    } else {
        return reference::dot(x, y, n);
    }
}

// Applies f to v[0..n) 8 at a time; the last n % 8 values go through a zero-padded block.
template <class F8>
void apply_f32x8(float* v, int64_t n, F8 f) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) simd::store8(v + i, f(simd::load8(v + i)));
    if (i < n) {
        float block[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::memcpy(block, v + i, sizeof(float) * size_t(n - i));
        simd::store8(block, f(simd::load8(block)));
        std::memcpy(v + i, block, sizeof(float) * size_t(n - i));
    }
}

template <class T>
void sigmoid_inplace(T* v, int64_t n) {
    if constexpr (std::is_same_v<T, float>)
        apply_f32x8(v, n, [](simd::f32x8 x) { return 1.0f / (1.0f + simd::exp8(-x)); });
    else
        reference::sigmoid_inplace(v, n);
}

template <class T>
void tanh_inplace(T* v, int64_t n) {
    if constexpr (std::is_same_v<T, float>)
        apply_f32x8(v, n, simd::tanh8);
    else
        reference::tanh_inplace(v, n);
}

template <class T>
T tanh_row_dot(const T* q, const T* k, const T* v, T* t, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
        using namespace simd;
        int64_t j = 0;
        float score = 0;
        f32x8 acc = splat(0);
        for (; j + 8 <= n; j += 8) {
            const f32x8 tj = tanh8(load8(q + j) + load8(k + j));
            if (t) store8(t + j, tj);
            acc += load8(v + j) * tj;
        }
        for (int l = 0; l < 8; ++l) score += acc[l];
        for (; j < n; ++j) {
            const float tj = std::tanh(q[j] + k[j]);
            if (t) t[j] = tj;
            score += v[j] * tj;
        }
        return score;
    } else {
        return reference::tanh_row_dot(q, k, v, t, n);
    }
}

template <class T>
void tanh_backward_row(T g, const T* v, const T* t, T* dq, T* dk, int64_t n) {
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>)
        for (; j + 8 <= n; j += 8) {
            using namespace simd;
            const f32x8 tj = load8(t + j);
            const f32x8 d = g * load8(v + j) * (1.0f - tj * tj);
            if (dq) store8(dq + j, load8(dq + j) + d);
            if (dk) store8(dk + j, load8(dk + j) + d);
        }
    reference::tanh_backward_row(g, v + j, t + j, dq ? dq + j : nullptr, dk ? dk + j : nullptr,
                                 n - j);
}

}  // namespace seqgrad::kernels::fast
