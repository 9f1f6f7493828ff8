// expect: gradient was overwritten \(=\), not accumulated \(\+=\): an input may feed several ops
// A wrong answer to 03_matmul for the grader's tests:
// dA is summed in a local variable, then assigned (=) instead of added (+=).
// Exercise 03: matmul and its backward.
//
//   2-D:      A [n,m] × B [m,p] -> C [n,p],      C_ij = Σ_k A_ik B_kj
//   batched:  A [N,n,m] × B [N,m,p] -> C [N,n,p] (one product per batch entry)
//   backward: dA = dC Bᵀ   (dA_ik += Σ_j dC_ij B_kj)
//             dB = Aᵀ dC   (dB_kj += Σ_i A_ik dC_ij)
// Any other shapes: throw seqgrad::Error naming both shapes. Plain loops are fine here (the
// library calls BLAS: autograd/ops_matmul.cpp).
#include <fmt/format.h>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor matmul(const Tensor& a, const Tensor& b) {
    const bool two_d = a.rank() == 2 && b.rank() == 2;
    const bool batched = a.rank() == 3 && b.rank() == 3 && a.size(0) == b.size(0);
    if ((!two_d && !batched) || a.size(-1) != b.size(-2))
        throw Error(fmt::format("matmul: {} x {}: expected [n,m]x[m,p] or [N,n,m]x[N,m,p]",
                                a.shape().str(), b.shape().str()));
    const int64_t N = batched ? a.size(0) : 1, n = a.size(-2), m = a.size(-1), p = b.size(-1);
    Tensor c = Tensor::zeros(two_d ? Shape{n, p} : Shape{N, n, p});
    for (int64_t q = 0; q < N; ++q) {
        const real *A = a.data() + q * n * m, *B = b.data() + q * m * p;
        real* C = c.data() + q * n * p;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < m; ++k)
                for (int64_t j = 0; j < p; ++j) C[i * p + j] += A[i * m + k] * B[k * p + j];
    }
    record(c, "exercise_matmul", {a, b}, [N, n, m, p](Node& out) {
        real* dA = parent_grad(out, 0);
        real* dB = parent_grad(out, 1);
        for (int64_t q = 0; q < N; ++q) {
            const real *A = out.parent(0).data + q * n * m, *B = out.parent(1).data + q * m * p;
            const real* dC = out.grad.data() + q * n * p;
            for (int64_t i = 0; i < n; ++i)
                for (int64_t k = 0; k < m; ++k) {
                    real sum = 0;
                    for (int64_t j = 0; j < p; ++j) {
                        sum += dC[i * p + j] * B[k * p + j];
                        if (dB) dB[q * m * p + k * p + j] += A[i * m + k] * dC[i * p + j];
                    }
                    if (dA) dA[q * n * m + i * m + k] = sum;
                }
        }
    });
    return c;
}

}  // namespace seqgrad::exercises
