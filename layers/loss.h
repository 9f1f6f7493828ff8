// Losses. cross_entropy is what training runs (the fused op of autograd/fused_loss.h, one pass
// over the logits, hand-written backward); cross_entropy_composed is its textbook twin, built
// from log_softmax and primitive ops, which a learner reads first. Both follow PyTorch's
// torch.nn.functional.cross_entropy, except that an all-ignored batch gives 0, not NaN.
//
// Shapes:  logits [N, V],  targets [N] (class ids, or ignore_index for padding)
//          result [] (mean, sum) or [N] (none; 0 at ignored rows)
//
//   p_i    = softmax(logits_i)
//   q_i    = (1 − ε) onehot(target_i) + ε / V            (the smoothed target distribution)
//   loss_i = −Σ_j q_ij log p_ij = (1 − ε) nll_i + ε · mean_j(−log p_ij)
//   mean:  Σ_{i not ignored} loss_i / count,   count = #targets != ignore_index  (0 if count = 0)
//   sum:   Σ_{i not ignored} loss_i
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// Fused log_softmax + NLL with ignore_index and label smoothing. Throws seqgrad::Error on a
// target outside [0, V) that is not ignore_index, or a shape mismatch. num_correct (optional)
// receives how many non-ignored rows have their target as argmax (token accuracy).
Tensor cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets,
                     int32_t ignore_index = -100, Reduction reduction = Reduction::mean,
                     real label_smoothing = 0, int64_t* num_correct = nullptr);

// The same loss composed from log_softmax, mul, sum and scalar ops (same value and gradient;
// slower: it builds a [N, V] target distribution and runs three ops over [N, V]).
Tensor cross_entropy_composed(const Tensor& logits, const std::vector<int32_t>& targets,
                              int32_t ignore_index = -100, Reduction reduction = Reduction::mean,
                              real label_smoothing = 0);

// The number of real (non-ignored) targets: the denominator of the mean, and what tokens/s
// and perplexity = exp(sum loss / count) are reported over.
int64_t count_targets(const std::vector<int32_t>& targets, int32_t ignore_index = -100);

}  // namespace seqgrad
