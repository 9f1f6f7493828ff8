// The reference versions of the row kernels (autograd/kernels/kernels.h): the definitions, in plain
// loops. Templates over the element type only so that the tests of the fast build can hold the
// float fast kernels against them (the library itself uses T = real).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace seqgrad::kernels::reference {

// max_j x_j; −inf for n = 0; a NaN never wins a comparison
template <class T>
T row_max(const T* x, int64_t n) {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
    return m;
}

// Σ_j e^(x_j − shift)
template <class T>
double sum_exp_shifted(const T* x, T shift, int64_t n) {
    double total = 0;
    for (int64_t j = 0; j < n; ++j) total += double(std::exp(x[j] - shift));
    return total;
}

// out_j = e^(x_j − shift); returns Σ_j out_j, and Σ_j x_j in *sum_x (out may be x: x_j is read
// before out_j is written)
template <class T>
double exp_shifted(const T* x, T shift, T* out, int64_t n, double* sum_x) {
    double sum_e = 0, sum_v = 0;
    for (int64_t j = 0; j < n; ++j) {
        const T v = x[j];
        out[j] = std::exp(v - shift);
        sum_e += out[j];
        sum_v += v;
    }
    *sum_x = sum_v;
    return sum_e;
}

// y_j = a y_j − b
template <class T>
void scale_shift(T* y, T a, T b, int64_t n) {
    for (int64_t j = 0; j < n; ++j) y[j] = a * y[j] - b;
}

// y_j += a x_j
template <class T>
void add_scaled(T* y, T a, const T* x, int64_t n) {
    for (int64_t j = 0; j < n; ++j) y[j] += a * x[j];
}

// Σ_j x_j y_j
template <class T>
T dot(const T* x, const T* y, int64_t n) {
    T total = 0;
    for (int64_t j = 0; j < n; ++j) total += x[j] * y[j];
    return total;
}

// σ(v) = 1 / (1 + e^−v), written exactly as the sigmoid op writes it
template <class T>
void sigmoid_inplace(T* v, int64_t n) {
    for (int64_t j = 0; j < n; ++j) v[j] = 1 / (1 + std::exp(-v[j]));
}

template <class T>
void tanh_inplace(T* v, int64_t n) {
    for (int64_t j = 0; j < n; ++j) v[j] = std::tanh(v[j]);
}

// t_j = tanh(q_j + k_j) (stored when t is not null); returns Σ_j v_j t_j
template <class T>
T tanh_row_dot(const T* q, const T* k, const T* v, T* t, int64_t n) {
    T score = 0;
    for (int64_t j = 0; j < n; ++j) {
        const T tj = std::tanh(q[j] + k[j]);
        if (t) t[j] = tj;
        score += v[j] * tj;
    }
    return score;
}

// d_j = g v_j (1 − t_j²);  dq_j += d_j,  dk_j += d_j  (either may be null)
template <class T>
void tanh_backward_row(T g, const T* v, const T* t, T* dq, T* dk, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
        const T d = g * v[j] * (1 - t[j] * t[j]);
        if (dq) dq[j] += d;
        if (dk) dk[j] += d;
    }
}

}  // namespace seqgrad::kernels::reference
