// expect: first difference at
// A wrong answer to 10_bahdanau_attention for the grader's tests: Σ_s values, weights ignored.
// Exercise 10: Bahdanau (additive) scores, and the context as a batched matmul.
//
// bahdanau_scores: query_projected [B,A] = W_q q, keys_projected [B,S,A] = W_k k_s (+ b_k),
// v [1,A] (a Linear's weight, A -> 1)  ->  scores [B,S]
//   score_bs = vᵀ tanh(query_projected_b + keys_projected_bs)
// (reshape the query to [B,1,A] so that it broadcasts over S; linear(e, v) gives [B,S,1].)
//
// attention_context: weights [B,S], values [B,S,D]  ->  context [B,D]
//   context_b = Σ_s weights_bs values_bs        = the batched product [B,1,S] x [B,S,D]
// Compose both from library ops (reshape, add, tanh, linear, matmul).
#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor bahdanau_scores(const Tensor& query_projected, const Tensor& keys_projected,
                       const Tensor& v) {
    const int64_t B = keys_projected.size(0), S = keys_projected.size(1);
    const int64_t A = keys_projected.size(2);
    Tensor e = seqgrad::tanh(keys_projected + reshape(query_projected, {B, 1, A}));
    return reshape(linear(e, v), {B, S});
}

Tensor attention_context(const Tensor& weights, const Tensor& values) {
    const int64_t B = values.size(0), S = values.size(1), D = values.size(2);
    return reshape(seqgrad::matmul(reshape(weights * 0 + 1, {B, 1, S}), values), {B, D});
}

}  // namespace seqgrad::exercises
