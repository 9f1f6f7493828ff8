// Scaled dot-product attention over heads (Vaswani et al. 2017; PyTorch's
// F.scaled_dot_product_attention), fused: the scores, the masks, the softmax and the weighted sum
// in one op with a hand-written backward. Luong's dot score qᵀk (layers/attention.h) is its seed:
// here every query row of every head scores every key row, and the score is divided by √d.
//
// Shapes:  q [B, h, T, d]   queries (T target positions, h heads of d dims each)
//          k [B, h, S, d]   keys (S source positions)
//          v [B, h, S, dv]  values
//          mask: a key padding mask [B, S] (optional), nonzero at padded key positions;
//                or a packing of both sides (see KeyMask below)
//          output  [B, h, T, dv]
//          weights [B, h, T, S] (only when asked for): what Hugging Face returns as attentions
//
// Packed sequences (training's layout, models/model/transformer.h): the batch's sentences are laid
// end to end with no padding, B = 1, T = Σ_i T_i queries and S = Σ_i S_i keys. Sentence i's
// queries see sentence i's keys only: the scores are block-diagonal, so the op computes one
// [T_i, S_i] block per sentence and head, and never a score for a padded or a foreign position.
//
// Maths, for each batch row b (or sentence i) and head:
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
// The fused op makes two gemm calls per (batch row or sentence, head) forward and four backward,
// keeps only the weights a (the blocks, when packed) for the backward, and needs no mask tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// Sentences laid end to end: sentence i is positions starts[i] .. starts[i+1] - 1.
struct Packing {
    std::vector<int64_t> starts;  // B + 1 offsets: 0, T_0, T_0 + T_1, ..., Σ T_i

    static Packing of_lengths(const std::vector<int32_t>& lengths);
    int64_t sentences() const { return int64_t(starts.size()) - 1; }
    int64_t total() const { return starts.back(); }
    int64_t length(int64_t i) const { return starts[size_t(i + 1)] - starts[size_t(i)]; }
    // Each position's index inside its own sentence: 0, 1, .., T_0 - 1, 0, 1, ...
    std::vector<int32_t> positions() const;
};

// Which keys each query may see, besides the causal mask. Padded batches mark the padded keys
// (a Tensor converts to this implicitly); packed batches say where each sentence's queries and
// keys are, and a query sees its own sentence's keys only.
struct KeyMask {
    Tensor padding;                    // [B, S], nonzero at padded keys; undefined: none
    const Packing* queries = nullptr;  // packed: the T positions of q (not owned)
    const Packing* keys = nullptr;     // packed: the S positions of k and v

    KeyMask() = default;
    KeyMask(Tensor key_padding_mask) : padding(std::move(key_padding_mask)) {}
    static KeyMask packed(const Packing& queries, const Packing& keys);
    bool is_packed() const { return queries != nullptr; }
};

struct DotProductAttention {
    Tensor output;   // [B, h, T, dv]
    Tensor weights;  // [B, h, T, S], no gradient; undefined unless need_weights (packed:
                     // [1, h, T, S], zero outside each sentence's block)
};

DotProductAttention scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const KeyMask& mask = KeyMask(),
                                                 bool causal = false, bool need_weights = false);

// [T, S] mask for packed sentences: 1 where query and key belong to different sentences, or
// (causal) where the key is in the query's future inside its sentence. What the packed op skips;
// the composed twin masks with it.
Tensor packed_mask(const Packing& queries, const Packing& keys, bool causal);

}  // namespace seqgrad
