#include "apps/exercises/capstone_parts.h"

#include <fmt/format.h>

#include <limits>

#include "seqgrad/autograd/ops.h"

namespace seqgrad::grading {

namespace {
// true when the call returns, false when it reports NotImplemented (other errors: a bug the
// grader will show; the part is still the learner's).
template <class F>
bool done(F&& call) {
    try {
        call();
        return true;
    } catch (const practice::NotImplemented&) {
        return false;
    } catch (const std::exception&) {
        return true;
    }
}
}  // namespace

LearnerParts probe_parts(const ExerciseTable& t) {
    LearnerParts p;
    Tensor x = Tensor::zeros({1, 3}), h = Tensor::zeros({1, 1});
    p.gru_fused = done([&] { t.gru_cell_fused(x, x, h); });
    p.gru_composed = done([&] {
        t.gru_cell_composed(Tensor::zeros({1, 2}), h, Tensor::zeros({3, 2}), Tensor::zeros({3, 1}),
                            Tensor::zeros({3}), Tensor::zeros({3}));
    });
    p.masked_softmax = done([&] {
        t.masked_softmax(Tensor::zeros({1, 2}), Tensor::zeros({1, 2}));
    });
    p.attention = done([&] {
        t.bahdanau_scores(Tensor::zeros({1, 2}), Tensor::zeros({1, 3, 2}), Tensor::zeros({1, 2}));
        t.attention_context(Tensor::zeros({1, 3}), Tensor::zeros({1, 3, 2}));
    });
    p.cross_entropy = done([&] { t.cross_entropy(Tensor::zeros({2, 3}), {1, 0}, 0, 0); });
    p.adam = done([&] {
        real v[1] = {0}, g[1] = {0}, m[1] = {0}, s[1] = {0};
        t.adam_update(v, g, m, s, 1, 1, 1e-3, 0.9, 0.999, 1e-8);
        t.clip_grad_norm({}, 1.0);
    });
    return p;
}

std::string LearnerParts::describe() const {
    auto who = [](bool mine) { return mine ? "yours  " : "seqgrad"; };
    return fmt::format(
        "  GRU cell (decoder)     {}  {}\n"
        "  Bahdanau scores, bmm   {}  (10_bahdanau_attention)\n"
        "  masked softmax         {}  (09_masked_softmax)\n"
        "  cross-entropy          {}  (05_cross_entropy)\n"
        "  Adam, clip_grad_norm   {}  (12_adam_clip)\n"
        "  (the encoder, embeddings and output projection are seqgrad's)\n",
        who(gru_fused || gru_composed),
        gru_fused      ? "(07_gru_cell_fused)"
        : gru_composed ? "(06_gru_cell_composed)"
                       : "(06 or 07)",
        who(attention), who(masked_softmax), who(cross_entropy), who(adam));
}

RecurrentState LearnerGRUCell::step(const Tensor& x, const RecurrentState& state,
                                    const Tensor& step_mask) const {
    if (step_mask.defined() || (!parts_.gru_fused && !parts_.gru_composed))
        return RecurrentCell::step(x, state, step_mask);
    if (parts_.gru_fused)
        return {t_.gru_cell_fused(linear(x, weight_ih, bias_ih),
                                  linear(state.h, weight_hh, bias_hh), state.h),
                Tensor()};
    return {t_.gru_cell_composed(x, state.h, weight_ih, weight_hh, bias_ih, bias_hh), Tensor()};
}

AttentionResult LearnerBahdanau::forward(const Tensor& query, const Tensor& keys,
                                         const Tensor& keys_projected, const Tensor& mask,
                                         const Tensor& output_steps,
                                         const Tensor& coverage) const {
    if (!parts_.attention && !parts_.masked_softmax)
        return BahdanauAttention::forward(query, keys, keys_projected, mask, output_steps,
                                          coverage);
    if (coverage.defined())
        throw Error("exercises: the date model built of your parts has no coverage (model.coverage)");
    Tensor query_projected = linear(query, W_q.weight);
    Tensor scores = parts_.attention ? t_.bahdanau_scores(query_projected, keys_projected, v.weight)
                                     : additive_attention_scores_composed(query_projected,
                                                                          keys_projected, v.weight);
    Tensor weights =
        parts_.masked_softmax
            ? t_.masked_softmax(scores, mask)
            : softmax(masked_fill(scores, mask, -std::numeric_limits<real>::infinity()));
    Tensor context = parts_.attention ? t_.attention_context(weights, keys)
                                      : attention_context_composed(weights, keys);
    return {context, weights, scores};
}

LearnerAdam::LearnerAdam(NamedTensors params, double lr, const ExerciseTable& t)
    : Optimizer(std::move(params), lr), t_(t) {
    exp_avg_ = add_state_buffer("exp_avg");
    exp_avg_sq_ = add_state_buffer("exp_avg_sq");
}

nlohmann::json LearnerAdam::hyperparameters() const {
    return {{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}};
}

void LearnerAdam::update(real grad_scale, bool zero_grads) {
    const auto& params = named_parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        Tensor p = params[k].second;
        if (!p.has_grad()) continue;
        real* g = p.mutable_grad_data();
        if (grad_scale != 1)
            for (int64_t i = 0; i < p.numel(); ++i) g[i] *= grad_scale;
        t_.adam_update(p.data(), g, state(exp_avg_, k).data(), state(exp_avg_sq_, k).data(),
                       p.numel(), step_count_, lr(), 0.9, 0.999, 1e-8);
        if (zero_grads) std::fill(g, g + p.numel(), real(0));
    }
}

}  // namespace seqgrad::grading
