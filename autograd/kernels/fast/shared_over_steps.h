// A weight shared by the steps of a recurrence (the fast version of kernels::shared_over_steps,
// autograd/kernels/kernels.h), and the products that know about it.
//
// shared_over_steps(W) is a view of W [N, K] (the same data, one graph node) that the T steps
// of a recurrence all multiply by. Its gradient is W's; what changes is how it is summed. Each
// step's backward would add dW += dY_tᵀ X_t, T products of only the step's n_t rows that each
// read and write all of dW; product kernels that see the view (product_x_wt, product_dy_w,
// accumulate_weight_grad) hand their rows to it instead, and its own backward, which runs after
// every step's, adds them at once:
//   dW += [dY_1; ...; dY_T]ᵀ [X_1; ...; X_T]      (one product of Σ n_t rows)
// Any other op that uses the view accumulates into its .grad as usual, and that is added too.
// The view also keeps W packed for the steps' thin products (gemm_nt_packed).
// The view's state is its node's extension (Node::extension, autograd/tensor.h).
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad::kernels::fast {

// The view, or `weight` itself when nothing would be recorded (grad mode off, no grad required)
// or SEQGRAD_DISABLE=shared_steps. Throws seqgrad::Error naming the shape for a weight not 2-D.
Tensor shared_over_steps(const Tensor& weight);
// The scope of kernels::SharedOverStepsScope: opening pushes a view of each weight on this
// thread's list and returns the list's previous size, closing pops back to it.
size_t open_shared_over_steps(const std::vector<Tensor>& weights);
void close_shared_over_steps(size_t previous_size);
const Tensor& weight_in_use(const Tensor& weight);

void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y);
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx);
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows);

}  // namespace seqgrad::kernels::fast
