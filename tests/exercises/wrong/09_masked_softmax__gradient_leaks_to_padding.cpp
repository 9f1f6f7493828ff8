// expect: gradient reaching masked positions
// A wrong answer to 09_masked_softmax for the grader's tests: the backward passes dy through at
// padding. Exercise 09: the padding mask and the masked softmax.
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
#include <algorithm>
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

// The right weights, with a hand-written backward that forgets the mask: dx = dy at padding.
Tensor masked_softmax(const Tensor& scores, const Tensor& mask) {
    Tensor weights =
        softmax(masked_fill(scores.detach(), mask, -std::numeric_limits<real>::infinity()));
    Tensor out = make_result(weights.shape());
    std::copy(weights.data(), weights.data() + weights.numel(), out.data());
    const int64_t S = scores.size(1);
    record(out, "leaky_masked_softmax", {scores}, [weights, mask, S](Node& node) {
        real* dx = parent_grad(node, 0);
        if (!dx) return;
        const real* dy = node.grad.data();
        for (int64_t b = 0; b < node.numel() / S; ++b) {
            const real* y = weights.data() + b * S;
            real dot = 0;
            for (int64_t s = 0; s < S; ++s) dot += dy[b * S + s] * y[s];
            for (int64_t s = 0; s < S; ++s)
                dx[b * S + s] +=
                    mask.data()[b * S + s] != 0 ? dy[b * S + s] : y[s] * (dy[b * S + s] - dot);
        }
    });
    return out;
}

}  // namespace seqgrad::exercises
