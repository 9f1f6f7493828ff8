// Which version of each kernel of autograd/kernels/kernels.h the library runs: the build's choice
// (SEQGRAD_KERNELS = fast | reference), made here and nowhere else.
#include "seqgrad/autograd/kernels/kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "seqgrad/autograd/kernels/gemm.h"

#if SEQGRAD_FAST_KERNELS
#include "seqgrad/autograd/kernels/fast/kernels.h"
#endif
#if SEQGRAD_WASM
#include "seqgrad/autograd/kernels/wasm/gemm.h"
#endif

namespace seqgrad {

#if SEQGRAD_FAST_KERNELS

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, real alpha, const real* A,
          const real* B, real beta, real* C) {
    kernels::fast::gemm(ta, tb, M, N, K, alpha, A, B, beta, C);
}

namespace kernels {
void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y) {
    fast::product_x_wt(weight, rows, x, beta, y);
}
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx) {
    fast::product_dy_w(weight, rows, dy, dx);
}
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows) {
    fast::accumulate_weight_grad(out, w, x, dY, rows);
}
Tensor shared_over_steps(const Tensor& weight) {
    return fast::shared_over_steps(weight);
}
SharedOverStepsScope::SharedOverStepsScope(const std::vector<Tensor>& weights)
    : previous_size_(fast::open_shared_over_steps(weights)) {}
SharedOverStepsScope::~SharedOverStepsScope() {
    fast::close_shared_over_steps(previous_size_);
}
const Tensor& weight_in_use(const Tensor& weight) {
    return fast::weight_in_use(weight);
}
// ParallelGradients: autograd/kernels/fast/gradient_shard.cpp, beside the buffers it keeps
// the optimizers' passes: the caller's loop is the reference; the fast versions replace it
void adam_update(const AdamStep& step, const std::vector<AdamArrays>& params, bool zero_grads,
                 AdamLoop) {
    fast::adam_update(step, params, zero_grads);
}
void sgd_update(const SgdStep& step, const std::vector<SgdArrays>& params, bool zero_grads,
                SgdLoop) {
    fast::sgd_update(step, params, zero_grads);
}
double sum_of_squares(const std::vector<const real*>& arrays, const std::vector<int64_t>& sizes,
                      SumOfSquaresLoop) {
    return fast::sum_of_squares(arrays, sizes);
}
void zero_arrays(const std::vector<real*>& arrays, const std::vector<int64_t>& sizes) {
    fast::zero_arrays(arrays, sizes);
}
}  // namespace kernels

#else  // the reference build (and the WebAssembly build, whose product is its own SIMD one)

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, real alpha, const real* A,
          const real* B, real beta, real* C) {
#if SEQGRAD_WASM
    kernels::wasm::gemm(ta, tb, M, N, K, alpha, A, B, beta, C);
#else
    kernels::reference::gemm(ta, tb, M, N, K, alpha, A, B, beta, C);
#endif
}

namespace kernels {
void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y) {
    reference::product_x_wt(weight, rows, x, beta, y);
}
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx) {
    reference::product_dy_w(weight, rows, dy, dx);
}
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows) {
    reference::accumulate_weight_grad(out, w, x, dY, rows);
}
// The steps use the weight itself: each step's backward adds its own dY_tᵀ X_t.
Tensor shared_over_steps(const Tensor& weight) {
    if (weight.rank() != 2)
        throw Error(
            fmt::format("shared_over_steps: weight {} must be [N, K]", weight.shape().str()));
    return weight;
}
SharedOverStepsScope::SharedOverStepsScope(const std::vector<Tensor>&) : previous_size_(0) {}
SharedOverStepsScope::~SharedOverStepsScope() = default;
const Tensor& weight_in_use(const Tensor& weight) {
    return weight;
}
struct ParallelGradients::State {};
ParallelGradients::ParallelGradients() = default;
ParallelGradients::~ParallelGradients() = default;
void ParallelGradients::run(int count, const std::function<void(int)>& task) {
    for (int k = 0; k < count; ++k) task(k);
}
// the optimizers' passes: the caller's loop, one parameter after another
void adam_update(const AdamStep& step, const std::vector<AdamArrays>& params, bool zero_grads,
                 AdamLoop reference) {
    for (const AdamArrays& a : params) {
        reference(step, a);
        if (zero_grads) std::fill(a.grad, a.grad + a.n, real(0));
    }
}
void sgd_update(const SgdStep& step, const std::vector<SgdArrays>& params, bool zero_grads,
                SgdLoop reference) {
    for (const SgdArrays& a : params) {
        reference(step, a);
        if (zero_grads) std::fill(a.grad, a.grad + a.n, real(0));
    }
}
double sum_of_squares(const std::vector<const real*>& arrays, const std::vector<int64_t>& sizes,
                      SumOfSquaresLoop reference) {
    double total = 0;
    for (size_t k = 0; k < arrays.size(); ++k) total += reference(arrays[k], sizes[k]);
    return total;
}
void zero_arrays(const std::vector<real*>& arrays, const std::vector<int64_t>& sizes) {
    for (size_t k = 0; k < arrays.size(); ++k) std::fill(arrays[k], arrays[k] + sizes[k], real(0));
}
}  // namespace kernels

#endif

}  // namespace seqgrad
