// The kernel interface: the named functions through which the ops, layers and optimizers reach
// everything that exists only for speed.
//
// Each kernel has a reference version — plain loops and BLAS calls, the definition, in
// autograd/kernels/kernels_reference.h / kernels_reference.cpp and autograd/kernels/gemm.cpp — and
// a fast version in autograd/kernels/fast/ (SIMD, weight panels laid out once, shared weight
// gradients, per-thread gradient buffers, threads). The library is built with one of the two (CMake
// option SEQGRAD_KERNELS = fast | reference, default fast); the reference versions are compiled in
// both builds, so the tests of the fast build hold every fast kernel equal to its reference
// (tests/unit/test_fast_*). In the fast build, some fast kernels can also be switched off at run
// time (autograd/kernels/switches.h).
//
// Read the ops as if every call here were its reference version: that is what it computes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "seqgrad/autograd/kernels/kernels_reference.h"
#include "seqgrad/autograd/tensor.h"

#ifndef SEQGRAD_FAST_KERNELS
#define SEQGRAD_FAST_KERNELS 1
#endif

#if SEQGRAD_FAST_KERNELS
#include "seqgrad/autograd/kernels/fast/vector_kernels.h"
namespace seqgrad::kernels {
namespace selected = fast;
}  // namespace seqgrad::kernels
#else
namespace seqgrad::kernels {
namespace selected = reference;
}  // namespace seqgrad::kernels
#endif

namespace seqgrad::kernels {

// ---- rows of the fused ops and of softmax (reference: autograd/kernels/kernels_reference.h) -----

// max_j x_j over x[0..n); −inf for n = 0; a NaN never wins a comparison.
inline real row_max(const real* x, int64_t n) {
    return selected::row_max(x, n);
}
// Σ_j e^(x_j − shift), summed in double.
inline double sum_exp_shifted(const real* x, real shift, int64_t n) {
    return selected::sum_exp_shifted(x, shift, n);
}
// out_j = e^(x_j − shift) (out may be x); returns Σ_j out_j, and Σ_j x_j in *sum_x.
inline double exp_shifted(const real* x, real shift, real* out, int64_t n, double* sum_x) {
    return selected::exp_shifted(x, shift, out, n, sum_x);
}
// y_j = a y_j − b
inline void scale_shift(real* y, real a, real b, int64_t n) {
    selected::scale_shift(y, a, b, n);
}
// y_j += a x_j
inline void add_scaled(real* y, real a, const real* x, int64_t n) {
    selected::add_scaled(y, a, x, n);
}
// Σ_j x_j y_j
inline real dot(const real* x, const real* y, int64_t n) {
    return selected::dot(x, y, n);
}
// v_j = σ(v_j) = 1 / (1 + e^−v_j), in place
inline void sigmoid_inplace(real* v, int64_t n) {
    selected::sigmoid_inplace(v, n);
}
// v_j = tanh(v_j), in place
inline void tanh_inplace(real* v, int64_t n) {
    selected::tanh_inplace(v, n);
}
// t_j = tanh(q_j + k_j) (stored when t is not null); returns Σ_j v_j t_j
inline real tanh_row_dot(const real* q, const real* k, const real* v, real* t, int64_t n) {
    return selected::tanh_row_dot(q, k, v, t, n);
}
// d_j = g v_j (1 − t_j²);  dq_j += d_j,  dk_j += d_j  (either may be null)
inline void tanh_backward_row(real g, const real* v, const real* t, real* dq, real* dk, int64_t n) {
    selected::tanh_backward_row(g, v, t, dq, dk, n);
}

// ---- products by a weight (reference: autograd/kernels/kernels_reference.cpp) -------------------
// The matrix product itself is gemm (autograd/kernels/gemm.h). These three are the products of a
// layer by its weight W [N, K]; `weight` is the graph node of W (a parameter, or the view that
// shared_over_steps made of it).

// y [rows, N] = x [rows, K] Wᵀ + beta y
void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y);
// dx [rows, K] += dy [rows, N] W
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx);
// dW += dYᵀ X into parent `w` of `out`, with dY [rows, N] and X [rows, K] the first rows of
// parent `x`. Nothing when the weight needs no gradient.
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows);

// ---- a weight shared by the steps of a recurrence --------------------------------------------
// Every step of a recurrence multiplies by the same W. By the chain rule its gradient is
//   dW = Σ_t dY_tᵀ X_t = [dY_1; ...; dY_T]ᵀ [X_1; ...; X_T],
// and the reference adds each step's term in that step's backward. The fast version wraps W
// once per sequence in a view (autograd/kernels/fast/shared_over_steps.h) to which the steps hand
// their rows, and adds them in one product when the view's own backward runs, after every step's.

// The weight as the steps of one recurrence use it: the reference returns `weight` itself.
Tensor shared_over_steps(const Tensor& weight);
// While a scope lives, ops on the calling thread that multiply by one of `weights` use
// shared_over_steps(weight) instead (see weight_in_use): a decoder opens one around its steps.
// Only parameters (leaves) are shared; undefined tensors and results of ops are skipped.
class SharedOverStepsScope {
  public:
    // {a, b, ...} or a cell's step_weights()
    explicit SharedOverStepsScope(const std::vector<Tensor>& weights);
    ~SharedOverStepsScope();
    SharedOverStepsScope(const SharedOverStepsScope&) = delete;
    SharedOverStepsScope& operator=(const SharedOverStepsScope&) = delete;

  private:
    // the fast kernels' previous list of shared weights (the reference kernels keep none)
    [[maybe_unused]] size_t previous_size_;
};
// What an op multiplies by for `weight` on this thread: the open scope's view, or `weight`
// (valid while the scope lives).
const Tensor& weight_in_use(const Tensor& weight);

// ---- gradients of leaves on other threads (data parallelism) ----------------------------------

// The parts of a data-parallel step: run(count, task) runs task(k) for k = 0 .. count − 1, the
// parts of one step, each a forward and backward of some of the batch's rows. Reference: one after
// another on the calling thread, every gradient straight into .grad. Fast: task k on thread k
// (autograd/kernels/parallel.h), the leaves' gradients of every k > 0 kept apart (in buffers this
// object keeps from step to step, installed as the thread's LeafGradientSink,
// autograd/kernel_hooks.h) and added into .grad afterwards in the order k = 1, 2, ... (so the
// result does not depend on timing). Rethrows the error of the lowest k that threw.
class ParallelGradients {
  public:
    ParallelGradients();
    ~ParallelGradients();
    ParallelGradients(const ParallelGradients&) = delete;
    ParallelGradients& operator=(const ParallelGradients&) = delete;
    void run(int count, const std::function<void(int)>& task);

    struct State;  // the fast kernels' buffers (none in the reference build)

  private:
    std::unique_ptr<State> state_;
};

// ==== the optimizers' passes over all parameters (optim/) =======================================
// The update rules and the gradient norm are written in optim/ as plain loops over one
// parameter's arrays (optim/adam.cpp, optim/sgd.cpp, optim/clip.cpp). Those loops are the
// reference versions, and the caller hands them in: the reference build runs them, one parameter
// after another; the fast build runs autograd/kernels/fast/optimizer_kernels.cpp instead (one
// branch-free loop per mode, the arrays cut between the threads, as these passes are
// memory-bound), which tests/unit/test_fast_kernels.cpp holds equal to them.
// A clipping factor travels with the step (grad_scale): each loop reads its gradient as
// g · grad_scale, so clipping costs no pass of its own.

// One Adam / AdamW step (optim/adam.h has the maths).
struct AdamStep {
    double lr, beta1, beta2, eps, weight_decay;
    bool decoupled;   // AdamW: decay the weights, not the gradient
    int64_t t;        // the step number: 1, 2, ...
    real grad_scale;  // the gradient used is g · grad_scale (the clipping factor, or 1)
};
struct AdamArrays {
    real *grad, *w, *m, *v;  // gradient, weights, first and second moments
    int64_t n;
};
using AdamLoop = void (*)(const AdamStep&, const AdamArrays&);
// The update of every parameter; zero_grads: each gradient is set to 0 after it is read.
void adam_update(const AdamStep& step, const std::vector<AdamArrays>& params, bool zero_grads,
                 AdamLoop reference);

// One SGD step (optim/sgd.h has the maths).
struct SgdStep {
    double lr, momentum, weight_decay;
    bool nesterov;
    real grad_scale;  // as AdamStep's
};
struct SgdArrays {
    real *grad, *w, *buf;  // buf: the momentum buffer (null without momentum)
    int64_t n;
};
using SgdLoop = void (*)(const SgdStep&, const SgdArrays&);
void sgd_update(const SgdStep& step, const std::vector<SgdArrays>& params, bool zero_grads,
                SgdLoop reference);

// Σ_k Σ_i x_k[i]², in double, over arrays x_k of sizes[k] elements (the gradient norm's sum).
// reference(x, n) is Σ_i x[i]² of one array; the fast version sums fixed blocks, so its result
// has the same bits whatever the number of threads.
using SumOfSquaresLoop = double (*)(const real* x, int64_t n);
double sum_of_squares(const std::vector<const real*>& arrays, const std::vector<int64_t>& sizes,
                      SumOfSquaresLoop reference);

// x_k[i] ← 0 for every element of every array (Optimizer::zero_grad).
void zero_arrays(const std::vector<real*>& arrays, const std::vector<int64_t>& sizes);

// ==== end of the optimizers' passes ============================================================

// ---- the reference versions of the non-inline kernels above (kernels_reference.cpp) ---------
// (reference::gemm: autograd/kernels/gemm.h)
namespace reference {
void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y);
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx);
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows);
}  // namespace reference

}  // namespace seqgrad::kernels
