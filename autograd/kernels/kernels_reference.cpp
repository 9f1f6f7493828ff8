// The reference versions of the products by a weight (autograd/kernels/kernels.h): plain loops
// and BLAS calls, the definitions. The reference product itself, one BLAS call, is in
// autograd/kernels/gemm.cpp. (The optimizers' reference loops are in optim/.)

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
    gemm(true, false, N, K, rows, 1, dY, out.parent(x).data, 1, weight.grad_data());
}

}  // namespace seqgrad::kernels::reference
