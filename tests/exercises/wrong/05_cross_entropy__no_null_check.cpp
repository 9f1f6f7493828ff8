// expect: parent_grad returned nullptr for an input that needs no gradient: check it before writing
// A wrong answer to 05_cross_entropy for the grader's tests:
// the backward writes dx without checking it for nullptr.
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
    const int64_t N = logits.size(0), V = logits.size(1);
    int64_t count = 0;
    for (int32_t t : targets) count += t != ignore_index;
    Tensor log_p = seqgrad::log_softmax(logits.detach());
    Tensor loss = make_result(Shape{});
    double total = 0;
    for (int64_t i = 0; i < N; ++i) {
        if (targets[size_t(i)] == ignore_index) continue;
        const real* lp = log_p.data() + i * V;
        double row = 0;
        for (int64_t j = 0; j < V; ++j)
            row -=
                (label_smoothing / real(V) + (j == targets[size_t(i)] ? 1 - label_smoothing : 0)) *
                lp[j];
        total += row;
    }
    loss.data()[0] = count ? real(total / double(count)) : 0;
    record(loss, "exercise_cross_entropy", {logits},
           [log_p, targets, ignore_index, label_smoothing, count, N, V](Node& out) {
               real* dx = parent_grad(out, 0);
               if (count == 0) return;
               const real scale = out.grad.data()[0] / real(count);
               for (int64_t i = 0; i < N; ++i) {
                   if (targets[size_t(i)] == ignore_index) continue;
                   for (int64_t j = 0; j < V; ++j) {
                       real q = label_smoothing / real(V) +
                                (j == targets[size_t(i)] ? 1 - label_smoothing : 0);
                       dx[i * V + j] += scale * (std::exp(log_p.data()[i * V + j]) - q);
                   }
               }
           });
    return loss;
}

}  // namespace seqgrad::exercises
