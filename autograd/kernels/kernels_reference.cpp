// The reference versions of the products by a weight and of the optimizer passes
// (autograd/kernels/kernels.h): plain loops and BLAS calls, the definitions. The reference product
// itself, one BLAS call, is in autograd/kernels/gemm.cpp.
#include <cmath>
#include <cstring>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad::kernels::reference {

// y [rows, N] = x [rows, K] Wᵀ + beta y
void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y) {
    const int64_t N = weight.shape[0], K = weight.shape[1];
    gemm(false, true, rows, N, K, 1, x, weight.data, beta, y);
}

// dx [rows, K] += dy [rows, N] W
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx) {
    const int64_t N = weight.shape[0], K = weight.shape[1];
    gemm(false, false, rows, K, N, 1, dy, weight.data, 1, dx);
}

// dW [N, K] += dYᵀ X
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows) {
    Node& weight = out.parent(w);
    if (!weight.requires_grad || rows == 0) return;
    const int64_t N = weight.shape[0], K = weight.shape[1];
    gemm(true, false, N, K, rows, 1, dY, out.parent(x).data, 1, weight.mutable_grad_data());
}

void for_each_array(const std::vector<int64_t>& sizes,
                    const std::function<void(size_t, int64_t, int64_t)>& fn) {
    for (size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] > 0) fn(i, 0, sizes[i]);
}

// g ← scale · g + wd · w (L2),  w ← decay · w (AdamW),
// m ← β1 m + (1−β1) g,  v ← β2 v + (1−β2) g²,  w ← w − step_size · m / (√v · inv_bc2_sqrt + eps)
void adam_update(const AdamConstants& c, const AdamArrays& a, bool zero_grads) {
    for (int64_t i = 0; i < a.n; ++i) {
        real g = c.grad_scale != real(1) ? a.grad[i] * c.grad_scale : a.grad[i];
        if (c.decoupled) a.w[i] *= c.decay;
        if (c.l2) g += c.wd * a.w[i];
        a.m[i] = a.m[i] + (g - a.m[i]) * c.one_minus_beta1;  // = β1 m + (1−β1) g
        a.v[i] = a.v[i] * c.beta2 + c.one_minus_beta2 * g * g;
        a.w[i] -= c.step_size * a.m[i] / (std::sqrt(a.v[i]) * c.inv_bc2_sqrt + c.eps);
        if (zero_grads) a.grad[i] = 0;
    }
}

}  // namespace seqgrad::kernels::reference
