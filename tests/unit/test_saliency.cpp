// Saliency (apps/studies/saliency.h) in double on tiny models: the gradients equal finite
// differences of log p(y_t) with respect to every embedding component, integrated gradients add
// up to f_t(e) - f_t(0) with an error that shrinks as the steps grow, the agreement measures, the
// CSV, and the errors on bad input. A Transformer's saliency passes the same checks.
#include <doctest/doctest.h>

#include <cmath>

#include "apps/studies/saliency.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/model/transformer.h"
#include "transformer_util.h"

using namespace seqgrad;

namespace {

ModelConfig tiny_config(const std::string& attention, const std::string& cell = "gru",
                        bool bidirectional = false) {
    ModelConfig c;
    c.embedding_size = 3;
    c.hidden_size = 4;
    c.attention_size = 5;
    c.attention = attention;
    c.cell = cell;
    c.bidirectional = bidirectional;
    return c;
}

// Larger embeddings than the default init, so that f_t is far from linear along the path.
void spread_embeddings(Seq2Seq& model) {
    Tensor& w = model.encoder.embedding.weight;
    for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] *= 3;
}

const std::vector<int32_t> kSource = {4, 5, 6, 7, Vocab::EOS};  // S = 5
const std::vector<int32_t> kOutputs = {5, 7, 4, Vocab::EOS};    // T = 4

double log_prob_at(const TranslationModel& model, const std::vector<double>& e, int64_t t,
                   double scale) {
    return output_gradients(model, {{kSource, kOutputs}}, {e}, {scale})[0].log_prob(t, 0);
}

// The largest relative gap between g's gradients and central finite differences of f_t(α e),
// over every step, scale and embedding value.
double worst_finite_difference(const TranslationModel& model, const std::vector<double>& e,
                               const OutputGradients& g, const std::vector<double>& scales) {
    const double h = 1e-5;
    double worst = 0;
    for (int64_t t = 0; t < int64_t(kOutputs.size()); ++t)
        for (size_t k = 0; k < scales.size(); ++k)
            for (size_t i = 0; i < e.size(); ++i) {
                std::vector<double> plus = e, minus = e;
                plus[i] += h;
                minus[i] -= h;
                // d f_t(α e) / d e_i = α · (∂f_t/∂x_i at x = α e)
                const double numeric = (log_prob_at(model, plus, t, scales[k]) -
                                        log_prob_at(model, minus, t, scales[k])) /
                                       (2 * h * scales[k]);
                const double analytic = g.gradient(t, int64_t(k))[i];
                worst = std::max(worst,
                                 std::fabs(numeric - analytic) / std::max(1.0, std::fabs(numeric)));
            }
    return worst;
}

}  // namespace

TEST_CASE("saliency gradients equal finite differences of log p(y_t) for every embedding value") {
    struct Case {
        const char* attention;
        const char* cell;
        bool bidirectional;
    };
    for (Case c : {Case{"bahdanau", "gru", false}, Case{"luong_general", "lstm", true},
                   Case{"luong_dot", "rnn", false}, Case{"none", "gru", false}}) {
        CAPTURE(c.attention);
        CAPTURE(c.cell);
        Rng rng(5);
        Seq2Seq model(tiny_config(c.attention, c.cell, c.bidirectional), 10, 10, rng);
        model.eval();
        spread_embeddings(model);
        const std::vector<double> e = source_embeddings(model, kSource);
        const int64_t S = int64_t(kSource.size()), E = 3;
        REQUIRE(int64_t(e.size()) == S * E);
        // at the input itself and halfway along integrated gradients' path
        const std::vector<double> scales = {1.0, 0.5};
        const OutputGradients g = output_gradients(model, {{kSource, kOutputs}}, {e}, scales)[0];
        CHECK(worst_finite_difference(model, e, g, scales) < 1e-7);
        // the gradients are not all zero (the check above would pass on zeros)
        double largest = 0;
        for (double v : g.gradients) largest = std::max(largest, std::fabs(v));
        CHECK(largest > 1e-4);
        // the parameters still require grad afterwards (they are frozen only while it runs)
        for (const Tensor& p : model.parameters()) CHECK(p.requires_grad());

        // f_t is the log-probability greedy decoding's path computes, step by step, for one row
        {
            std::vector<EncodedPair> pairs{{kSource, kOutputs}};
            auto state = model.initial_state(model.encode(make_batch(pairs, {0})));
            int32_t previous = Vocab::SOS;
            for (int64_t t = 0; t < int64_t(kOutputs.size()); ++t) {
                const StepResult r = model.step({previous}, *state);
                previous = kOutputs[size_t(t)];
                CHECK(g.log_prob(t, 0) ==
                      doctest::Approx(r.log_probs.data()[previous]).epsilon(1e-12));
            }
        }
        // grad_norm and grad_input are the norm of and the dot product with those gradients
        const Saliency sal = compute_saliency(model, kSource, kOutputs, {});
        for (int64_t t = 0; t < int64_t(kOutputs.size()); ++t) {
            CHECK(sal.log_probs[size_t(t)] == doctest::Approx(g.log_prob(t, 0)));
            for (int64_t s = 0; s < S; ++s) {
                double n2 = 0, dot = 0;
                for (int64_t d = 0; d < E; ++d) {
                    const double gi = g.gradient(t, 0)[s * E + d];
                    n2 += gi * gi;
                    dot += gi * e[size_t(s * E + d)];
                }
                CHECK(sal.grad_norm[size_t(t)][size_t(s)] == doctest::Approx(std::sqrt(n2)));
                CHECK(sal.grad_input[size_t(t)][size_t(s)] == doctest::Approx(dot));
            }
        }
    }
}

TEST_CASE("a Transformer's saliency: finite differences, the decoding path, and completeness") {
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        ModelConfig c =
            testing::tiny_transformer_config(norm_first, norm_first ? "learned" : "sinusoidal");
        c.encoder_layers = 1;
        c.max_positions = 8;
        c.activation = "gelu";  // smooth, as the RNN cells' tanh: ReLU's kinks would make the
                                // midpoint rule's error O(1/K) instead of O(1/K²)
        Rng rng(7);
        Transformer model(c, 10, 10, rng);
        model.eval();
        const std::vector<double> e = source_embeddings(model, kSource);
        const int64_t S = int64_t(kSource.size()), E = 4;
        REQUIRE(int64_t(e.size()) == S * E);
        CHECK(source_embedding_size(model) == E);
        const std::vector<double> scales = {1.0, 0.5};
        const OutputGradients g = output_gradients(model, {{kSource, kOutputs}}, {e}, scales)[0];
        CHECK(worst_finite_difference(model, e, g, scales) < 1e-7);
        double largest = 0;
        for (double v : g.gradients) largest = std::max(largest, std::fabs(v));
        CHECK(largest > 1e-4);
        // f_t at scale 1 is what decoding from the token ids computes
        std::vector<EncodedPair> pairs{{kSource, kOutputs}};
        auto state = model.start_decoding(make_batch(pairs, {0}));
        int32_t previous = Vocab::SOS;
        for (int64_t t = 0; t < int64_t(kOutputs.size()); ++t) {
            const StepResult r = model.step({previous}, *state);
            previous = kOutputs[size_t(t)];
            CHECK(g.log_prob(t, 0) == doctest::Approx(r.log_probs.data()[previous]).epsilon(1e-12));
        }
        // integrated gradients add up to f_t(e) - f_t(0) (the positions stay at the baseline),
        // up to the midpoint rule's error, which falls as the steps grow
        std::vector<double> errors;
        for (int steps : {8, 64}) {
            SaliencyOptions options;
            options.integrated_gradients = true;
            options.steps = steps;
            const Saliency sal = compute_saliency(model, kSource, kOutputs, options);
            double error = 0, change = 0;
            for (size_t t = 0; t < kOutputs.size(); ++t) {
                double total = 0;
                for (double v : sal.integrated_gradients[t]) total += v;
                const double delta = sal.log_probs[t] - sal.baseline_log_probs[t];
                error = std::max(error, std::fabs(total - delta));
                change = std::max(change, std::fabs(delta));
            }
            MESSAGE("steps " << steps << ": completeness error " << error << " of a change "
                             << change);
            if (steps == 64) CHECK(error < 0.01 * change);
            errors.push_back(error);
        }
        CHECK(errors[1] < errors[0] / 8);  // O(1/K²) would be 64x
    }
}

TEST_CASE("integrated gradients: completeness within the step error, which shrinks with steps") {
    for (const char* attention : {"bahdanau", "none"}) {
        CAPTURE(attention);
        Rng rng(9);
        Seq2Seq model(tiny_config(attention), 10, 10, rng);
        model.eval();
        spread_embeddings(model);
        std::vector<double> errors;
        for (int steps : {2, 8, 32}) {
            SaliencyOptions options;
            options.integrated_gradients = true;
            options.steps = steps;
            const Saliency sal = compute_saliency(model, kSource, kOutputs, options);
            REQUIRE(sal.integrated_gradients.size() == kOutputs.size());
            REQUIRE(sal.baseline_log_probs.size() == kOutputs.size());
            double worst = 0, spread = 0;
            for (size_t t = 0; t < kOutputs.size(); ++t) {
                double total = 0;
                for (double v : sal.integrated_gradients[t]) total += v;
                const double difference = sal.log_probs[t] - sal.baseline_log_probs[t];
                worst = std::max(worst, std::fabs(total - difference));
                spread = std::max(spread, std::fabs(difference));
            }
            CAPTURE(steps);
            CAPTURE(worst);
            CHECK(spread > 1e-3);  // the sums are checked against something that is not 0
            errors.push_back(worst);
        }
        // the midpoint rule: the error falls roughly as 1/K² (16x per 4x the steps)
        CHECK(errors[1] < errors[0] / 4);
        CHECK(errors[2] < errors[1] / 4);
        CHECK(errors[2] < 1e-3);
    }
}

TEST_CASE("the baseline's log-probability is the model's at zero embeddings") {
    Rng rng(2);
    Seq2Seq model(tiny_config("bahdanau"), 10, 10, rng);
    model.eval();
    SaliencyOptions options;
    options.integrated_gradients = true;
    options.steps = 1;
    const Saliency sal = compute_saliency(model, kSource, kOutputs, options);
    const std::vector<double> zeros(kSource.size() * 3, 0.0);
    for (size_t t = 0; t < kOutputs.size(); ++t)
        CHECK(sal.baseline_log_probs[t] ==
              doctest::Approx(log_prob_at(model, zeros, int64_t(t), 1)));
}

TEST_CASE("Spearman rank correlation: +1, -1, ties averaged, constant rows give 0") {
    CHECK(spearman_correlation({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1));
    CHECK(spearman_correlation({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1));
    CHECK(spearman_correlation({1, 2, 3}, {5, 5, 5}) == 0);
    // ranks x: 0, 1.5, 1.5, 3; y: 0, 1, 2, 3 -> Pearson of the ranks
    CHECK(spearman_correlation({1, 2, 2, 3}, {1, 2, 3, 4}) ==
          doctest::Approx(4.5 / std::sqrt(4.5 * 5.0)));
    CHECK_THROWS_AS(spearman_correlation({1, 2}, {1}), Error);
}

TEST_CASE("agreement: argmax by magnitude, per step and as shares") {
    const std::vector<std::vector<double>> attention = {{0.7, 0.2, 0.1}, {0.1, 0.1, 0.8}};
    const std::vector<std::vector<double>> saliency = {{-3.0, 1.0, 0.5}, {2.0, 0.1, 1.0}};
    const Agreement a = attention_agreement(attention, saliency);
    REQUIRE(a.argmax_agrees.size() == 2);
    CHECK(a.argmax_agrees[0]);  // |-3| is the largest
    CHECK(!a.argmax_agrees[1]);
    CHECK(a.argmax_share == doctest::Approx(0.5));
    CHECK(a.spearman[0] == doctest::Approx(1));
    CHECK(a.mean_spearman == doctest::Approx((a.spearman[0] + a.spearman[1]) / 2));
    CHECK_THROWS_AS(attention_agreement(attention, {{1, 2, 3}}), Error);
}

TEST_CASE("saliency CSV: the columns, one line per step, position and method") {
    Saliency sal;
    sal.grad_norm = {{0.5, 0.25}};
    sal.grad_input = {{-0.5, 1}};
    const std::string with =
        saliency_csv(sal, {SaliencyMethod::grad_norm, SaliencyMethod::grad_input}, {"a,b", "<eos>"},
                     {"x"}, {{0.75, 0.25}});
    CHECK(with ==
          "step,output_token,source_position,source_token,method,value,attention\n"
          "1,x,1,\"a,b\",grad_norm,0.5,0.75\n"
          "1,x,1,\"a,b\",grad_input,-0.5,0.75\n"
          "1,x,2,<eos>,grad_norm,0.25,0.25\n"
          "1,x,2,<eos>,grad_input,1,0.25\n");
    const std::string without =
        saliency_csv(sal, {SaliencyMethod::grad_norm}, {"a", "<eos>"}, {"x"}, {});
    CHECK(without.substr(0, without.find('\n')) ==
          "step,output_token,source_position,source_token,method,value");
    CHECK_THROWS_AS(
        saliency_csv(sal, {SaliencyMethod::integrated_gradients}, {"a", "<eos>"}, {"x"}, {}),
        Error);  // not computed
}

TEST_CASE("saliency: bad input is an error that says what was expected") {
    CHECK(parse_saliency_method("integrated_gradients") == SaliencyMethod::integrated_gradients);
    CHECK_THROWS_WITH(parse_saliency_method("smoothgrad"),
                      doctest::Contains("--method smoothgrad: unknown saliency method (expected "
                                        "grad_norm, grad_input or integrated_gradients)"));
    Rng rng(1);
    Seq2Seq model(tiny_config("bahdanau"), 10, 10, rng);
    model.eval();
    SaliencyOptions zero_steps;
    zero_steps.integrated_gradients = true;
    zero_steps.steps = 0;
    CHECK_THROWS_WITH(compute_saliency(model, kSource, kOutputs, zero_steps),
                      doctest::Contains("--steps 0"));
    CHECK_THROWS_WITH(compute_saliency(model, kSource, {}, {}),
                      doctest::Contains("no output token"));
    CHECK_THROWS_WITH(compute_saliency(model, kSource, {42}, {}),
                      doctest::Contains("outside the target vocabulary of 10"));
    CHECK_THROWS_WITH(output_gradients(model, {{{Vocab::EOS}, kOutputs}}, {{1.0, 2.0}}, {1.0}),
                      doctest::Contains("2 embedding values for 1 source positions"));
    NoGradGuard no_grad;
    CHECK_THROWS_WITH(compute_saliency(model, kSource, kOutputs, {}),
                      doctest::Contains("grad mode is off"));
}

TEST_CASE("several sentences at once (padded, in shared batches) give each one's own saliency") {
    for (const char* attention : {"bahdanau", "luong_general", "none"}) {
        CAPTURE(attention);
        Rng rng(4);
        Seq2Seq model(tiny_config(attention, "gru", true), 10, 10, rng);
        model.eval();
        spread_embeddings(model);
        const std::vector<SaliencyInput> inputs = {
            {kSource, kOutputs},
            {{8, 9, Vocab::EOS}, {6, 6, 6, 5, 4, Vocab::EOS}},
            {{5, Vocab::EOS}, {9}}};
        SaliencyOptions options;
        options.integrated_gradients = true;
        options.steps = 3;
        const std::vector<Saliency> together = compute_saliency(model, inputs, options);
        REQUIRE(together.size() == inputs.size());
        for (size_t i = 0; i < inputs.size(); ++i) {
            const Saliency alone =
                compute_saliency(model, inputs[i].source_ids, inputs[i].outputs, options);
            REQUIRE(together[i].grad_norm.size() == inputs[i].outputs.size());
            for (size_t t = 0; t < alone.grad_norm.size(); ++t) {
                CHECK(together[i].log_probs[t] ==
                      doctest::Approx(alone.log_probs[t]).epsilon(1e-10));
                for (size_t s = 0; s < inputs[i].source_ids.size(); ++s) {
                    CHECK(together[i].grad_norm[t][s] ==
                          doctest::Approx(alone.grad_norm[t][s]).epsilon(1e-9));
                    CHECK(together[i].integrated_gradients[t][s] ==
                          doctest::Approx(alone.integrated_gradients[t][s]).epsilon(1e-9));
                }
            }
        }
    }
}
