#include "seqgrad/layers/loss.h"

#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

Tensor cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets,
                     int32_t ignore_index, Reduction reduction, real label_smoothing,
                     int64_t* num_correct) {
    return fused_cross_entropy(logits, targets, ignore_index, reduction, label_smoothing,
                               num_correct);
}

int64_t count_targets(const std::vector<int32_t>& targets, int32_t ignore_index) {
    return std::count_if(targets.begin(), targets.end(),
                         [ignore_index](int32_t t) { return t != ignore_index; });
}

// loss_i = −Σ_j q_ij log_softmax(x)_ij, with q the smoothed one-hot target distribution
// (a constant: no gradient flows into it) and q_i = 0 for ignored rows.
Tensor cross_entropy_composed(const Tensor& logits, const std::vector<int32_t>& targets,
                              int32_t ignore_index, Reduction reduction, real label_smoothing) {
    if (logits.rank() != 2 || logits.size(1) == 0)
        throw Error(fmt::format("cross_entropy: logits must be [N, V] with V > 0, got {}",
                                logits.shape().str()));
    const int64_t N = logits.size(0), V = logits.size(1);
    if (int64_t(targets.size()) != N)
        throw Error(fmt::format("cross_entropy: {} targets for logits {}", targets.size(),
                                logits.shape().str()));
    if (!(label_smoothing >= 0 && label_smoothing <= 1))
        throw Error(
            fmt::format("cross_entropy: label_smoothing {} is outside [0, 1]", label_smoothing));

    Tensor target_distribution = Tensor::zeros({N, V});  // q [N, V]
    real* q = target_distribution.data();
    for (int64_t i = 0; i < N; ++i) {
        const int32_t t = targets[i];
        if (t == ignore_index) continue;
        if (t < 0 || t >= V)
            throw Error(fmt::format(
                "cross_entropy: target {} at row {} is out of range [0, {}) (ignore_index {})", t,
                i, V, ignore_index));
        for (int64_t j = 0; j < V; ++j) q[i * V + j] = label_smoothing / real(V);
        q[i * V + t] += 1 - label_smoothing;
    }

    Tensor log_probs = log_softmax(logits);                             // [N, V]
    Tensor per_row = neg(sum(mul(log_probs, target_distribution), 1));  // [N]
    if (reduction == Reduction::none) return per_row;
    Tensor total = sum(per_row);  // []
    if (reduction == Reduction::sum) return total;
    const int64_t count = count_targets(targets, ignore_index);
    return mul(total, real(1) / real(std::max<int64_t>(count, 1)));
}

}  // namespace seqgrad
