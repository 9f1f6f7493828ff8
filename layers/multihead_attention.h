// Multi-head attention, PyTorch's nn.MultiheadAttention(E, h, batch_first=True) with its
// parameter names and layouts:
//   in_proj_weight [3E, E]  rows 0..E-1 project queries (W_q), E..2E-1 keys (W_k), 2E.. values
//   (W_v) in_proj_bias   [3E] out_proj.weight [E, E], out_proj.bias [E]
//
// Shapes (d = E / h, the dims of one head):
//   query [B, T, E], key and value [B, S, E]
//   q = query W_qᵀ + b_q [B, T, E] -> split_heads -> [B, h, T, d]    (reshape [B,T,h,d], transpose
//   1,2) k, v likewise                                  -> [B, h, S, d] o =
//   scaled_dot_product_attention(q, k, v)      -> [B, h, T, d]
//   (autograd/fused_dot_product_attention.h) merge_heads(o) [B, T, E] -> out_proj -> output [B, T,
//   E] weights [B, h, T, S]: one attention distribution per head and query (Hugging Face's
//   `attentions`); PyTorch's need_weights returns their mean over heads, [B, T, S].
//
// Unlike PyTorch, no dropout is applied to the attention weights (the `dropout` of the
// Transformer layers acts on the sub-layer outputs and inside the feed-forward block only).
#pragma once

#include <cstdint>

#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/module.h"

namespace seqgrad {

// [T, S] mask, 1 where key j is in the future of query i (j > i + S − T): what the causal flag of
// scaled_dot_product_attention masks (the T queries are the last T of the S positions).
Tensor causal_mask(int64_t T, int64_t S);

// The composed twin of scaled_dot_product_attention, from primitive ops (matmul, mul,
// masked_fill, softmax, matmul); the same shapes, masks and result, except that a fully masked
// row is an error here (softmax of a row of −∞) where the fused op gives zeros. Packed sentences
// are masked with the block-diagonal packed_mask, so every [T, S] score is computed. `weights`
// (optional) receives a [B, h, T, S] that carries the gradient.
Tensor scaled_dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const KeyMask& mask = KeyMask(), bool causal = false,
                                             Tensor* weights = nullptr);

// Keys and values already projected and split into heads: [B, h, S, d] each. What a decoder
// caches: the memory's once per source batch, its own growing by one position per step.
struct KeysValues {
    Tensor keys, values;
};

struct MultiheadAttentionOutput {
    Tensor output;   // [B, T, E]
    Tensor weights;  // [B, h, T, S] per head, no gradient; undefined unless need_weights
};

class MultiheadAttention : public Module {
  public:
    // in_proj_weight Xavier-uniform, in_proj_bias and out_proj.bias zero, out_proj.weight
    // U(±1/√E), as PyTorch. Throws when embed_dim is not a multiple of num_heads.
    MultiheadAttention(int64_t embed_dim, int64_t num_heads, Rng& rng);

    // query [B,T,E], key and value [B,S,E]; mask: a key padding mask [B,S] nonzero at padding,
    // or the packing of packed sentences (B = 1, autograd/fused_dot_product_attention.h);
    // causal: query i sees keys j <= i + S − T only (inside its own sentence when packed).
    MultiheadAttentionOutput forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const KeyMask& mask = KeyMask(), bool causal = false,
                                     bool need_weights = false) const;

    // The steps of forward, for decoders that cache keys and values:
    // key [B,S,E], value [B,S,E] -> k, v [B,h,S,d]
    KeysValues keys_values(const Tensor& key, const Tensor& value) const;
    // query [B,T,E] attends over keys/values already projected -> forward's output
    MultiheadAttentionOutput attend(const Tensor& query, const KeysValues& kv,
                                    const KeyMask& mask = KeyMask(), bool causal = false,
                                    bool need_weights = false) const;

    int64_t embed_dim() const { return embed_dim_; }
    int64_t num_heads() const { return num_heads_; }
    int64_t head_dim() const { return embed_dim_ / num_heads_; }

    Tensor in_proj_weight;  // [3E, E]
    Tensor in_proj_bias;    // [3E]
    Linear out_proj;
    bool use_fused = true;  // scaled_dot_product_attention, or its composed twin

  private:
    Tensor project(const Tensor& x, int part) const;  // part 0 q, 1 k, 2 v: [B,T,E] -> [B,T,E]
    Tensor split_heads(const Tensor& x) const;        // [B,T,E] -> [B,h,T,d]
    Tensor merge_heads(const Tensor& x) const;        // [B,h,T,d] -> [B,T,E]

    int64_t embed_dim_, num_heads_;
};

// The mean over heads of per-head weights [B, h, T, S] -> [B, T, S] (PyTorch's
// average_attn_weights), without gradient.
Tensor average_heads(const Tensor& weights);

}  // namespace seqgrad
