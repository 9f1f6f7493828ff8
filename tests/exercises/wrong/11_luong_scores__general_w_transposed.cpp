// expect: W_a transposed
// A wrong answer to 11_luong_scores for the grader's tests: linear(keys, W_aᵀ).
// Exercise 11: Luong (multiplicative) scores: dot, general, and their scaled forms.
//
// luong_dot_scores: query [B,D], keys [B,S,D]  ->  scores [B,S]
//   score_bs = q_bᵀ k_bs                     (÷ √D when scaled)
//   (the batched product keys [B,S,D] x query [B,D,1])
// luong_general_scores: query [B,Dq], keys [B,S,Dk], W_a [Dq,Dk]  ->  scores [B,S]
//   score_bs = q_bᵀ W_a k_bs                 (÷ √Dq when scaled)
//   (project the keys once, W_a k = linear(keys, W_a) [B,S,Dq], then as dot)
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor luong_dot_scores(const Tensor& query, const Tensor& keys, bool scaled) {
    const int64_t B = keys.size(0), S = keys.size(1), D = keys.size(2);
    Tensor scores = reshape(seqgrad::matmul(keys, reshape(query, {B, D, 1})), {B, S});
    return scaled ? scores * real(1 / std::sqrt(double(D))) : scores;
}

Tensor luong_general_scores(const Tensor& query, const Tensor& keys, const Tensor& W_a,
                            bool scaled) {
    return luong_dot_scores(query, linear(keys, transpose(W_a)), scaled);
}

}  // namespace seqgrad::exercises
