// Attention: at each decoder step, a query q (the decoder state) scores every source position s
// against its key k_s (the encoder output), the scores become weights by a masked softmax, and
// the context is the weighted sum of the keys.
//
// Shapes (B batch rows, S source positions, Dq query size, Dk key size, A attention size):
//   query           [B, Dq]     one decoder step
//   keys            [B, S, Dk]  encoder outputs (padded to S)
//   keys_projected  [B, S, *]   project_keys(keys): the part of the score that depends only on
//                               the keys, computed ONCE per source batch and passed to forward at
//                               every decoder step
//   mask            [B, S]      1 at padded (invalid) positions, 0 at valid ones; or undefined
//   scores          [B, S]      pre-softmax scores (raw: padded positions hold the score they
//                               would have had; the softmax ignores them)
//   weights         [B, S]      softmax over the valid positions; exactly 0 at padded ones
//   context         [B, Dk]     Σ_s weights[b,s] keys[b,s,:]
//
// Scores:
//   Bahdanau (additive):      score_s = vᵀ tanh(W_q q + W_k k_s)
//   Luong dot:                score_s = qᵀ k_s            (÷ √Dq when scaled)
//   Luong general:            score_s = qᵀ W_a k_s        (÷ √Dq when scaled)
//   Luong concat:             score_s = vᵀ tanh(W [q; k_s]) = vᵀ tanh(W_query q + W_key k_s)
//
// Masking: padded scores are set to −∞ before the softmax, so their weight is exactly 0; every
// gradient that reaches a padded key passes through that weight (or through the score, whose
// gradient is weight·(…) = 0), so it is exactly 0 too. A batch row with no valid position is an
// error (seqgrad::Error naming the row), never NaN.
//
// Two study switches (off by default; docs/claims.md measures what they do):
//   use_mask = false       the padding mask is ignored: padded positions get weight like real
//                          ones (config model.attention_mask). Only to study what the mask buys.
//   position_bias β > 0    score[b,s] += −β·|i_b − j_s| before the mask (model.position_bias):
//                          j_s = s, the source position (0-based), and i_b = t_b / r, where t_b
//                          is the output step of row b (0-based: the step that writes target
//                          token t_b) and r the expected number of target tokens per source
//                          token (model.position_bias_ratio). i_b is output step t scaled by the
//                          length ratio S_b / T_b with T_b estimated as r·S_b, because the true
//                          target length T_b is unknown when decoding: the bias is then the same
//                          in training and decoding. β is a constant: the bias has no gradient
//                          of its own; it moves the softmax's weights towards the diagonal.
//
// Coverage (model.coverage; off by default): the attention remembers where it has looked.
//   coverage        [B, S]      c_{t,s} = Σ_{t'<t} α_{t',s}, the weight source position s has had
//                               at the steps before t (c_0 = 0; padded positions stay 0, their
//                               weight is 0). The caller carries it: c_{t+1} = c_t + α_t.
//   "subtract"  score_s −= β·c_s  (β = coverage_weight): a constant pull away from positions
//               already attended;  d c_s += −β·d score_s.
//   "learned"   Bahdanau (Tu et al. 2016):  score_s = vᵀ tanh(W_q q + W_k k_s + w_c c_s), with
//               w_c = W_cov.weight [A, 1], added to the projected keys inside the tanh;
//               Luong (every score):        score_s += w c_s, w = W_cov.weight [1, 1], a learned
//               scalar (the dot and general scores have no sum inside a tanh to put w_c in).
//               d w_c += Σ_s c_s ⊙ d pre_s;  d c_s += w_cᵀ d pre_s  (Linear's backward).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/module.h"

namespace seqgrad {

// [B, max_len] mask with 1 at positions s >= lengths[b] (padding), 0 elsewhere.
Tensor padding_mask(const std::vector<int32_t>& lengths, int64_t max_len);

// The position bias [B, S]: −β·|output_steps[b] / ratio − s|, a constant (no gradient).
// output_steps [B] holds the output step t_b of each row.
Tensor position_bias_scores(const Tensor& output_steps, int64_t S, double beta, double ratio);

struct AttentionResult {
    Tensor context;  // [B, Dk]
    Tensor weights;  // [B, S]
    Tensor scores;   // [B, S], before masking and softmax (with the position bias and the
                     // coverage term, if on)
};

// model.coverage (see the top of this file).
enum class Coverage { none, subtract, learned };
Coverage parse_coverage(const std::string& name);  // "none", "subtract", "learned"
const char* to_string(Coverage kind);

class Attention : public Module {
  public:
    // The key-only part of the score, [B, S, *]: compute once per source batch, reuse at every
    // decoder step. The default (Luong dot) is the keys themselves.
    virtual Tensor project_keys(const Tensor& keys) const { return keys; }

    // One decoder step. `mask` may be undefined (no padding). `output_steps` [B], the output
    // step of each row, is needed only with a position bias (undefined otherwise). `coverage`
    // [B, S], c_t, is read only with coverage on; undefined means c = 0 (the first step).
    virtual AttentionResult forward(const Tensor& query, const Tensor& keys,
                                    const Tensor& keys_projected, const Tensor& mask,
                                    const Tensor& output_steps = Tensor(),
                                    const Tensor& coverage = Tensor()) const = 0;
    // The weight every step projects the query by (Bahdanau W_q [A, Dq], Luong concat's
    // W[:, :Dq]), or undefined (Luong dot and general: the query is used as it is).
    virtual Tensor query_weight() const { return Tensor(); }
    // The tanh inputs of a score MLP for query [B,Dq], [B,S,A] (Bahdanau, Luong concat), or
    // undefined for scores without one. A diagnostic: no graph is recorded.
    virtual Tensor pre_activations(const Tensor& query, const Tensor& keys_projected) const {
        (void)query, (void)keys_projected;
        return Tensor();
    }

    // Convenience for a single step: projects the keys itself.
    AttentionResult forward(const Tensor& query, const Tensor& keys, const Tensor& mask) const {
        return forward(query, keys, project_keys(keys), mask);
    }

    int64_t query_dim() const { return query_dim_; }
    int64_t key_dim() const { return key_dim_; }

    // The study switches (see the top of this file).
    bool use_mask = true;       // false: padded positions are attended like real ones
    double position_bias = 0;   // β >= 0; 0 = no position bias
    double position_ratio = 1;  // r > 0: expected target tokens per source token

    // Turns coverage on (call once, before training or loading a checkpoint): "subtract" with
    // β >= 0, or "learned", which registers W_cov = Linear(1, A or 1, no bias) from `rng`.
    void set_coverage(Coverage kind, double beta, Rng& rng);
    Coverage coverage_kind() const { return coverage_; }
    double coverage_beta() const { return coverage_beta_; }
    std::unique_ptr<Linear> W_cov;  // "learned" only: w_c [A, 1] (Bahdanau) or w [1, 1] (Luong)

  protected:
    Attention(int64_t query_dim, int64_t key_dim);
    // Shapes of one step's inputs; throws naming `who` and the offending shapes.
    void check_inputs(const char* who, const Tensor& query, const Tensor& keys,
                      const Tensor& keys_projected, int64_t projected_dim,
                      const Tensor& mask) const;
    // scores += the position bias (if on); weights = softmax(scores masked with −∞, unless
    // use_mask is off), context = Σ_s weights_s keys_s (the fused attention_context op, or its
    // composed twin, a batched matmul).
    AttentionResult attend(const Tensor& scores, const Tensor& keys, const Tensor& mask,
                           const Tensor& output_steps, bool fused) const;
    // The coverage's part of the score, added to it in forward (c [B,S]; undefined when c = 0
    // or coverage is off, or when Bahdanau's learned form has put it inside the tanh):
    // subtract −β·c;  learned (Luong) w·c.
    Tensor coverage_scores(const Tensor& coverage) const;
    // c's shape, [B, S] of the keys; throws naming `who` and both shapes.
    void check_coverage(const char* who, const Tensor& keys, const Tensor& coverage) const;
    // The size of W_cov's output: A for an additive score, 1 for a scalar per position.
    virtual int64_t coverage_features() const { return 1; }

  private:
    int64_t query_dim_, key_dim_;
    Coverage coverage_ = Coverage::none;
    double coverage_beta_ = 1;
};

// ---- Bahdanau (additive) attention -----------------------------------------------------------

// How many of n tanh pre-activations are saturated, |x| > threshold (tanh's derivative
// 1 − tanh² < 0.01 at |x| = 3): what saturated_share and the gradient-flow study count.
int64_t count_saturated(const real* pre_activations, int64_t n, double threshold = 3);

class BahdanauAttention : public Attention {
  public:
    // Sub-modules W_q = Linear(query_dim, attn_dim, no bias), W_k = Linear(key_dim, attn_dim),
    // v = Linear(attn_dim, 1, no bias): parameters "W_q.weight", "W_k.weight", "W_k.bias",
    // "v.weight", initialised in that order from `rng`. key_bias false drops W_k's bias
    // (reference implementations differ on it). fused: the fused score and context ops, or
    // (false) their composed twins (use_fused).
    BahdanauAttention(int64_t query_dim, int64_t key_dim, int64_t attn_dim, Rng& rng,
                      bool key_bias = true, bool fused = true);
    BahdanauAttention(int64_t query_dim, int64_t key_dim, Rng& rng)
        : BahdanauAttention(query_dim, key_dim, 128, rng) {}

    using Attention::forward;
    // keys [B, S, Dk] -> W_k keys (+ b_k)  [B, S, A]
    Tensor project_keys(const Tensor& keys) const override;
    AttentionResult forward(const Tensor& query, const Tensor& keys, const Tensor& keys_projected,
                            const Tensor& mask, const Tensor& output_steps = Tensor(),
                            const Tensor& coverage = Tensor()) const override;
    Tensor query_weight() const override;

    // Diagnostics for gradient-flow studies (no graph is recorded):
    // the tanh pre-activations W_q q + W_k k_s, [B, S, A];
    Tensor pre_activations(const Tensor& query, const Tensor& keys_projected) const override;
    // the share of pre-activations with |x| > threshold (tanh saturated: its derivative
    // 1 − tanh² < 0.01 at |x| = 3) over the valid positions of `mask` (all if undefined).
    double saturated_share(const Tensor& query, const Tensor& keys_projected, const Tensor& mask,
                           double threshold = 3) const;

    int64_t attn_dim() const { return v.in_features(); }

    Linear W_q, W_k, v;
    // Scores and context through the fused ops (autograd/fused_attention.h) or their composed
    // twins (below): the same numbers, the composed ones are the textbook form. Set by the
    // constructor's `fused`.
    bool use_fused;

  protected:
    int64_t coverage_features() const override { return attn_dim(); }
};

// ---- Luong (multiplicative) attention --------------------------------------------------------

enum class LuongScore { dot, general, concat };

class LuongAttention : public Attention {
  public:
    // dot:     no parameters; needs query_dim == key_dim.
    // general: W_a = Linear(key_dim, query_dim, no bias), "W_a.weight"; project_keys = W_a keys.
    // concat:  W = Linear(query_dim + key_dim, attn_dim, no bias), v = Linear(attn_dim, 1, no
    //          bias): "W.weight", "v.weight". W's columns [0, Dq) act on q, [Dq, Dq+Dk) on k, so
    //          project_keys computes the key half once.
    // scaled divides dot and general scores by √query_dim (not allowed for concat). fused: the
    // fused score and context ops, or (false) their composed twins (use_fused).
    LuongAttention(LuongScore kind, int64_t query_dim, int64_t key_dim, Rng& rng,
                   bool scaled = false, int64_t attn_dim = 128, bool fused = true);

    using Attention::forward;
    // dot: keys;  general: W_a keys [B, S, Dq];  concat: W_key keys [B, S, A]
    Tensor project_keys(const Tensor& keys) const override;
    AttentionResult forward(const Tensor& query, const Tensor& keys, const Tensor& keys_projected,
                            const Tensor& mask, const Tensor& output_steps = Tensor(),
                            const Tensor& coverage = Tensor()) const override;
    Tensor query_weight() const override;
    // concat: W_query q + W_key k_s [B,S,A] (the tanh's inputs); undefined for dot and general
    Tensor pre_activations(const Tensor& query, const Tensor& keys_projected) const override;

    LuongScore kind() const { return kind_; }
    bool scaled() const { return scaled_; }

    std::unique_ptr<Linear> W_a;  // general only
    std::unique_ptr<Linear> W;    // concat only
    std::unique_ptr<Linear> v;    // concat only
    // Scores and context through the fused ops or their composed twins (as Bahdanau's).
    bool use_fused;

  private:
    int64_t projected_dim() const;
    LuongScore kind_;
    bool scaled_;
};

const char* to_string(LuongScore kind);

// ---- the composed twins of the kernels in autograd/fused_attention.h ------------------------

// vᵀ tanh(query_projected + keys_projected): add (broadcast over S), tanh, linear.
//   [B, A], [B, S, A], [1, A] -> [B, S]
Tensor additive_attention_scores_composed(const Tensor& query_projected,
                                          const Tensor& keys_projected, const Tensor& v);
// Σ_s weights[b,s] values[b,s,:]: the batched matmul [B,1,S] x [B,S,D].   -> [B, D]
Tensor attention_context_composed(const Tensor& weights, const Tensor& values);
// keys[b,s,:] · query[b,:]: the batched matmul [B,S,D] x [B,D,1].          -> [B, S]
Tensor attention_dot_scores_composed(const Tensor& keys, const Tensor& query);

}  // namespace seqgrad
