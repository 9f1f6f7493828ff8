#include "seqgrad/layers/attention.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "seqgrad/autograd/fused_attention.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"

namespace seqgrad {

Tensor padding_mask(const std::vector<int32_t>& lengths, int64_t max_len) {
    const int64_t B = int64_t(lengths.size());
    Tensor mask = Tensor::zeros({B, max_len});
    for (int64_t b = 0; b < B; ++b) {
        if (lengths[b] < 0 || lengths[b] > max_len)
            throw Error(fmt::format("padding_mask: length {} of row {} is outside [0, {}]",
                                    lengths[b], b, max_len));
        for (int64_t s = lengths[b]; s < max_len; ++s) mask.data()[b * max_len + s] = 1;
    }
    return mask;
}

// bias[b,s] = −β·|t_b / r − s|   (a constant: no gradient to record)
Tensor position_bias_scores(const Tensor& output_steps, int64_t S, double beta, double ratio) {
    if (!output_steps.defined() || output_steps.rank() != 1)
        throw Error(fmt::format(
            "attention position bias: output_steps {} must be [B] (the output step of each row)",
            output_steps.defined() ? output_steps.shape().str() : "(undefined)"));
    if (!(ratio > 0) || !(beta >= 0))
        throw Error(fmt::format("attention position bias: beta {} must be >= 0 and ratio {} > 0",
                                beta, ratio));
    const int64_t B = output_steps.size(0);
    Tensor bias = Tensor::empty({B, S});
    for (int64_t b = 0; b < B; ++b) {
        const double i = double(output_steps.data()[b]) / ratio;
        for (int64_t s = 0; s < S; ++s) bias.data()[b * S + s] = real(-beta * std::fabs(i - s));
    }
    return bias;
}

const char* to_string(LuongScore kind) {
    switch (kind) {
        case LuongScore::dot:
            return "dot";
        case LuongScore::general:
            return "general";
        case LuongScore::concat:
            return "concat";
    }
    return "?";
}

Coverage parse_coverage(const std::string& name) {
    if (name == "none") return Coverage::none;
    if (name == "subtract") return Coverage::subtract;
    if (name == "learned") return Coverage::learned;
    throw Error(fmt::format(
        "attention coverage: \"{}\": expected \"none\", \"subtract\" or \"learned\"", name));
}

const char* to_string(Coverage kind) {
    switch (kind) {
        case Coverage::none:
            return "none";
        case Coverage::subtract:
            return "subtract";
        case Coverage::learned:
            return "learned";
    }
    return "?";
}

// ---- shared by every kind --------------------------------------------------------------------

Attention::Attention(int64_t query_dim, int64_t key_dim)
    : query_dim_(query_dim), key_dim_(key_dim) {
    if (query_dim < 1 || key_dim < 1)
        throw Error(
            fmt::format("attention: query_dim {} and key_dim {} must be >= 1", query_dim, key_dim));
}

void Attention::check_inputs(const char* who, const Tensor& query, const Tensor& keys,
                             const Tensor& keys_projected, int64_t projected_dim,
                             const Tensor& mask) const {
    const Shape &q = query.shape(), &k = keys.shape();
    if (q.rank() != 2 || k.rank() != 3 || q[0] != k[0] || q[1] != query_dim_ || k[2] != key_dim_ ||
        k[1] < 1)
        throw Error(fmt::format("{}: query {} and keys {}: expected [B,{}] and [B,S,{}] (S >= 1)",
                                who, q.str(), k.str(), query_dim_, key_dim_));
    const Shape& p = keys_projected.shape();
    if (p.rank() != 3 || p[0] != k[0] || p[1] != k[1] || p[2] != projected_dim)
        throw Error(fmt::format(
            "{}: keys_projected {} for keys {}: expected [{},{},{}] (from project_keys)", who,
            p.str(), k.str(), k[0], k[1], projected_dim));
    if (!mask.defined()) return;
    if (mask.shape() != Shape{k[0], k[1]})
        throw Error(fmt::format("{}: mask {} for keys {}: expected [{},{}]", who,
                                mask.shape().str(), k.str(), k[0], k[1]));
    const int64_t S = k[1];
    for (int64_t b = 0; b < k[0]; ++b) {
        int64_t valid = 0;
        for (int64_t s = 0; s < S; ++s) valid += mask.data()[b * S + s] == 0;
        if (valid == 0)
            throw Error(fmt::format(
                "{}: batch row {} has no valid position (all {} keys are masked as padding; a "
                "source sentence of length 0?)",
                who, b, S));
    }
}

void Attention::set_coverage(Coverage kind, double beta, Rng& rng) {
    if (coverage_ != Coverage::none || W_cov)
        throw Error("attention: set_coverage called twice (coverage is set once, at construction)");
    if (!(beta >= 0)) throw Error(fmt::format("attention coverage: β {} must be >= 0", beta));
    coverage_ = kind;
    coverage_beta_ = beta;
    if (kind == Coverage::learned) {
        W_cov = std::make_unique<Linear>(1, coverage_features(), false, rng);
        register_module("W_cov", *W_cov);
    }
}

void Attention::check_coverage(const char* who, const Tensor& keys, const Tensor& coverage) const {
    if (!coverage.defined() || coverage_ == Coverage::none) return;
    if (coverage.shape() != Shape{keys.size(0), keys.size(1)})
        throw Error(fmt::format("{}: coverage {} for keys {}: expected [{},{}] (c_s per position)",
                                who, coverage.shape().str(), keys.shape().str(), keys.size(0),
                                keys.size(1)));
}

// subtract: −β·c;  learned (a scalar per position): w·c = W_cov(c[..., None])
Tensor Attention::coverage_scores(const Tensor& coverage) const {
    if (!coverage.defined() || coverage_ == Coverage::none) return Tensor();
    if (coverage_ == Coverage::subtract) return mul(coverage, real(-coverage_beta_));
    const int64_t B = coverage.size(0), S = coverage.size(1);
    return reshape(W_cov->forward(reshape(coverage, {B, S, 1})), {B, S});
}

// scores += −β|i − j| (if on);  weights = softmax(scores with −∞ at masked positions);
// context = Σ_s weights_s keys_s
AttentionResult Attention::attend(const Tensor& scores, const Tensor& keys, const Tensor& mask,
                                  const Tensor& output_steps, bool fused) const {
    Tensor biased = scores;
    if (position_bias != 0) {
        if (output_steps.defined() && output_steps.shape() != Shape{scores.size(0)})
            throw Error(
                fmt::format("attention position bias: output_steps {} for scores {}: expected [{}]",
                            output_steps.shape().str(), scores.shape().str(), scores.size(0)));
        biased = add(scores, position_bias_scores(output_steps, scores.size(1), position_bias,
                                                  position_ratio));
    }
    Tensor masked_scores = use_mask && mask.defined()
                               ? masked_fill(biased, mask, -std::numeric_limits<real>::infinity())
                               : biased;
    Tensor weights = softmax(masked_scores);  // [B, S]
    Tensor context = fused ? attention_context(weights, keys)
                           : attention_context_composed(weights, keys);  // [B, Dk]
    return {context, weights, biased};
}

// context = weights [B,1,S] · values [B,S,D]
Tensor attention_context_composed(const Tensor& weights, const Tensor& values) {
    const int64_t B = values.size(0), S = values.size(1), D = values.size(2);
    return reshape(matmul(reshape(weights, {B, 1, S}), values), {B, D});
}

// scores = keys [B,S,D] · query [B,D,1]
Tensor attention_dot_scores_composed(const Tensor& keys, const Tensor& query) {
    const int64_t B = keys.size(0), S = keys.size(1), D = keys.size(2);
    return reshape(matmul(keys, reshape(query, {B, D, 1})), {B, S});
}

// score[b,s] = Σ_a v[a] tanh(qp[b,a] + kp[b,s,a]), composed: add (broadcast), tanh, linear
Tensor additive_attention_scores_composed(const Tensor& query_projected,
                                          const Tensor& keys_projected, const Tensor& v) {
    const int64_t B = keys_projected.size(0), S = keys_projected.size(1);
    const int64_t A = keys_projected.size(2);
    Tensor pre_activations = add(keys_projected, reshape(query_projected, {B, 1, A}));  // [B,S,A]
    Tensor v_row = reshape(v, {1, A});
    return reshape(linear(tanh(pre_activations), v_row), {B, S});  // [B,S,1] -> [B,S]
}

// ---- Bahdanau --------------------------------------------------------------------------------

BahdanauAttention::BahdanauAttention(int64_t query_dim, int64_t key_dim, int64_t attn_dim, Rng& rng,
                                     bool key_bias, bool fused)
    : Attention(query_dim, key_dim),
      W_q(query_dim, attn_dim, false, rng),
      W_k(key_dim, attn_dim, key_bias, rng),
      v(attn_dim, 1, false, rng),
      use_fused(fused) {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
    register_module("v", v);
}

// keys [B,S,Dk] -> keys_projected [B,S,A] = keys W_kᵀ (+ b_k)   (one gemm over B·S rows)
Tensor BahdanauAttention::project_keys(const Tensor& keys) const {
    if (keys.rank() != 3)
        throw Error(fmt::format("BahdanauAttention: keys {} must be [B,S,{}]", keys.shape().str(),
                                key_dim()));
    TapeScope scope("attention");
    return W_k.forward(keys);
}

Tensor BahdanauAttention::query_weight() const {
    return W_q.weight;
}

// score_s = vᵀ tanh(W_q q + keys_projected_s)                      (no coverage)
//         = vᵀ tanh(W_q q + keys_projected_s + w_c c_s)              (learned coverage)
//         = vᵀ tanh(W_q q + keys_projected_s) − β c_s                (subtracted coverage)
AttentionResult BahdanauAttention::forward(const Tensor& query, const Tensor& keys,
                                           const Tensor& keys_projected, const Tensor& mask,
                                           const Tensor& output_steps,
                                           const Tensor& coverage) const {
    check_inputs("BahdanauAttention", query, keys, keys_projected, attn_dim(), mask);
    check_coverage("BahdanauAttention", keys, coverage);
    TapeScope scope("attention");
    Tensor query_projected = W_q.forward(query);  // [B, A]
    Tensor keys_part = keys_projected;            // [B, S, A]
    const bool inside = coverage_kind() == Coverage::learned && coverage.defined();
    if (inside) {  // + w_c c_s: W_cov(c[..., None]), [B, S, 1] -> [B, S, A]
        const int64_t B = coverage.size(0), S = coverage.size(1);
        keys_part = add(keys_projected, W_cov->forward(reshape(coverage, {B, S, 1})));
    }
    Tensor scores = use_fused
                        ? additive_attention_scores(query_projected, keys_part, v.weight)
                        : additive_attention_scores_composed(query_projected, keys_part, v.weight);
    if (!inside && coverage.defined() && coverage_kind() == Coverage::subtract)
        scores = add(scores, coverage_scores(coverage));
    return attend(scores, keys, mask, output_steps, use_fused);
}

Tensor BahdanauAttention::pre_activations(const Tensor& query, const Tensor& keys_projected) const {
    NoGradGuard no_grad;
    const int64_t B = keys_projected.size(0), A = attn_dim();
    return add(keys_projected, reshape(W_q.forward(query), {B, 1, A}));
}

int64_t count_saturated(const real* pre_activations, int64_t n, double threshold) {
    int64_t saturated = 0;
    for (int64_t i = 0; i < n; ++i) saturated += std::fabs(double(pre_activations[i])) > threshold;
    return saturated;
}

double BahdanauAttention::saturated_share(const Tensor& query, const Tensor& keys_projected,
                                          const Tensor& mask, double threshold) const {
    Tensor x = pre_activations(query, keys_projected);
    const int64_t B = x.size(0), S = x.size(1), A = x.size(2);
    if (mask.defined() && mask.shape() != Shape{B, S})
        throw Error(fmt::format("saturated_share: mask {} for pre-activations {}",
                                mask.shape().str(), x.shape().str()));
    int64_t saturated = 0, total = 0;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
            if (mask.defined() && mask.data()[b * S + s] != 0) continue;
            saturated += count_saturated(x.data() + (b * S + s) * A, A, threshold);
            total += A;
        }
    return total ? double(saturated) / double(total) : 0.0;
}

// ---- Luong -----------------------------------------------------------------------------------

Tensor LuongAttention::pre_activations(const Tensor& query, const Tensor& keys_projected) const {
    if (kind_ != LuongScore::concat) return Tensor();
    NoGradGuard no_grad;
    const int64_t B = keys_projected.size(0), A = W->out_features();
    const Tensor query_projected = linear(query, slice(W->weight, 1, 0, query_dim()));  // [B,A]
    return add(keys_projected, reshape(query_projected, {B, 1, A}));
}

LuongAttention::LuongAttention(LuongScore kind, int64_t query_dim, int64_t key_dim, Rng& rng,
                               bool scaled, int64_t attn_dim, bool fused)
    : Attention(query_dim, key_dim), use_fused(fused), kind_(kind), scaled_(scaled) {
    switch (kind) {
        case LuongScore::dot:
            if (query_dim != key_dim)
                throw Error(fmt::format(
                    "LuongAttention(dot): query_dim {} != key_dim {}; the dot score qᵀk needs "
                    "equal sizes (use 'general' or 'concat')",
                    query_dim, key_dim));
            break;
        case LuongScore::general:
            W_a = std::make_unique<Linear>(key_dim, query_dim, false, rng);
            register_module("W_a", *W_a);
            break;
        case LuongScore::concat:
            if (scaled)
                throw Error("LuongAttention(concat): 'scaled' applies to dot and general scores");
            W = std::make_unique<Linear>(query_dim + key_dim, attn_dim, false, rng);
            v = std::make_unique<Linear>(attn_dim, 1, false, rng);
            register_module("W", *W);
            register_module("v", *v);
            break;
    }
}

int64_t LuongAttention::projected_dim() const {
    switch (kind_) {
        case LuongScore::dot:
            return key_dim();
        case LuongScore::general:
            return query_dim();
        case LuongScore::concat:
            return W->out_features();
    }
    return 0;
}

// dot: keys;  general: keys W_aᵀ [B,S,Dq];  concat: keys W_keyᵀ [B,S,A] with W_key = W[:, Dq:]
Tensor LuongAttention::project_keys(const Tensor& keys) const {
    if (keys.rank() != 3 || keys.size(2) != key_dim())
        throw Error(fmt::format("LuongAttention({}): keys {} must be [B,S,{}]", to_string(kind_),
                                keys.shape().str(), key_dim()));
    TapeScope scope("attention");
    switch (kind_) {
        case LuongScore::dot:
            return keys;
        case LuongScore::general:
            return W_a->forward(keys);
        case LuongScore::concat:
            return linear(keys, slice(W->weight, 1, query_dim(), query_dim() + key_dim()));
    }
    return keys;
}

Tensor LuongAttention::query_weight() const {
    if (kind_ != LuongScore::concat) return Tensor();
    return slice(W->weight, 1, 0, query_dim());  // W_query = W[:, :Dq], [A, Dq]
}

// dot/general: score[b,s] = keys_projected[b,s,:] · q[b,:]  (÷ √Dq when scaled)
// concat:      score[b,s] = vᵀ tanh(W_query q + keys_projected[b,s,:]),  W_query = W[:, :Dq]
//              + the coverage term: −β c_s (subtract) or w c_s (learned)
AttentionResult LuongAttention::forward(const Tensor& query, const Tensor& keys,
                                        const Tensor& keys_projected, const Tensor& mask,
                                        const Tensor& output_steps, const Tensor& coverage) const {
    const char* who = kind_ == LuongScore::dot       ? "LuongAttention(dot)"
                      : kind_ == LuongScore::general ? "LuongAttention(general)"
                                                     : "LuongAttention(concat)";
    check_inputs(who, query, keys, keys_projected, projected_dim(), mask);
    check_coverage(who, keys, coverage);
    TapeScope scope("attention");
    const int64_t Dq = query_dim();
    Tensor scores;
    if (kind_ == LuongScore::concat) {
        Tensor query_projected = linear(query, query_weight());  // [B, A]
        scores = use_fused ? additive_attention_scores(query_projected, keys_projected, v->weight)
                           : additive_attention_scores_composed(query_projected, keys_projected,
                                                                v->weight);
    } else {
        scores = use_fused ? attention_dot_scores(keys_projected, query)
                           : attention_dot_scores_composed(keys_projected, query);
        if (scaled_) scores = mul(scores, real(1 / std::sqrt(double(Dq))));
    }
    const Tensor covered = coverage_scores(coverage);
    if (covered.defined()) scores = add(scores, covered);
    return attend(scores, keys, mask, output_steps, use_fused);
}

}  // namespace seqgrad
