#include "seqgrad/layers/multihead_attention.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

Tensor causal_mask(int64_t T, int64_t S) {
    Tensor mask = Tensor::zeros({T, S});
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = i + 1 + (S - T); j < S; ++j) mask.data()[i * S + j] = 1;
    return mask;
}

// s = q kᵀ/√d, masked to −∞; a = softmax(s); o = a v — each an op of its own
Tensor scaled_dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const KeyMask& mask, bool causal, Tensor* weights) {
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
        throw Error(
            fmt::format("scaled_dot_product_attention_composed: q {}, k {}, v {}: "
                        "expected [B,h,T,d], [B,h,S,d], [B,h,S,dv]",
                        q.shape().str(), k.shape().str(), v.shape().str()));
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), d = q.size(3), S = k.size(2);
    const real inf = std::numeric_limits<real>::infinity();
    Tensor q3 = reshape(q, {B * H, T, d}), k3 = reshape(k, {B * H, S, d});
    Tensor v3 = reshape(v, {B * H, S, v.size(3)});
    Tensor scores = matmul(q3, k3, false, /*transpose_b=*/true) * real(1 / std::sqrt(double(d)));
    scores = reshape(scores, {B, H, T, S});
    if (mask.is_packed())  // block-diagonal [T,S] (causal inside each block), broadcasts
        scores = masked_fill(scores, packed_mask(*mask.queries, *mask.keys, causal), -inf);
    if (mask.padding.defined())  // [B,S] -> [B,1,1,S], broadcast over heads and queries
        scores = masked_fill(scores, reshape(mask.padding, {B, 1, 1, S}), -inf);
    if (causal && !mask.is_packed())
        scores = masked_fill(scores, causal_mask(T, S), -inf);  // [T,S] broadcasts
    Tensor a = softmax(scores);                                 // [B,h,T,S]
    if (weights) *weights = a;
    Tensor out = matmul(reshape(a, {B * H, T, S}), v3);  // [B*h, T, dv]
    return reshape(out, {B, H, T, v.size(3)});
}

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, Rng& rng)
    : out_proj(embed_dim, embed_dim, true, rng), embed_dim_(embed_dim), num_heads_(num_heads) {
    if (num_heads < 1 || embed_dim < 1 || embed_dim % num_heads != 0)
        throw Error(
            fmt::format("MultiheadAttention: embed_dim {} must be a positive multiple "
                        "of num_heads {} (>= 1)",
                        embed_dim, num_heads));
    in_proj_weight =
        register_parameter("in_proj_weight", Tensor::empty({3 * embed_dim, embed_dim}));
    const double bound = std::sqrt(6.0 / double(embed_dim + 3 * embed_dim));  // Xavier uniform
    init::uniform(in_proj_weight, -bound, bound, rng);
    in_proj_bias = register_parameter("in_proj_bias", Tensor::zeros({3 * embed_dim}));
    register_module("out_proj", out_proj);
    std::fill(out_proj.bias.data(), out_proj.bias.data() + embed_dim, real(0));
}

// x W_partᵀ + b_part, with W_part the rows [part·E, (part+1)·E) of in_proj_weight (a view)
Tensor MultiheadAttention::project(const Tensor& x, int part) const {
    const int64_t E = embed_dim_;
    return linear(x, slice(in_proj_weight, 0, part * E, (part + 1) * E),
                  slice(in_proj_bias, 0, part * E, (part + 1) * E));
}

// [B,T,E] -> [B,T,h,d] -> [B,h,T,d]
Tensor MultiheadAttention::split_heads(const Tensor& x) const {
    return transpose(reshape(x, {x.size(0), x.size(1), num_heads_, head_dim()}), 1, 2);
}

// [B,h,T,d] -> [B,T,h,d] -> [B,T,E]
Tensor MultiheadAttention::merge_heads(const Tensor& x) const {
    return reshape(transpose(x, 1, 2), {x.size(0), x.size(2), embed_dim_});
}

KeysValues MultiheadAttention::keys_values(const Tensor& key, const Tensor& value) const {
    if (key.rank() != 3 || value.rank() != 3 || key.size(-1) != embed_dim_ ||
        value.shape() != key.shape())
        throw Error(
            fmt::format("MultiheadAttention(E={}): key {} and value {}: expected "
                        "[B,S,{}] each",
                        embed_dim_, key.shape().str(), value.shape().str(), embed_dim_));
    return {split_heads(project(key, 1)), split_heads(project(value, 2))};
}

MultiheadAttentionOutput MultiheadAttention::attend(const Tensor& query, const KeysValues& kv,
                                                    const KeyMask& mask, bool causal,
                                                    bool need_weights) const {
    if (query.rank() != 3 || query.size(-1) != embed_dim_ || query.size(0) != kv.keys.size(0))
        throw Error(fmt::format(
            "MultiheadAttention(E={}): query {} for keys {}: expected "
            "[B,T,{}] with B = {}",
            embed_dim_, query.shape().str(), kv.keys.shape().str(), embed_dim_, kv.keys.size(0)));
    Tensor q = split_heads(project(query, 0));  // [B,h,T,d]
    MultiheadAttentionOutput result;
    Tensor heads;
    if (use_fused) {
        DotProductAttention a =
            scaled_dot_product_attention(q, kv.keys, kv.values, mask, causal, need_weights);
        heads = a.output;
        result.weights = a.weights;
    } else {
        Tensor weights;
        heads =
            scaled_dot_product_attention_composed(q, kv.keys, kv.values, mask, causal, &weights);
        if (need_weights) result.weights = weights.detach();
    }
    result.output = out_proj.forward(merge_heads(heads));
    return result;
}

MultiheadAttentionOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key,
                                                     const Tensor& value, const KeyMask& mask,
                                                     bool causal, bool need_weights) const {
    return attend(query, keys_values(key, value), mask, causal, need_weights);
}

Tensor average_heads(const Tensor& weights) {
    if (weights.rank() != 4)
        throw Error(
            fmt::format("average_heads: weights {}: expected [B,h,T,S]", weights.shape().str()));
    const int64_t B = weights.size(0), H = weights.size(1), TS = weights.size(2) * weights.size(3);
    Tensor out = Tensor::zeros({B, weights.size(2), weights.size(3)});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < TS; ++i)
                out.data()[b * TS + i] += weights.data()[(b * H + h) * TS + i];
    for (int64_t i = 0; i < out.numel(); ++i) out.data()[i] /= real(H);
    return out;
}

}  // namespace seqgrad
