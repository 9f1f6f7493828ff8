// Scaled dot-product attention over heads (Vaswani et al. 2017; PyTorch's
// F.scaled_dot_product_attention), fused: the scores, the masks, the softmax and the weighted sum
// in one op with a hand-written backward. Luong's dot score qᵀk (layers/attention.h) is its seed:
// here every query row of every head scores every key row, and the score is divided by √d.
//
// Shapes:  q [B, h, T, d]   queries (T target positions, h heads of d dims each)
//          k [B, h, S, d]   keys (S source positions)
//          v [B, h, S, dv]  values
//          key_padding_mask [B, S] (optional): nonzero at padded key positions
//          output  [B, h, T, dv]
//          weights [B, h, T, S] (only when asked for): what Hugging Face returns as attentions
//
// Maths, for each batch row b and head:
//   s_ij = q_i · k_j / √d                                    scores [T, S]
//   s_ij = −∞ where key j is padding, or (causal) where j > i + (S − T)
//   a_ij = exp(s_ij − max_j s_ij) / Σ_j exp(s_ij − max_j s_ij)   softmax over keys
//   o_i  = Σ_j a_ij v_j
// Backward:
//   da_ij = dō_i · v_j,   dv_j += Σ_i a_ij do_i
//   ds_ij = a_ij (da_ij − Σ_k a_ik da_ik)
//   dq_i += Σ_j ds_ij k_j / √d,   dk_j += Σ_i ds_ij q_i / √d
//
// Masked positions get exactly zero weight (exp(−∞) = 0), so they add nothing to the output and
// get exactly zero gradient (ds = a · (...) = 0). The causal mask is aligned bottom-right: the T
// queries are the last T of the S positions, so with T = S query i sees keys 0..i, and one query
// decoded after a cache of S − 1 keys sees all S of them.
//
// A fully masked row (every key padded, e.g. an empty source) is NOT NaN: its weights are all
// zero and its output is the zero vector (nothing was attended to), with zero gradient. (A plain
// softmax over all −∞ gives 0/0; PyTorch's nn.MultiheadAttention returns NaN there.)
//
// The composed twin (matmul, mul, masked_fill, softmax, matmul) is
// scaled_dot_product_attention_composed in layers/multihead_attention.h; tests show they agree.
// The fused op makes two gemm calls per (batch row, head) forward and four backward, keeps only
// the weights a [B, h, T, S] for the backward, and needs no [B, h, T, S] mask tensor.
#pragma once

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

struct DotProductAttention {
    Tensor output;   // [B, h, T, dv]
    Tensor weights;  // [B, h, T, S], no gradient; undefined unless need_weights
};

DotProductAttention scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const Tensor& key_padding_mask = Tensor(),
                                                 bool causal = false, bool need_weights = false);

}  // namespace seqgrad
