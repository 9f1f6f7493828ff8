// Mistakes the grader was not written against: the reference solutions with one small random
// change, in the forward (one output element moved by 1e-3) or in the backward (the gradient
// reaching one output element changed by 1e-3), or in a plain-data result. The grader must fail
// every one of them (tests/exercises/mutants.sh runs them all).
#include <cmath>
#include <cstdlib>

#include "tests/exercises/mutants.h"

namespace seqgrad::grading::mutants {
namespace {

ExerciseTable original;  // the solutions
uint64_t seed = 1;       // picks the perturbed element
bool in_backward = false;

int64_t pick(int64_t numel) {
    return numel > 0 ? int64_t(seed % uint64_t(numel)) : 0;
}

// out with element k moved (forward mutant), or out whose backward is off at element k.
Tensor perturb(const Tensor& out) {
    const int64_t k = pick(out.numel());
    if (!in_backward) {
        std::vector<real> delta(size_t(out.numel()), 0);
        delta[size_t(k)] = real(1e-3 * (1 + std::fabs(out.data()[k])));
        return add(out, Tensor::from_vector(out.shape(), delta));
    }
    Tensor copy = make_result(out.shape());
    std::copy(out.data(), out.data() + out.numel(), copy.data());
    record(copy, "mutant", {out}, [k](Node& node) {
        real* dx = parent_grad(node, 0);
        if (!dx) return;
        const real* dy = node.grad.data();
        for (int64_t i = 0; i < node.numel(); ++i) dx[i] += dy[i];
        dx[k] += real(1e-3);
    });
    return copy;
}

Tensor m_tanh(const Tensor& x) {
    return perturb(original.tanh(x));
}
Tensor m_sigmoid(const Tensor& x) {
    return perturb(original.sigmoid(x));
}
Tensor m_add(const Tensor& a, const Tensor& b) {
    return perturb(original.add(a, b));
}
Tensor m_mul(const Tensor& a, const Tensor& b) {
    return perturb(original.mul(a, b));
}
Tensor m_matmul(const Tensor& a, const Tensor& b) {
    return perturb(original.matmul(a, b));
}
Tensor m_log_softmax(const Tensor& x) {
    return perturb(original.log_softmax(x));
}
Tensor m_cross_entropy(const Tensor& l, const std::vector<int32_t>& t, int32_t i, real s) {
    return perturb(original.cross_entropy(l, t, i, s));
}
Tensor m_gru_composed(const Tensor& x, const Tensor& h, const Tensor& a, const Tensor& b,
                      const Tensor& c, const Tensor& d) {
    return perturb(original.gru_cell_composed(x, h, a, b, c, d));
}
Tensor m_gru_fused(const Tensor& gi, const Tensor& gh, const Tensor& h) {
    return perturb(original.gru_cell_fused(gi, gh, h));
}
Tensor m_lstm(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& a, const Tensor& b,
              const Tensor& d, const Tensor& e) {
    return perturb(original.lstm_cell(x, h, c, a, b, d, e));
}
Tensor m_masked_softmax(const Tensor& s, const Tensor& m) {
    return perturb(original.masked_softmax(s, m));
}
Tensor m_bahdanau(const Tensor& q, const Tensor& k, const Tensor& v) {
    return perturb(original.bahdanau_scores(q, k, v));
}
Tensor m_context(const Tensor& w, const Tensor& v) {
    return perturb(original.attention_context(w, v));
}
Tensor m_dot(const Tensor& q, const Tensor& k, bool s) {
    return perturb(original.luong_dot_scores(q, k, s));
}
Tensor m_general(const Tensor& q, const Tensor& k, const Tensor& w, bool s) {
    return perturb(original.luong_general_scores(q, k, w, s));
}
Tensor m_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, real eps) {
    return perturb(original.layer_norm(x, w, b, eps));
}
Tensor m_split_heads(const Tensor& x, int64_t h) {
    return perturb(original.split_heads(x, h));
}
Tensor m_merge_heads(const Tensor& x) {
    return perturb(original.merge_heads(x));
}
Tensor m_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& m, bool c) {
    return perturb(original.scaled_dot_product_attention(q, k, v, m, c));
}
Tensor m_causal_mask(int64_t T, int64_t S) {
    Tensor mask = original.causal_mask(T, S);  // no gradient: a changed value only
    mask.data()[pick(mask.numel())] += real(1e-3);
    return mask;
}
void m_adam(real* p, const real* g, real* m, real* v, int64_t n, int64_t step, double lr, double b1,
            double b2, double eps) {
    original.adam_update(p, g, m, v, n, step, lr, b1, b2, eps);
    p[pick(n)] += real(1e-6);
}
double m_clip(const std::vector<Tensor>& params, double max_norm) {
    return original.clip_grad_norm(params, max_norm) * (1 + 1e-6);
}
double m_bleu(const std::vector<practice::Tokens>& h, const std::vector<practice::Tokens>& r) {
    return original.corpus_bleu(h, r) + 1e-3;
}
void m_beam(practice::BeamState& beams, const std::vector<std::vector<double>>& lp,
            const practice::BeamConfig& config) {
    original.beam_step(beams, lp, config);
    if (!beams.live.empty())
        beams.live[size_t(pick(int64_t(beams.live.size())))].log_prob -= 1e-3;
    else if (!beams.finished.empty())
        beams.finished.back().score -= 1e-3;
}

struct Mutant {
    const char* name;
    int exercise;
    void (*install)(ExerciseTable&);
};

#define SEQGRAD_MUTANT(name_, exercise_, member, fn)               \
    {                                                              \
        name_, exercise_, [](ExerciseTable& t) { t.member = &fn; } \
    }

const Mutant kMutants[] = {
    SEQGRAD_MUTANT("tanh", 1, tanh, m_tanh),
    SEQGRAD_MUTANT("sigmoid", 1, sigmoid, m_sigmoid),
    SEQGRAD_MUTANT("add", 2, add, m_add),
    SEQGRAD_MUTANT("mul", 2, mul, m_mul),
    SEQGRAD_MUTANT("matmul", 3, matmul, m_matmul),
    SEQGRAD_MUTANT("log_softmax", 4, log_softmax, m_log_softmax),
    SEQGRAD_MUTANT("cross_entropy", 5, cross_entropy, m_cross_entropy),
    SEQGRAD_MUTANT("gru_cell_composed", 6, gru_cell_composed, m_gru_composed),
    SEQGRAD_MUTANT("gru_cell_fused", 7, gru_cell_fused, m_gru_fused),
    SEQGRAD_MUTANT("lstm_cell", 8, lstm_cell, m_lstm),
    SEQGRAD_MUTANT("masked_softmax", 9, masked_softmax, m_masked_softmax),
    SEQGRAD_MUTANT("bahdanau_scores", 10, bahdanau_scores, m_bahdanau),
    SEQGRAD_MUTANT("attention_context", 10, attention_context, m_context),
    SEQGRAD_MUTANT("luong_dot_scores", 11, luong_dot_scores, m_dot),
    SEQGRAD_MUTANT("luong_general_scores", 11, luong_general_scores, m_general),
    SEQGRAD_MUTANT("layer_norm", 16, layer_norm, m_layer_norm),
    SEQGRAD_MUTANT("split_heads", 17, split_heads, m_split_heads),
    SEQGRAD_MUTANT("merge_heads", 17, merge_heads, m_merge_heads),
    SEQGRAD_MUTANT("scaled_dot_product_attention", 17, scaled_dot_product_attention, m_attention),
};
const Mutant kDataMutants[] = {
    SEQGRAD_MUTANT("adam_update", 12, adam_update, m_adam),
    SEQGRAD_MUTANT("clip_grad_norm", 12, clip_grad_norm, m_clip),
    SEQGRAD_MUTANT("beam_step", 14, beam_step, m_beam),
    SEQGRAD_MUTANT("corpus_bleu", 15, corpus_bleu, m_bleu),
    SEQGRAD_MUTANT("causal_mask", 17, causal_mask, m_causal_mask),
};

}  // namespace

std::vector<Variant> all() {
    std::vector<Variant> out;
    for (uint64_t s : {1u, 7u}) {
        for (const Mutant& m : kMutants)
            for (bool backward : {false, true})
                out.push_back(
                    {fmt::format("mutant:{}:{}:{}", backward ? "backward" : "forward", m.name, s),
                     m.exercise, [m, backward, s](ExerciseTable& t) {
                         original = learner_table();
                         in_backward = backward, seed = s;
                         m.install(t);
                     }});
        for (const Mutant& m : kDataMutants)
            out.push_back({fmt::format("mutant:result:{}:{}", m.name, s), m.exercise,
                           [m, s](ExerciseTable& t) {
                               original = learner_table();
                               seed = s;
                               m.install(t);
                           }});
    }
    return out;
}

}  // namespace seqgrad::grading::mutants
