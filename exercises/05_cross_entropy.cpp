// Exercise 05: cross-entropy with ignore_index and label smoothing (mean reduction).
//
//   logits [N, V], targets N ids in [0, V) or ignore_index (padding: that row counts for nothing)
//   log p_ij = log_softmax(logits_i)_j
//   q_ij     = (1 − ε) [j = t_i] + ε / V            the smoothed target distribution
//   loss_i   = −Σ_j q_ij log p_ij
//   L        = Σ_{i not ignored} loss_i / count,    count = #targets != ignore_index
//              (count = 0: L = 0 and every gradient 0, never 0/0)
//   dL/dlogits_ij = (p_ij − q_ij) / count for rows not ignored, 0 for ignored rows
// Build it from library ops (log_softmax, mul, sum...) or as one op with its own backward.
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets,
                     int32_t ignore_index, real label_smoothing) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
