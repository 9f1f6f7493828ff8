// Fused additive (Bahdanau) attention scores, with a hand-written backward.
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
// pass over [B, S, A] instead of four and keeps only t for the backward.
#pragma once

#include "autograd/tensor.h"

namespace seqgrad {

Tensor additive_attention_scores(const Tensor& query_projected, const Tensor& keys_projected,
                                 const Tensor& v);

}  // namespace seqgrad
