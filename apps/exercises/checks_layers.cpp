// Exercises 06-11: the GRU cell (composed and fused), the LSTM cell, the masked softmax,
// Bahdanau and Luong attention.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "apps/exercises/grader.h"
#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/autograd/fused_lstm.h"
#include "seqgrad/layers/attention.h"

namespace seqgrad::grading {
namespace {

const real kInf = std::numeric_limits<real>::infinity();

struct CellShapes {
    int64_t B, in, H;
};

void grade_gru_composed(Grader& g) {
    Rng rng = g.rng(6);
    std::vector<CellShapes> shapes = {
        {g.random_size(rng, 1, 4), g.random_size(rng, 1, 5), g.random_size(rng, 1, 5)}, {3, 2, 4}};
    for (auto [B, in, H] : shapes) {
        std::vector<Tensor> inputs = {random_leaf(rng, {B, in}),     random_leaf(rng, {B, H}),
                                      random_leaf(rng, {3 * H, in}), random_leaf(rng, {3 * H, H}),
                                      random_leaf(rng, {3 * H}),     random_leaf(rng, {3 * H})};
        GradCase c{fmt::format("B={} in={} H={}", B, in, H),
                   inputs,
                   {"x", "h", "weight_ih", "weight_hh", "bias_ih", "bias_hh"},
                   [&g](const std::vector<Tensor>& v) {
                       return g.t.gru_cell_composed(v[0], v[1], v[2], v[3], v[4], v[5]);
                   },
                   [](const std::vector<Tensor>& v) {
                       return seqgrad::gru_cell_composed(v[0], v[1], v[2], v[3], v[4], v[5]);
                   }};
        // known slips: z and 1 − z swapped; r applied outside the hidden bias
        std::vector<Tensor> d;
        for (const Tensor& t : inputs) d.push_back(t.detach());
        Tensor gi = linear(d[0], d[2], d[4]), gh = linear(d[1], d[3], d[5]);
        Tensor r = seqgrad::sigmoid(slice(gi, 1, 0, H) + slice(gh, 1, 0, H));
        Tensor z = seqgrad::sigmoid(slice(gi, 1, H, 2 * H) + slice(gh, 1, H, 2 * H));
        Tensor n = seqgrad::tanh(slice(gi, 1, 2 * H, 3 * H) + r * slice(gh, 1, 2 * H, 3 * H));
        Tensor ghn_no_bias = linear(d[1], slice(d[3], 0, 2 * H, 3 * H));
        Tensor n2 = seqgrad::tanh(slice(gi, 1, 2 * H, 3 * H) + r * ghn_no_bias +
                                  slice(d[5], 0, 2 * H, 3 * H));
        c.forward_context.alternatives = {
            {"z and 1 − z swapped: h' = (1 − z) ⊙ n + z ⊙ h (z keeps the OLD state)",
             values(z * n + (1 - z) * d[1])},
            {"r multiplies W_hn h only: in PyTorch's GRU it multiplies (W_hn h + b_hn)",
             values((1 - z) * n2 + z * d[1])}};
        check_gradients(g, c);
    }
}

void grade_gru_fused(Grader& g) {
    Rng rng = g.rng(7);
    std::vector<std::pair<int64_t, int64_t>> shapes = {
        {g.random_size(rng, 1, 5), g.random_size(rng, 1, 6)}, {2, 3}};
    auto composed = [](const std::vector<Tensor>& v) {
        const int64_t H = v[2].size(1);
        Tensor r = seqgrad::sigmoid(slice(v[0], 1, 0, H) + slice(v[1], 1, 0, H));
        Tensor z = seqgrad::sigmoid(slice(v[0], 1, H, 2 * H) + slice(v[1], 1, H, 2 * H));
        Tensor n = seqgrad::tanh(slice(v[0], 1, 2 * H, 3 * H) + r * slice(v[1], 1, 2 * H, 3 * H));
        return (1 - z) * n + z * v[2];
    };
    for (auto [B, H] : shapes) {
        GradCase c{
            fmt::format("B={} H={}", B, H),
            {random_leaf(rng, {B, 3 * H}, -2, 2), random_leaf(rng, {B, 3 * H}, -2, 2),
             random_leaf(rng, {B, H})},
            {"input_gates", "hidden_gates", "h"},
            [&g](const std::vector<Tensor>& v) { return g.t.gru_cell_fused(v[0], v[1], v[2]); },
            composed};
        check_gradients(g, c);
    }
    g.check("saturated gates (z ≈ 1, r ≈ 0)", [&]() -> std::string {
        Tensor gi = Tensor::from_vector({1, 3}, {-20, 20, 0.5}, true);
        Tensor gh = Tensor::from_vector({1, 3}, {-20, 20, 2}, true);
        Tensor h = Tensor::from_vector({1, 1}, {0.75}, true);
        g.phase("forward");
        Tensor got = g.t.gru_cell_fused(gi, gh, h);
        Tensor want = composed({gi, gh, h});
        CompareContext c;
        c.shape = {1, 1};
        return compare("h'", values(got), values(want), c);
    });
    g.check("one graph node whose parents are input_gates, hidden_gates, h", [&]() -> std::string {
        Tensor gi = random_leaf(rng, {2, 6}), gh = random_leaf(rng, {2, 6}),
               h = random_leaf(rng, {2, 2});
        g.phase("forward");
        Tensor out = g.t.gru_cell_fused(gi, gh, h);
        const auto& parents = out.node().parents;
        if (parents.size() != 3 || parents[0] != gi.node_ptr() || parents[1] != gh.node_ptr() ||
            parents[2] != h.node_ptr())
            return fmt::format(
                "the result's op '{}' has {} parents: the fused cell is ONE op, recorded with "
                "record(out, ..., {{input_gates, hidden_gates, h}}, backward)",
                out.op_name() ? out.op_name() : "?", parents.size());
        return "";
    });
}

void grade_lstm(Grader& g) {
    Rng rng = g.rng(8);
    std::vector<CellShapes> shapes = {
        {g.random_size(rng, 1, 4), g.random_size(rng, 1, 5), g.random_size(rng, 1, 5)}, {2, 3, 2}};
    for (auto [B, in, H] : shapes) {
        std::vector<Tensor> inputs = {random_leaf(rng, {B, in}),    random_leaf(rng, {B, H}),
                                      random_leaf(rng, {B, H}),     random_leaf(rng, {4 * H, in}),
                                      random_leaf(rng, {4 * H, H}), random_leaf(rng, {4 * H}),
                                      random_leaf(rng, {4 * H})};
        GradCase c{fmt::format("B={} in={} H={}", B, in, H),
                   inputs,
                   {"x", "h", "c", "weight_ih", "weight_hh", "bias_ih", "bias_hh"},
                   [&g](const std::vector<Tensor>& v) {
                       return g.t.lstm_cell(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
                   },
                   [](const std::vector<Tensor>& v) {
                       return seqgrad::lstm_cell_composed(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
                   }};
        std::vector<Tensor> d;
        for (const Tensor& t : inputs) d.push_back(t.detach());
        Tensor a = linear(d[0], d[3], d[5]) + linear(d[1], d[4], d[6]);
        Tensor i = seqgrad::sigmoid(slice(a, 1, 0, H)), f = seqgrad::sigmoid(slice(a, 1, H, 2 * H));
        Tensor gg = seqgrad::tanh(slice(a, 1, 2 * H, 3 * H)),
               o = seqgrad::sigmoid(slice(a, 1, 3 * H, 4 * H));
        Tensor c_swapped = i * d[2] + f * gg;
        Tensor c_new = f * d[2] + i * gg;
        c.forward_context.alternatives = {
            {"gates i and f swapped: PyTorch's order is i, f, g, o (c' = f ⊙ c + i ⊙ g)",
             values(stack({o * seqgrad::tanh(c_swapped), c_swapped}, 0))},
            {"h' = o ⊙ c' without the tanh", values(stack({o * c_new, c_new}, 0))}};
        check_gradients(g, c);
    }
}

void check_padding_mask(Grader& g, const std::vector<int32_t>& lengths, int64_t S) {
    g.check(fmt::format("padding_mask lengths [{}], {} columns", fmt::join(lengths, ","), S),
            [&]() -> std::string {
                g.phase("forward");
                Tensor got = g.t.padding_mask(lengths, S);
                Tensor want = seqgrad::padding_mask(lengths, S);
                if (got.shape() != want.shape())
                    return fmt::format("shape {}, expected {}", got.shape().str(),
                                       want.shape().str());
                CompareContext c;
                c.shape = dims(want);
                std::vector<double> flipped;
                for (double v : values(want)) flipped.push_back(1 - v);
                c.alternatives = {
                    {"inverted: the mask is 1 at PADDED positions (s >= length), "
                     "0 at real ones",
                     flipped}};
                return compare("mask", values(got), values(want), c);
            });
}

// masked_softmax of random scores [B,S] with the mask of `lengths`, forward and backward.
void check_masked_softmax(Grader& g, Rng& rng, const std::string& label,
                          const std::vector<int32_t>& lengths, int64_t B, int64_t S) {
    Tensor mask = seqgrad::padding_mask(lengths, S);
    GradCase c{
        label,
        {random_leaf(rng, {B, S}, -3, 3)},
        {"scores"},
        [&g, mask](const std::vector<Tensor>& v) { return g.t.masked_softmax(v[0], mask); },
        [mask](const std::vector<Tensor>& v) { return softmax(masked_fill(v[0], mask, -kInf)); }};
    std::vector<uint8_t> masked;
    for (double m : values(mask)) masked.push_back(m != 0);
    c.forward_context.masked = masked;
    c.forward_context.alternatives = {
        {"masked after the softmax (weights × (1 − mask)): the padded positions still took "
         "their share of the denominator; set their scores to −∞ BEFORE the softmax",
         values(softmax(c.inputs[0].detach()) * (1 - mask))}};
    c.forward_context.nan_hint = "exp(−∞ − (−∞)): subtract the max over the VALID positions";
    CompareContext grad;
    grad.masked = masked;
    c.grad_contexts = {grad};
    check_gradients(g, c);
}

void check_all_masked_row(Grader& g, Rng& rng) {
    g.check("a row with no valid position is an error, not NaN", [&]() -> std::string {
        Tensor scores = random_leaf(rng, {2, 3});
        Tensor mask = Tensor::from_vector({2, 3}, {0, 1, 1, 1, 1, 1});
        g.phase("forward");
        try {
            Tensor w = g.t.masked_softmax(scores, mask);
            for (double v : values(w))
                if (std::isnan(v))
                    return "NaN for the all-masked row 1: throw seqgrad::Error instead";
            return "returned weights for the all-masked row 1: throw seqgrad::Error naming the row";
        } catch (const practice::NotImplemented&) {
            throw;
        } catch (const std::exception&) {
            return "";
        }
    });
}

void grade_masked_softmax(Grader& g) {
    Rng rng = g.rng(9);
    const int64_t B = g.random_size(rng, 2, 5), S = g.random_size(rng, 2, 8);
    std::vector<int32_t> lengths;
    for (int64_t b = 0; b < B; ++b) lengths.push_back(int32_t(1 + rng.below(uint64_t(S))));
    lengths[0] = int32_t(S);
    check_padding_mask(g, lengths, S);
    check_masked_softmax(g, rng, fmt::format("lengths [{}]", fmt::join(lengths, ",")), lengths, B,
                         S);
    check_masked_softmax(g, rng, "every position but one masked",
                         std::vector<int32_t>(size_t(B), 1), B, S);
    check_masked_softmax(g, rng, "nothing masked", std::vector<int32_t>(size_t(B), int32_t(S)), B,
                         S);
    check_all_masked_row(g, rng);
}

void grade_bahdanau(Grader& g) {
    Rng rng = g.rng(10);
    const int64_t B = g.random_size(rng, 1, 4), S = g.random_size(rng, 1, 6),
                  A = g.random_size(rng, 1, 5), D = g.random_size(rng, 1, 5);
    for (auto [b, s, a] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{B, S, A}, {3, 1, 2}}) {
        GradCase c{
            fmt::format("scores B={} S={} A={}", b, s, a),
            {random_leaf(rng, {b, a}), random_leaf(rng, {b, s, a}), random_leaf(rng, {1, a})},
            {"query_projected", "keys_projected", "v"},
            [&g](const std::vector<Tensor>& v) { return g.t.bahdanau_scores(v[0], v[1], v[2]); },
            [](const std::vector<Tensor>& v) {
                return additive_attention_scores_composed(v[0], v[1], v[2]);
            }};
        check_gradients(g, c);
    }
    for (auto [b, s, d] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{B, S, D}, {2, 3, 3}}) {
        Tensor weights = softmax(random_leaf(rng, {b, s}, -2, 2, false)).detach();
        weights.set_requires_grad();
        GradCase c{
            fmt::format("context B={} S={} D={}", b, s, d),
            {weights, random_leaf(rng, {b, s, d})},
            {"weights", "values"},
            [&g](const std::vector<Tensor>& v) { return g.t.attention_context(v[0], v[1]); },
            [](const std::vector<Tensor>& v) { return attention_context_composed(v[0], v[1]); }};
        check_gradients(g, c);
    }
}

void grade_luong(Grader& g) {
    Rng rng = g.rng(11);
    const int64_t B = g.random_size(rng, 1, 4), S = g.random_size(rng, 1, 6),
                  D = g.random_size(rng, 2, 6), Dk = g.random_size(rng, 1, 5);
    for (bool scaled : {false, true}) {
        GradCase c{fmt::format("dot{} B={} S={} D={}", scaled ? " scaled" : "", B, S, D),
                   {random_leaf(rng, {B, D}), random_leaf(rng, {B, S, D})},
                   {"query", "keys"},
                   [&g, scaled](const std::vector<Tensor>& v) {
                       return g.t.luong_dot_scores(v[0], v[1], scaled);
                   },
                   [scaled, D](const std::vector<Tensor>& v) {
                       Tensor s = attention_dot_scores_composed(v[1], v[0]);
                       return scaled ? s * real(1 / std::sqrt(double(D))) : s;
                   }};
        if (scaled) {
            Tensor raw = attention_dot_scores_composed(c.inputs[1].detach(), c.inputs[0].detach());
            c.forward_context.alternatives = {
                {"divided by D instead of √D", values(raw * real(1.0 / double(D)))}};
        }
        check_gradients(g, c);
    }
    for (auto [dq, dk, scaled] : std::vector<std::tuple<int64_t, int64_t, bool>>{
             {D, Dk, false}, {3, 3, false}, {D, Dk, true}}) {
        GradCase c{
            fmt::format("general{} B={} S={} Dq={} Dk={}", scaled ? " scaled" : "", B, S, dq, dk),
            {random_leaf(rng, {B, dq}), random_leaf(rng, {B, S, dk}), random_leaf(rng, {dq, dk})},
            {"query", "keys", "W_a"},
            [&g, scaled](const std::vector<Tensor>& v) {
                return g.t.luong_general_scores(v[0], v[1], v[2], scaled);
            },
            [scaled, dq](const std::vector<Tensor>& v) {
                Tensor s = attention_dot_scores_composed(linear(v[1], v[2]), v[0]);
                return scaled ? s * real(1 / std::sqrt(double(dq))) : s;
            }};
        if (dq == dk && !scaled)
            c.forward_context.alternatives = {
                {"W_a transposed: the score is qᵀ W_a k, i.e. W_a k = linear(keys, W_a)",
                 values(attention_dot_scores_composed(
                     linear(c.inputs[1].detach(), transpose(c.inputs[2].detach())),
                     c.inputs[0].detach()))}};
        check_gradients(g, c);
    }
}

}  // namespace

void add_layer_exercises(std::vector<Exercise>& out) {
    out.push_back(
        {6, "06_gru_cell_composed", "a GRU cell composed from ops (gates r, z, n)", "20-40",
         "autograd/ops_fused_gru.cpp: gru_cell_composed(); the maths: autograd/fused_gru.h",
         grade_gru_composed});
    out.push_back({7, "07_gru_cell_fused", "the GRU cell's hand-written backward (the fused form)",
                   "45-90",
                   "autograd/ops_fused_gru.cpp: gru_cell() and its backward (the gate part, after "
                   "the products); the derivation: autograd/fused_gru.h",
                   grade_gru_fused});
    out.push_back(
        {8, "08_lstm_cell", "an LSTM cell (gates i, f, g, o)", "20-40",
         "autograd/ops_fused_lstm.cpp: lstm_cell_composed(); the maths: autograd/fused_lstm.h",
         grade_lstm});
    out.push_back({9, "09_masked_softmax",
                   "the padding mask and the masked softmax: zero weight and gradient at padding",
                   "20-30",
                   "layers/attention.cpp: padding_mask() and Attention::attend(); "
                   "autograd/ops_reduce.cpp: softmax() (why −∞ gives an exact 0)",
                   grade_masked_softmax});
    out.push_back({10, "10_bahdanau_attention",
                   "Bahdanau scores vᵀ tanh(W_q q + W_k k) and the context (bmm)", "20-40",
                   "layers/attention.cpp: additive_attention_scores_composed() and "
                   "attention_context_composed(); BahdanauAttention::forward",
                   grade_bahdanau});
    out.push_back(
        {11, "11_luong_scores", "Luong dot, general and scaled scores", "15-30",
         "layers/attention.cpp: attention_dot_scores_composed() and LuongAttention::forward "
         "(project_keys for general)",
         grade_luong});
}

}  // namespace seqgrad::grading
