// expect: NaN for the all-masked row
// A wrong answer to 09_masked_softmax for the grader's tests: exp(−∞ − (−∞)) on an all-masked row.
// Exercise 09: the padding mask and the masked softmax.
//
// padding_mask: lengths [B] (each in 1..max_len) -> mask [B, max_len] with 1 at padded
// positions s >= lengths[b] and 0 at real ones.
//
// masked_softmax: scores [B,S], mask [B,S] (1 = padded) -> weights [B,S]
//   weights_bs = e^(scores_bs) / Σ_{s' valid} e^(scores_bs')  at valid s,  exactly 0 at padded s
// and the gradient reaching a padded score must be exactly 0 too. The usual way: set padded
// scores to −∞ (masked_fill), then a stable softmax (softmax), whose backward
// dx_j = y_j (dy_j − Σ_k dy_k y_k) is then 0 wherever y_j = 0. Multiplying the weights by the
// mask after the softmax is NOT the same: the padded positions still take their share of the
// denominator. A row with no valid position is an error, never NaN.
#include <limits>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor padding_mask(const std::vector<int32_t>& lengths, int64_t max_len) {
    const int64_t B = int64_t(lengths.size());
    Tensor mask = Tensor::zeros({B, max_len});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = lengths[size_t(b)]; s < max_len; ++s) mask.data()[b * max_len + s] = 1;
    return mask;
}

Tensor masked_softmax(const Tensor& scores, const Tensor& mask) {
    Tensor x = masked_fill(scores, mask, -std::numeric_limits<real>::infinity());
    const int64_t S = x.size(1);
    Tensor m = Tensor::empty({x.size(0), 1});  // the row max, −∞ for an all-masked row
    for (int64_t b = 0; b < x.size(0); ++b) {
        real best = -std::numeric_limits<real>::infinity();
        for (int64_t s = 0; s < S; ++s) best = std::max(best, x.data()[b * S + s]);
        m.data()[b] = best;
    }
    Tensor e = exp(x - m);
    return e / sum(e, 1, true);
}

}  // namespace seqgrad::exercises
