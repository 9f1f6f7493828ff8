// Exercises 16-17: layer normalisation (forward and its backward by hand, one op) and multi-head
// scaled dot-product attention with the key-padding and causal masks.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "apps/exercises/grader.h"
#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/autograd/fused_layer_norm.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/multihead_attention.h"

namespace seqgrad::grading {
namespace {

// ---- 16: layer norm ---------------------------------------------------------------------------

// The usual slips, each computed by hand in double so that the grader can name it.
struct LayerNormSlip {
    bool unbiased = false;          // σ² = Σ (x − μ)² / (E − 1)
    bool eps_outside = false;       // r = 1 / (√σ² + ε)
    bool swapped = false;           // y = x̂ ⊙ bias + weight
    bool no_mean_term = false;      // dx without − mean(ĝ)
    bool no_variance_term = false;  // dx without − x̂ mean(ĝ x̂)
    bool dy_for_g = false;          // ĝ = dy instead of dy ⊙ w
    bool dw_with_x = false;         // dw = Σ dy x instead of Σ dy x̂
};
struct LayerNormValues {
    std::vector<double> y, dx, dw;
};

// y, and dx, dw under the upstream gradient dy (autograd/fused_layer_norm.h has the maths)
LayerNormValues layer_norm_by_hand(const Tensor& x, const Tensor& w, const Tensor& b, double eps,
                                   const std::vector<double>& dy, const LayerNormSlip& slip) {
    const int64_t E = x.size(-1), rows = x.numel() / E;
    LayerNormValues out{std::vector<double>(size_t(x.numel())),
                        std::vector<double>(size_t(x.numel())), std::vector<double>(size_t(E))};
    for (int64_t i = 0; i < rows; ++i) {
        const real* xi = x.data() + i * E;
        double mu = 0, squares = 0;
        for (int64_t j = 0; j < E; ++j) mu += xi[j] / double(E);
        for (int64_t j = 0; j < E; ++j) squares += (xi[j] - mu) * (xi[j] - mu);
        const double var = squares / double(slip.unbiased ? E - 1 : E);
        const double r = slip.eps_outside ? 1 / (std::sqrt(var) + eps) : 1 / std::sqrt(var + eps);
        std::vector<double> xhat(static_cast<size_t>(E)), g(static_cast<size_t>(E));
        double mean_g = 0, mean_gx = 0;
        for (int64_t j = 0; j < E; ++j) {
            const size_t k = size_t(i * E + j);
            xhat[size_t(j)] = (xi[j] - mu) * r;
            out.y[k] = slip.swapped ? xhat[size_t(j)] * b.data()[j] + w.data()[j]
                                    : xhat[size_t(j)] * w.data()[j] + b.data()[j];
            g[size_t(j)] = slip.dy_for_g ? dy[k] : dy[k] * w.data()[j];
            mean_g += g[size_t(j)] / double(E);
            mean_gx += g[size_t(j)] * xhat[size_t(j)] / double(E);
            out.dw[size_t(j)] += dy[k] * (slip.dw_with_x ? xi[j] : xhat[size_t(j)]);
        }
        for (int64_t j = 0; j < E; ++j)
            out.dx[size_t(i * E + j)] =
                r * (g[size_t(j)] - (slip.no_mean_term ? 0 : mean_g) -
                     (slip.no_variance_term ? 0 : xhat[size_t(j)] * mean_gx));
    }
    return out;
}

struct LayerNormCase {
    std::string label;
    Tensor x;
    double eps;
};

std::vector<LayerNormCase> layer_norm_cases(Grader& g, Rng& rng) {
    const int64_t B = g.random_size(rng, 1, 4), E = g.random_size(rng, 2, 7);
    const int64_t T = g.random_size(rng, 1, 3), E3 = g.random_size(rng, 2, 6);
    Tensor constant_row = random_leaf(rng, {2, 5});
    for (int64_t j = 0; j < 5; ++j) constant_row.data()[j] = real(0.7);
    return {
        {fmt::format("[{},{}]", B, E), random_leaf(rng, {B, E}), 1e-5},
        {fmt::format("[2,{},{}], x in [−3, 5]", T, E3), random_leaf(rng, {2, T, E3}, -3, 5), 1e-5},
        {"E = 1", random_leaf(rng, {3, 1}), 1e-5},
        {"row 0 constant (σ² = 0), ε = 0.1", constant_row, 0.1}};
}

// The known slips' outputs and gradients, computed by hand, as the case's alternatives.
void add_layer_norm_slips(GradCase& c, const LayerNormCase& lc, const Tensor& w, const Tensor& b) {
    const std::vector<double> dy = values(upstream_gradient(lc.x.shape()));
    auto slip = [&](LayerNormSlip s) { return layer_norm_by_hand(lc.x, w, b, lc.eps, dy, s); };
    c.forward_context.alternatives = {
        {"σ² divided by E − 1 (the unbiased variance): layer norm divides by E, as "
         "PyTorch's nn.LayerNorm",
         slip({true}).y},
        {"ε added outside the square root: r = 1 / √(σ² + ε), not 1 / (√σ² + ε)",
         slip({false, true}).y},
        {"weight and bias swapped: y = x̂ ⊙ weight + bias", slip({false, false, true}).y}};
    CompareContext dx, dw;
    LayerNormSlip no_mean, no_var, neither, dy_g, dw_x;
    no_mean.no_mean_term = true;
    no_var.no_variance_term = true;
    neither.no_mean_term = neither.no_variance_term = true;
    dy_g.dy_for_g = true;
    dw_x.dw_with_x = true;
    dx.alternatives = {
        {"dx = r ĝ: μ and σ² depend on x too; the gradient through them "
         "(− mean_k ĝ_k − x̂_j mean_k ĝ_k x̂_k) is missing",
         slip(neither).dx},
        {"dx is missing the term − mean_k ĝ_k: the gradient through the mean μ", slip(no_mean).dx},
        {"dx is missing the term − x̂_j mean_k(ĝ_k x̂_k): the gradient through the variance σ²",
         slip(no_var).dx},
        {"dx used dy where ĝ = dy ⊙ weight belongs (y = x̂ ⊙ weight + bias)", slip(dy_g).dx}};
    dw.alternatives = {
        {"dweight summed dy ⊙ x: it is Σ_rows dy ⊙ x̂, the NORMALISED x", slip(dw_x).dw}};
    c.grad_contexts = {dx, dw};
}

void check_layer_norm_case(Grader& g, Rng& rng, const LayerNormCase& lc) {
    const int64_t e = lc.x.size(-1);
    Tensor w = random_leaf(rng, {e}, 0.5, 1.5), b = random_leaf(rng, {e});
    const real eps = real(lc.eps);
    GradCase c{
        lc.label + (lc.eps != 1e-5 ? "" : ", ε = 1e-5"),
        {lc.x, w, b},
        {"x", "weight", "bias"},
        [&g, eps](const std::vector<Tensor>& v) { return g.t.layer_norm(v[0], v[1], v[2], eps); },
        [eps](const std::vector<Tensor>& v) { return seqgrad::layer_norm(v[0], v[1], v[2], eps); }};
    c.output = "y";
    add_layer_norm_slips(c, lc, w, b);
    c.forward_context.nan_hint = "σ² = Σ (x − μ)² / E; dividing by E − 1 = 0 when E = 1 gives 0/0";
    check_gradients(g, c);
}

void check_layer_norm_is_one_node(Grader& g, Rng& rng) {
    g.check("one graph node whose parents are x, weight, bias", [&]() -> std::string {
        Tensor x = random_leaf(rng, {2, 3}), w = random_leaf(rng, {3}), b = random_leaf(rng, {3});
        g.phase("forward");
        Tensor y = g.t.layer_norm(x, w, b, real(1e-5));
        const auto& parents = y.node().parents;
        if (parents.size() != 3 || parents[0] != x.node_ptr() || parents[1] != w.node_ptr() ||
            parents[2] != b.node_ptr())
            return fmt::format(
                "the result's op '{}' has {} parents: layer norm is ONE op here, recorded with "
                "record(y, \"layer_norm\", {{x, weight, bias}}, backward)",
                y.op_name() ? y.op_name() : "?", parents.size());
        return "";
    });
}

void grade_layer_norm(Grader& g) {
    Rng rng = g.rng(16);
    for (const LayerNormCase& lc : layer_norm_cases(g, rng)) check_layer_norm_case(g, rng, lc);
    check_layer_norm_is_one_node(g, rng);
}

// ---- 17: multi-head attention -----------------------------------------------------------------

const real kInf = std::numeric_limits<real>::infinity();

// [B,T,E] -> [B,h,T,d] with head i taking dims i, i + h, i + 2h ... (a reshape to [B,T,d,h])
std::vector<double> interleaved_heads(const Tensor& x, int64_t h) {
    const int64_t B = x.size(0), T = x.size(1), E = x.size(2), d = E / h;
    std::vector<double> out(size_t(x.numel()));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < h; ++i)
            for (int64_t t = 0; t < T; ++t)
                for (int64_t j = 0; j < d; ++j)
                    out[size_t(((b * h + i) * T + t) * d + j)] =
                        x.data()[(b * T + t) * E + j * h + i];
    return out;
}

void grade_heads(Grader& g, Rng& rng) {
    const int64_t B = g.random_size(rng, 1, 3), T = g.random_size(rng, 2, 4),
                  h = g.random_size(rng, 2, 3), d = g.random_size(rng, 2, 3), E = h * d;
    GradCase split{fmt::format("split_heads [{},{},{}] into h = {}", B, T, E, h),
                   {random_leaf(rng, {B, T, E})},
                   {"x"},
                   [&g, h](const std::vector<Tensor>& v) { return g.t.split_heads(v[0], h); },
                   [h, d](const std::vector<Tensor>& v) {
                       return transpose(reshape(v[0], {v[0].size(0), v[0].size(1), h, d}), 1, 2);
                   }};
    split.output = "heads [B,h,T,d]";
    Tensor x = split.inputs[0].detach();
    split.forward_context.alternatives = {
        {fmt::format("reshaped [B,T,E] straight to [B,h,T,d]: head i must take dims i·d .. "
                     "i·d + d − 1 of EVERY position; reshape to [B,T,h,d], then transpose(1, 2)"),
         values(reshape(x, {B, h, T, d}))},
        {"head i took every h-th dim (i, i + h, ...): reshape to [B,T,h,d] (heads outside, a "
         "head's d dims inside), then transpose(1, 2)",
         interleaved_heads(x, h)}};
    check_gradients(g, split);
    GradCase merge{fmt::format("merge_heads [{},{},{},{}]", B, h, T, d),
                   {random_leaf(rng, {B, h, T, d})},
                   {"x"},
                   [&g](const std::vector<Tensor>& v) { return g.t.merge_heads(v[0]); },
                   [E](const std::vector<Tensor>& v) {
                       return reshape(transpose(v[0], 1, 2), {v[0].size(0), v[0].size(2), E});
                   }};
    merge.output = "merged [B,T,E]";
    merge.forward_context.alternatives = {
        {"reshaped [B,h,T,d] straight to [B,T,E]: transpose(1, 2) back to [B,T,h,d] first, "
         "then reshape",
         values(reshape(merge.inputs[0].detach(), {B, T, E}))}};
    check_gradients(g, merge);
}

void grade_causal_mask(Grader& g) {
    for (auto [T, S] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {2, 5}, {1, 3}}) {
        g.check(fmt::format("causal_mask T={} S={}", T, S), [&, T = T, S = S]() -> std::string {
            g.phase("forward");
            Tensor got = g.t.causal_mask(T, S);
            Tensor want = seqgrad::causal_mask(T, S);
            if (!got.defined() || got.shape() != want.shape())
                return fmt::format("shape {}, expected [{},{}] (queries × keys)",
                                   got.defined() ? got.shape().str() : "undefined", T, S);
            std::vector<double> diagonal, top_left, inverted;
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j < S; ++j) {
                    diagonal.push_back(j >= i + S - T);
                    top_left.push_back(j > i);
                    inverted.push_back(j <= i + S - T);
                }
            CompareContext c;
            c.shape = {T, S};
            c.alternatives = {
                {"off by one: query i must see key i + S − T (itself when T = S); mask j > i + "
                 "(S − T), not j ≥",
                 diagonal},
                {"aligned top-left (j > i): the T queries are the LAST T of the S positions, so "
                 "query i sees keys 0 .. i + S − T",
                 top_left},
                {"inverted: 1 marks the keys a query must NOT see (the future)", inverted}};
            return compare("mask[query, key]", values(got), values(want), c);
        });
    }
}

// Which keys each query attends to: q = 0 gives every visible key the same score, and values
// v_j = one-hot(j) make the output row o_i the weights a_i themselves.
struct VisibleCase {
    std::string label;
    int64_t T, S;
    std::vector<int32_t> lengths;  // empty: no padding
    bool causal;
};

// The weights `a` [S] of query `who`, which sees keys 0..last of the `length` real ones: ""
// when the keys after `last` get exactly 0 and the others share the weight equally (q = 0).
std::string check_query_weights(const real* a, int64_t S, int64_t last, int64_t length, bool causal,
                                const std::string& who) {
    double total = 0;
    for (int64_t j = 0; j < S; ++j) {
        if (std::isnan(a[j])) return fmt::format("{}: NaN weight for key {}", who, j);
        total += a[j];
    }
    for (int64_t j = last + 1; j < S; ++j)
        if (a[j] != 0)
            return fmt::format(
                "{} gives weight {:.6g} to key {}, which {}; it must get exactly 0 "
                "(−∞ before the softmax)",
                who, a[j], j,
                j >= length ? fmt::format("is padding (length {})", length)
                            : fmt::format("is in its future (it sees keys 0..{})", last));
    for (int64_t j = 0; j <= last; ++j)
        if (a[j] == 0)
            return fmt::format("{} gives no weight to key {}, which it sees (keys 0..{}){}", who, j,
                               last,
                               causal ? ": is the causal mask off by one (j ≥ i + S − T "
                                        "masked instead of j > i + S − T)?"
                                      : "");
    for (int64_t j = 0; j <= last; ++j)
        if (std::fabs(a[j] - 1.0 / double(last + 1)) > 1e-9)
            return fmt::format(
                "{} gives weight {:.6g} to key {}, expected {:.6g}: with equal scores "
                "its weight is shared equally by the keys it sees, 0..{}{}",
                who, a[j], j, 1.0 / double(last + 1), last,
                std::fabs(total - 1) > 1e-9
                    ? fmt::format(". Its weights sum to {:.6g}, not 1: the mask was "
                                  "applied after the softmax, so the masked keys still "
                                  "took their share of the denominator",
                                  total)
                    : "");
    return "";
}

std::string check_visible_keys(Grader& g, const VisibleCase& vc) {
    const int64_t B = vc.lengths.empty() ? 1 : int64_t(vc.lengths.size()), H = 2, d = 2;
    const int64_t T = vc.T, S = vc.S;
    Tensor q = Tensor::zeros({B, H, T, d}), k = Tensor::zeros({B, H, S, d});
    Tensor v = Tensor::zeros({B, H, S, S});
    for (int64_t bh = 0; bh < B * H; ++bh)
        for (int64_t j = 0; j < S; ++j) v.data()[(bh * S + j) * S + j] = 1;
    Tensor mask = vc.lengths.empty() ? Tensor() : seqgrad::padding_mask(vc.lengths, S);
    g.phase("forward");
    Tensor o;
    try {
        o = g.t.scaled_dot_product_attention(q, k, v, mask, vc.causal);
    } catch (const practice::NotImplemented&) {
        throw;
    } catch (const std::exception& e) {
        return fmt::format(
            "threw an exception: {}. Every query sees at least key 0 here; is a query masked from "
            "every key (a causal mask off by one masks query 0 from key 0)?",
            e.what());
    }
    g.phase("checking");
    if (!o.defined() || o.shape() != Shape({B, H, T, S}))
        return fmt::format("output {}, expected [{},{},{},{}] (v is [B,h,S,S] here)",
                           o.defined() ? o.shape().str() : "undefined", B, H, T, S);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t hh = 0; hh < H; ++hh)
            for (int64_t i = 0; i < T; ++i) {
                const int64_t length = vc.lengths.empty() ? S : vc.lengths[size_t(b)];
                const int64_t last = std::min(length - 1, vc.causal ? i + S - T : S - 1);
                const real* a = o.data() + ((b * H + hh) * T + i) * S;
                const std::string why =
                    check_query_weights(a, S, last, length, vc.causal,
                                        fmt::format("batch row {}, head {}: query {}", b, hh, i));
                if (!why.empty()) return why;
            }
    return "";
}

// One attention case: q [B,H,T,d], k [B,H,S,d], v [B,H,S,dv], padding to `lengths` (none when
// empty), causal or not.
struct AttentionCase {
    std::string label;
    int64_t B, T, S;
    std::vector<int32_t> lengths;
    bool causal;
    int64_t H, d, dv;
};

std::vector<AttentionCase> attention_value_cases(Grader& g, Rng& rng) {
    const int64_t B = g.random_size(rng, 1, 3), H = g.random_size(rng, 1, 3),
                  T = g.random_size(rng, 1, 4), S = g.random_size(rng, 2, 5),
                  d = g.random_size(rng, 2, 4), dv = g.random_size(rng, 1, 3);
    std::vector<int32_t> lengths;
    for (int64_t b = 0; b < 2; ++b) lengths.push_back(int32_t(1 + rng.below(uint64_t(S))));
    lengths[0] = int32_t(S - 1);
    const std::string lengths_text = fmt::format("{}", fmt::join(lengths, ","));
    return {{fmt::format("B={} h={} T={} S={} d={} dv={}, no mask", B, H, T, S, d, dv),
             B,
             T,
             S,
             {},
             false,
             H,
             d,
             dv},
            {fmt::format("padding, lengths [{}]", lengths_text), 2, T, S, lengths, false, H, d, dv},
            {"causal, T=S=4", B, 4, 4, {}, true, H, d, dv},
            {fmt::format("causal and padding, T=2 S={}, lengths [{}]", S, lengths_text), 2, 2, S,
             lengths, true, H, d, dv}};
}

// The scaling slips, from the composed twin on rescaled queries (s = q kᵀ · scale).
void add_scale_slips(GradCase& c, const AttentionCase& ac, const std::vector<Tensor>& qkv,
                     const Tensor& mask) {
    auto scaled_by = [&](double factor) {
        return values(scaled_dot_product_attention_composed(qkv[0] * real(factor), qkv[1], qkv[2],
                                                            mask, ac.causal));
    };
    const double root_d = std::sqrt(double(ac.d));
    c.forward_context.alternatives = {
        {"the scores were not divided by √d (s = q·k / √d, d = q.size(3))", scaled_by(root_d)},
        {"the scores were divided by d instead of √d", scaled_by(1 / root_d)}};
    if (ac.H > 1)
        c.forward_context.alternatives.push_back(
            {fmt::format("the scores were divided by √(h·d) = √{}: each head's scores use "
                         "its own d = {}",
                         ac.H * ac.d, ac.d),
             scaled_by(1 / std::sqrt(double(ac.H)))});
}

// With padding: the mask applied after the softmax (weights × (1 − mask)) as a slip, and the
// padded keys' exactly zero gradient in k and v.
void add_padding_slips(GradCase& c, const AttentionCase& ac, const std::vector<Tensor>& qkv,
                       const Tensor& mask) {
    const int64_t B = ac.B, H = ac.H, T = ac.T, S = ac.S, d = ac.d, dv = ac.dv;
    Tensor s = matmul(reshape(qkv[0], {B * H, T, d}), reshape(qkv[1], {B * H, S, d}), false, true) *
               real(1 / std::sqrt(double(d)));
    s = reshape(s, {B, H, T, S});
    if (ac.causal) s = masked_fill(s, seqgrad::causal_mask(T, S), -kInf);
    Tensor a = softmax(s) * (1 - reshape(mask, {B, 1, 1, S}));
    c.forward_context.alternatives.push_back(
        {"the padding mask was applied after the softmax: the padded keys still took "
         "their share of the denominator; set their scores to −∞ BEFORE the softmax",
         values(reshape(matmul(reshape(a, {B * H, T, S}), reshape(qkv[2], {B * H, S, dv})),
                        {B, H, T, dv}))});
    CompareContext none, dk, dvv;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t hh = 0; hh < H; ++hh)
            for (int64_t j = 0; j < S; ++j) {
                const bool pad = j >= ac.lengths[size_t(b)];
                for (int64_t e = 0; e < d; ++e) dk.masked.push_back(pad);
                for (int64_t e = 0; e < dv; ++e) dvv.masked.push_back(pad);
            }
    c.grad_contexts = {none, dk, dvv};
}

void check_attention_case(Grader& g, Rng& rng, const AttentionCase& ac) {
    Tensor mask = ac.lengths.empty() ? Tensor() : seqgrad::padding_mask(ac.lengths, ac.S);
    const bool causal = ac.causal;
    GradCase c{
        ac.label,
        {random_leaf(rng, {ac.B, ac.H, ac.T, ac.d}, -2, 2),
         random_leaf(rng, {ac.B, ac.H, ac.S, ac.d}, -2, 2),
         random_leaf(rng, {ac.B, ac.H, ac.S, ac.dv})},
        {"q", "k", "v"},
        [&g, mask, causal](const std::vector<Tensor>& v) {
            return g.t.scaled_dot_product_attention(v[0], v[1], v[2], mask, causal);
        },
        [mask, causal](const std::vector<Tensor>& v) {
            return seqgrad::scaled_dot_product_attention(v[0], v[1], v[2], mask, causal).output;
        }};
    c.output = "o [B,h,T,dv]";
    const std::vector<Tensor> qkv = {c.inputs[0].detach(), c.inputs[1].detach(),
                                     c.inputs[2].detach()};
    add_scale_slips(c, ac, qkv, mask);
    if (mask.defined()) add_padding_slips(c, ac, qkv, mask);
    check_gradients(g, c);
}

// The attention on random q, k, v against seqgrad's, with the usual slips named.
void grade_attention_values(Grader& g, Rng& rng) {
    for (const AttentionCase& ac : attention_value_cases(g, rng)) check_attention_case(g, rng, ac);
}

// The three parts together inside nn.MultiheadAttention's projections: masked self-attention.
void grade_multihead(Grader& g, Rng& rng) {
    const int64_t h = 2, E = 2 * g.random_size(rng, 1, 3), Tm = 3;
    Rng init(17);
    auto mha = std::make_shared<MultiheadAttention>(E, h, init);
    Tensor mask = seqgrad::padding_mask({3, 2}, Tm);
    GradCase c{fmt::format("multi-head self-attention E={} h={} T=3, causal, lengths [3,2]", E, h),
               {random_leaf(rng, {2, Tm, E})},
               {"x"},
               [&g, mha, mask, E, h](const std::vector<Tensor>& v) {
                   auto part = [&](int i) {
                       return linear(v[0], slice(mha->in_proj_weight, 0, i * E, (i + 1) * E),
                                     slice(mha->in_proj_bias, 0, i * E, (i + 1) * E));
                   };
                   Tensor o = g.t.scaled_dot_product_attention(
                       g.t.split_heads(part(0), h), g.t.split_heads(part(1), h),
                       g.t.split_heads(part(2), h), mask, true);
                   return mha->out_proj.forward(g.t.merge_heads(o));
               },
               [mha, mask](const std::vector<Tensor>& v) {
                   return mha->forward(v[0], v[0], v[0], mask, true).output;
               }};
    c.output = "output [B,T,E]";
    check_gradients(g, c);
}

void grade_attention(Grader& g) {
    Rng rng = g.rng(17);
    grade_heads(g, rng);
    grade_causal_mask(g);
    for (const VisibleCase& vc : std::vector<VisibleCase>{
             {"padding only, lengths [5,2,3], T=3 S=5", 3, 5, {5, 2, 3}, false},
             {"causal, T=S=4", 4, 4, {}, true},
             {"causal, T=2 after S=5 keys (decoding with a cache)", 2, 5, {}, true},
             {"causal and padding, lengths [4,2], T=S=4", 4, 4, {4, 2}, true}})
        g.check("which keys each query sees: " + vc.label,
                [&]() { return check_visible_keys(g, vc); });

    grade_attention_values(g, rng);
    grade_multihead(g, rng);
}

}  // namespace

void add_transformer_exercises(std::vector<Exercise>& out) {
    out.push_back({16, "16_layer_norm",
                   "layer norm over the last dim: μ, the biased σ², ε inside √, and its backward "
                   "by hand (one op)",
                   "30-60",
                   "autograd/ops_fused_layer_norm.cpp: layer_norm(); the maths: "
                   "autograd/fused_layer_norm.h; composed from ops: layers/layer_norm.cpp: "
                   "layer_norm_composed()",
                   grade_layer_norm});
    out.push_back({17, "17_multihead_attention",
                   "multi-head scaled dot-product attention: heads, ÷ √d, the padding and causal "
                   "masks before the softmax",
                   "30-60",
                   "layers/multihead_attention.cpp: causal_mask(), "
                   "scaled_dot_product_attention_composed(), MultiheadAttention::split_heads and "
                   "merge_heads; the fused op: autograd/fused_dot_product_attention.h",
                   grade_attention});
}

}  // namespace seqgrad::grading
