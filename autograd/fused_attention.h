// Attention kernels with hand-written backwards: the additive (Bahdanau) scores in one pass,
// and the two batched matrix-vector products of every attention (dot scores and the context),
// which as batched matmuls would cost B tiny BLAS calls each (~2 µs per call, more than the
// arithmetic). Each has a composed twin in layers/attention.cpp, and the tests show they agree.
//
// ---- additive_attention_scores ----
//
// Shapes:  query_projected [B, A]     W_q q for each batch row (one decoder step)
//          keys_projected  [B, S, A]  W_k k_s, computed once per source batch
//          v               [1, A]     (a Linear(A, 1) weight) or [A]
//          scores          [B, S]
//
// Maths:
//   t[b,s,a]    = tanh(query_projected[b,a] + keys_projected[b,s,a])
//   scores[b,s] = Σ_a v[a] t[b,s,a]
// Backward, with g = dscores[b,s] and dpre = g v[a] (1 − t²):
//   dquery_projected[b,a] += Σ_s dpre      dkeys_projected[b,s,a] += dpre
//   dv[a] += Σ_{b,s} g t[b,s,a]
//
// The composed twin (add with broadcasting, tanh, linear) is additive_attention_scores_composed
// in layers/attention.h; tests/unit/test_attention.cpp shows they agree. The fused op makes one
// pass over [B, S, A] instead of four, and keeps nothing of t for the backward, which computes
// it again row by row.
#pragma once

#include <cstdint>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

Tensor additive_attention_scores(const Tensor& query_projected, const Tensor& keys_projected,
                                 const Tensor& v);

// context[b,:] = Σ_s weights[b,s] values[b,s,:]             [B,S] x [B,S,D] -> [B,D]
//   dweights[b,s] += values[b,s,:] · dcontext[b,:],  dvalues[b,s,:] += weights[b,s] dcontext[b,:]
// (the batched matmul [B,1,S] x [B,S,D]). A zero weight (a masked position) adds nothing to the
// context and no gradient to its value row.
Tensor attention_context(const Tensor& weights, const Tensor& values);

// scores[b,s] = keys[b,s,:] · query[b,:]                     [B,S,D] x [B,D] -> [B,S]
//   dkeys[b,s,:] += dscores[b,s] query[b,:],  dquery[b,:] += Σ_s dscores[b,s] keys[b,s,:]
// (the batched matmul [B,S,D] x [B,D,1]): Luong's dot and general scores.
Tensor attention_dot_scores(const Tensor& keys, const Tensor& query);

}  // namespace seqgrad
