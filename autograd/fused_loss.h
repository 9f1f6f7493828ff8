// Fused cross-entropy: log_softmax and the negative log-likelihood in one op, with a
// hand-written backward. This is what training runs; its composed twin, built from
// log_softmax and primitive ops, is `cross_entropy_composed` in layers/loss.h, and
// tests/unit/test_loss.cpp shows that the two agree in value and gradient.
//
// Shapes:  logits [N, V]  (N rows, e.g. every target token of a batch; V classes)
//          targets N ints in [0, V), or ignore_index (that row counts for nothing)
//          result  []  for Reduction::mean and Reduction::sum,  [N] for Reduction::none
//
// Maths, per row i with target t and smoothing ε (PyTorch's definition):
//   lse_i   = max_j x_ij + ln Σ_j e^(x_ij − max)           log-sum-exp, stable for |x| ~ 1e4
//   log p_ij = x_ij − lse_i
//   loss_i  = (1 − ε) (−log p_it) + ε · (1/V) Σ_j (−log p_ij)
//           = lse_i − (1 − ε) x_it − (ε/V) Σ_j x_ij
//   mean:  L = Σ_i valid_i loss_i / count,  count = number of rows whose target is not ignored
//          (an all-ignored batch has L = 0 and zero gradients, never 0/0 = NaN)
//   sum:   L = Σ_i valid_i loss_i          none: L_i = valid_i loss_i
// Gradient (q_i = the smoothed one-hot target distribution (1−ε) onehot(t) + ε/V):
//   dL/dx_ij = scale_i (p_ij − q_ij),  scale_i = dL · 1/count (mean), dL (sum), dL_i (none),
//   and exactly 0 for ignored rows.
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

enum class Reduction { mean, sum, none };

// Throws seqgrad::Error on a shape mismatch, a target outside [0, V) that is not ignore_index,
// or a label_smoothing outside [0, 1].
// num_correct (optional) receives the number of rows, ignored ones excepted, whose target is the
// argmax of its logits (the first maximum, as std::max_element): accuracy at no extra pass, as
// the row maximum is computed anyway.
Tensor fused_cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets,
                           int32_t ignore_index, Reduction reduction, real label_smoothing,
                           int64_t* num_correct = nullptr);

// The output projection and the loss in one op: the same value and gradients as
// fused_cross_entropy(linear(x, weight, bias), ...), for x [N, in], weight [V, in], bias [V] (or
// undefined). Why: the logits [N, V] are the largest tensor of a training step (N = the target
// tokens of a batch, V the target vocabulary), and the composed pair keeps two of that size
// alive until backward, the logits (the linear's output) and G. Here G is computed in place of
// the logits, which nothing else can see: one [N, V] buffer instead of two, the same products. Its
// composed twin is that pair; tests/unit/test_memory.cpp shows they agree (value, gradients,
// gradcheck).
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const std::vector<int32_t>& targets, int32_t ignore_index,
                            Reduction reduction, real label_smoothing,
                            int64_t* num_correct = nullptr);

}  // namespace seqgrad
