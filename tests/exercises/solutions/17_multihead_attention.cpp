// Exercise 17: multi-head scaled dot-product attention, with the padding and the causal masks.
//
// E = h·d: each of the h heads gets its own d = E / h dims of every position.
// split_heads: x [B,T,E] -> [B,h,T,d]    head i takes dims i·d .. i·d + d − 1 of every position:
//   reshape to [B,T,h,d], then transpose(1, 2). (A reshape straight to [B,h,T,d] is not that.)
// merge_heads: [B,h,T,d] -> [B,T,E]      the inverse: transpose(1, 2), then reshape.
// causal_mask: [T,S], 1 where key j is in the future of query i:  j > i + (S − T).
//   The T queries are the LAST T of the S positions: with T = S, query i sees keys 0..i (itself
//   included); one query after S − 1 cached keys sees all S.
// scaled_dot_product_attention: q [B,h,T,d], k [B,h,S,d], v [B,h,S,dv],
//   key_padding_mask [B,S] (1 = padded key; may be undefined), causal  ->  o [B,h,T,dv]
//   s_ij = q_i · k_j / √d                  scores [B,h,T,S] (d = q.size(3), one head's dims)
//   s_ij = −∞ where key j is padded, or (causal) where causal_mask(T, S) is 1
//   a_ij = softmax_j(s_ij)                 each query's weights over the keys sum to 1
//   o_i  = Σ_j a_ij v_j
//   The masks go in BEFORE the softmax, so a masked key gets exactly 0 weight and 0 gradient.
//   Batched products need rank 3: reshape q to [B·h,T,d] etc.; seqgrad::matmul(a, b, false, true)
//   is a bᵀ (say seqgrad::matmul: exercise 03's matmul has the same name).
//   A [B,S] mask broadcasts over heads and queries as [B,1,1,S], a [T,S] one as it is.
// The gradients come from the ops (reshape, transpose, matmul, masked_fill, softmax).
#include <cmath>
#include <limits>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor split_heads(const Tensor& x, int64_t heads) {
    const int64_t B = x.size(0), T = x.size(1), E = x.size(2);
    return transpose(reshape(x, {B, T, heads, E / heads}), 1, 2);
}

Tensor merge_heads(const Tensor& x) {
    const int64_t B = x.size(0), H = x.size(1), T = x.size(2), d = x.size(3);
    return reshape(transpose(x, 1, 2), {B, T, H * d});
}

Tensor causal_mask(int64_t T, int64_t S) {
    Tensor mask = Tensor::zeros({T, S});
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = i + 1 + (S - T); j < S; ++j) mask.data()[i * S + j] = 1;
    return mask;
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& key_padding_mask, bool causal) {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), d = q.size(3), S = k.size(2),
                  dv = v.size(3);
    const real inf = std::numeric_limits<real>::infinity();
    Tensor scores =
        seqgrad::matmul(reshape(q, {B * H, T, d}), reshape(k, {B * H, S, d}), false, true);
    scores = reshape(scores * real(1 / std::sqrt(double(d))), {B, H, T, S});
    if (key_padding_mask.defined())
        scores = masked_fill(scores, reshape(key_padding_mask, {B, 1, 1, S}), -inf);
    if (causal) scores = masked_fill(scores, causal_mask(T, S), -inf);
    Tensor weights = softmax(scores);
    Tensor out = seqgrad::matmul(reshape(weights, {B * H, T, S}), reshape(v, {B * H, S, dv}));
    return reshape(out, {B, H, T, dv});
}

}  // namespace seqgrad::exercises
