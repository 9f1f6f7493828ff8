// The two attention study switches (layers/attention.h): the padding mask turned off
// (model.attention_mask = false) and the position bias −β·|t/r − s| (model.position_bias).
// With the mask off a model really attends to PAD, in training and in decoding (greedy and beam);
// the bias is gradient-checked in double with every attention kind, and training and decoding
// see the same bias.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "attention_variants.h"
#include "batch_util.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/seq2seq.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;
using seqgrad::testing::scale_parameters;
using seqgrad::testing::Variant;
using seqgrad::testing::variants;

namespace {

const std::vector<int32_t> kLengths{3, 1, 4};  // a batch that mixes lengths, S = 4

// Row b's weights, s = 0..3.
std::vector<double> weights_of(const AttentionResult& r, int64_t b) {
    std::vector<double> w;
    for (int64_t s = 0; s < 4; ++s) w.push_back(double(r.weights.data()[b * 4 + s]));
    return w;
}

}  // namespace

// ---- the mask switch, one layer --------------------------------------------------------------

TEST_CASE("mask off: padded positions get weight > 0; on: exactly 0 (every kind, both paths)") {
    const Tensor mask = padding_mask(kLengths, 4);
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(90);
        auto attention = variant.make(rng);
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 91, false);
        Tensor query = random_tensor({3, variant.query_dim}, 92, false);
        AttentionResult on = attention->forward(query, keys, mask);
        attention->use_mask = false;
        AttentionResult off = attention->forward(query, keys, mask);
        AttentionResult unmasked = attention->forward(query, keys, Tensor());
        for (int64_t b = 0; b < 3; ++b) {
            double padded_on = 0, padded_off = 0, total_off = 0;
            for (int64_t s = 0; s < 4; ++s) {
                const double w_on = weights_of(on, b)[size_t(s)];
                const double w_off = weights_of(off, b)[size_t(s)];
                CHECK(w_off > 0);
                total_off += w_off;
                if (s >= kLengths[size_t(b)]) padded_on += w_on, padded_off += w_off;
            }
            CHECK(padded_on == 0.0);
            if (kLengths[size_t(b)] < 4) CHECK(padded_off > 0.01);
            CHECK(total_off == doctest::Approx(1).epsilon(1e-14));
        }
        // Off means exactly "no mask": the same numbers as no mask at all.
        CHECK(off.weights.to_vector() == unmasked.weights.to_vector());
        CHECK(off.context.to_vector() == unmasked.context.to_vector());
    }
}

// ---- the position bias, one layer ------------------------------------------------------------

TEST_CASE("position_bias_scores: −β·|t/r − s| by hand, and clear errors") {
    Tensor steps = Tensor::from_vector({2}, {0, 3});
    Tensor bias = position_bias_scores(steps, 4, 0.1, 0.5);  // i = 0 and i = 6
    CHECK(bias.shape() == Shape{2, 4});
    const std::vector<double> expected{0, -0.1, -0.2, -0.3, -0.6, -0.5, -0.4, -0.3};
    for (size_t k = 0; k < expected.size(); ++k)
        CHECK(double(bias.to_vector()[k]) == doctest::Approx(expected[k]).epsilon(1e-14));
    CHECK_FALSE(bias.requires_grad());
    CHECK_THROWS_WITH_AS(position_bias_scores(Tensor(), 4, 0.1, 1),
                         "attention position bias: output_steps (undefined) must be [B] (the "
                         "output step of each row)",
                         Error);
    CHECK_THROWS_AS(position_bias_scores(steps, 4, 0.1, 0), Error);
    CHECK_THROWS_AS(position_bias_scores(steps, 4, -1, 1), Error);

    Rng rng(1);
    BahdanauAttention attention(4, 6, 7, rng);
    attention.position_bias = 0.1;
    Tensor keys = random_tensor({3, 4, 6}, 2), query = random_tensor({3, 4}, 3);
    CHECK_THROWS_WITH_AS(attention.forward(query, keys, attention.project_keys(keys), Tensor()),
                         "attention position bias: output_steps (undefined) must be [B] (the "
                         "output step of each row)",
                         Error);
    CHECK_THROWS_WITH_AS(
        attention.forward(query, keys, attention.project_keys(keys), Tensor(), Tensor::zeros({2})),
        "attention position bias: output_steps [2] for scores [3,4]: expected [3]", Error);
}

TEST_CASE("position bias: weights = unbiased weights · exp(−β|i − s|), renormalised") {
    const Tensor mask = padding_mask(kLengths, 4);
    const double beta = 0.8, ratio = 0.5;
    const Tensor steps = Tensor::from_vector({3}, {0, 1, 2});  // i = 0, 2, 4
    for (const Variant& variant : variants()) {
        CAPTURE(variant.name);
        Rng rng(100);
        auto attention = variant.make(rng);
        Tensor keys = random_tensor({3, 4, variant.key_dim}, 101, false);
        Tensor query = random_tensor({3, variant.query_dim}, 102, false);
        const Tensor keys_projected = attention->project_keys(keys);
        AttentionResult plain = attention->forward(query, keys, keys_projected, mask);
        attention->position_bias = beta;
        attention->position_ratio = ratio;
        AttentionResult biased = attention->forward(query, keys, keys_projected, mask, steps);
        for (int64_t b = 0; b < 3; ++b) {
            const double i = double(b) / ratio;
            std::vector<double> expected = weights_of(plain, b);
            double total = 0;
            for (int64_t s = 0; s < 4; ++s)
                total += expected[size_t(s)] *= std::exp(-beta * std::fabs(i - double(s)));
            for (int64_t s = 0; s < 4; ++s) {
                CHECK(weights_of(biased, b)[size_t(s)] ==
                      doctest::Approx(expected[size_t(s)] / total).epsilon(1e-12));
                // the scores returned carry the bias
                CHECK(double(biased.scores.data()[b * 4 + s]) ==
                      doctest::Approx(double(plain.scores.data()[b * 4 + s]) -
                                      beta * std::fabs(i - double(s)))
                          .epsilon(1e-12));
            }
        }
    }
}

TEST_CASE("gradcheck with the position bias (mask on and off), every kind, two decoder steps") {
    const Tensor mask = padding_mask(kLengths, 4);
    for (bool use_mask : {true, false}) {
        for (const Variant& variant : variants()) {
            CAPTURE(variant.name);
            CAPTURE(use_mask);
            Rng rng(110);
            auto attention = variant.make(rng);
            scale_parameters(*attention, 2);
            attention->position_bias = 0.7;
            attention->position_ratio = 0.8;
            attention->use_mask = use_mask;
            Tensor keys = random_tensor({3, 4, variant.key_dim}, 111);
            Tensor query1 = random_tensor({3, variant.query_dim}, 112);
            Tensor query2 = random_tensor({3, variant.query_dim}, 113);
            const Tensor step1 = Tensor::from_vector({3}, {0, 0, 0});
            const Tensor step2 = Tensor::from_vector({3}, {1, 1, 1});
            std::vector<Tensor> inputs{keys, query1, query2};
            for (auto& [_, p] : attention->named_parameters()) inputs.push_back(p);
            expect_gradcheck(
                [&](auto&) {
                    Tensor keys_projected = attention->project_keys(keys);
                    AttentionResult a1 =
                        attention->forward(query1, keys, keys_projected, mask, step1);
                    AttentionResult a2 =
                        attention->forward(query2, keys, keys_projected, mask, step2);
                    return concat({a1.context, a1.weights, a2.context, a2.weights}, 1);
                },
                inputs);
        }
    }
}

// ---- whole models ----------------------------------------------------------------------------

namespace {

const char* const kAttentionKinds[] = {"bahdanau", "luong_dot", "luong_general", "luong_concat"};

// The weight a step of each row of `batch` puts on its padded source positions.
std::vector<double> padded_weight(const Tensor& weights, const Batch& batch) {
    const int64_t S = batch.src_len;
    std::vector<double> out;
    for (int64_t b = 0; b < batch.batch_size; ++b) {
        double w = 0;
        for (int64_t s = batch.src_lengths[size_t(b)]; s < S; ++s)
            w += double(weights.data()[b * S + s]);
        out.push_back(w);
    }
    return out;
}

}  // namespace

TEST_CASE("a model with model.attention_mask = false attends to PAD: decoding and training") {
    const Batch batch = testing::mixed_length_batch(5);
    for (const char* kind : kAttentionKinds) {
        for (bool mask : {true, false}) {
            CAPTURE(kind);
            CAPTURE(mask);
            ModelConfig c = testing::small_model_config(kind);
            c.attention_mask = mask;
            Rng rng(7);
            Seq2Seq model(c, 13, 13, rng);
            model.eval();
            {
                NoGradGuard no_grad;
                // One decoding step (what greedy decoding and beam search call).
                auto state = model.initial_state(model.encode(batch));
                StepResult step = model.step(std::vector<int32_t>(7, Vocab::SOS), *state);
                const std::vector<double> padded = padded_weight(step.attention, batch);
                for (int64_t b = 0; b < 7; ++b) {
                    CAPTURE(b);
                    if (mask || batch.src_lengths[size_t(b)] == batch.src_len)
                        CHECK(padded[size_t(b)] == 0.0);
                    else
                        CHECK(padded[size_t(b)] > 1e-3);
                }
                // Beam search (attention not trimmed: all S columns of every output step).
                DecodeOptions options;
                options.beam_size = 3;
                options.max_length = 4;
                auto results =
                    beam_search(model, model.initial_state(model.encode(batch)), options);
                for (int64_t b = 0; b < 7; ++b) {
                    double on_pad = 0;
                    for (const auto& row : results[size_t(b)][0].attention)
                        for (size_t s = size_t(batch.src_lengths[size_t(b)]); s < row.size(); ++s)
                            on_pad += row[s];
                    if (mask || batch.src_lengths[size_t(b)] == batch.src_len)
                        CHECK(on_pad == 0.0);
                    else
                        CHECK(on_pad > 1e-3);
                }
            }
            // Training: the loss's gradient reaches the padded encoder outputs only with the
            // mask off.
            EncodedSource source = model.encode(batch);
            source.outputs.retain_grad();
            model.forward_loss(batch, source).loss.backward();
            const int64_t S = batch.src_len, K = source.outputs.size(2);
            for (int64_t b = 0; b < 7; ++b) {
                double padded_grad = 0;
                for (int64_t s = batch.src_lengths[size_t(b)]; s < S; ++s)
                    for (int64_t k = 0; k < K; ++k)
                        padded_grad += std::fabs(source.outputs.grad_data()[(b * S + s) * K + k]);
                if (mask || batch.src_lengths[size_t(b)] == S)
                    CHECK(padded_grad == 0.0);
                else
                    CHECK(padded_grad > 0.0);
            }
        }
    }
}

TEST_CASE("position bias: teacher-forced training and step-by-step decoding see the same bias") {
    const Batch batch = testing::mixed_length_batch(6);
    const int64_t B = batch.batch_size, T = batch.tgt_len;
    for (const char* kind : kAttentionKinds) {
        CAPTURE(kind);
        double loss_without_bias = 0;
        for (double beta : {0.0, 0.9}) {
            ModelConfig c = testing::small_model_config(kind);
            c.position_bias = beta;
            c.position_bias_ratio = 0.7;
            Rng rng(8);
            Seq2Seq model(c, 13, 13, rng);
            model.eval();
            NoGradGuard no_grad;
            const LossOutput training = model.forward_loss(batch);
            const double training_sum = double(training.loss.item()) * double(training.num_tokens);
            // The same sentences decoded one step at a time, fed the gold previous tokens.
            auto state = model.initial_state(model.encode(batch));
            double decoding_sum = 0;
            for (int64_t t = 0; t < T; ++t) {
                std::vector<int32_t> previous;
                for (int64_t b = 0; b < B; ++b) previous.push_back(batch.tgt_in[size_t(b * T + t)]);
                StepResult step = model.step(previous, *state);
                const int64_t V = step.log_probs.size(1);
                for (int64_t b = 0; b < B; ++b) {
                    const int32_t gold = batch.tgt_out[size_t(b * T + t)];
                    if (gold != Vocab::PAD)
                        decoding_sum -= double(step.log_probs.data()[b * V + gold]);
                }
            }
            CHECK(decoding_sum == doctest::Approx(training_sum).epsilon(1e-12));
            if (beta == 0)
                loss_without_bias = training_sum;
            else
                CHECK(std::fabs(training_sum - loss_without_bias) > 1e-6);  // the bias acts
        }
    }
}

TEST_CASE("beam width 1 == greedy with the study switches on") {
    const Batch batch = testing::mixed_length_batch(9);
    ModelConfig c = testing::small_model_config("bahdanau");
    c.position_bias = 0.5;
    c.attention_mask = false;
    Rng rng(9);
    Seq2Seq model(c, 13, 13, rng);
    model.eval();
    NoGradGuard no_grad;
    DecodeOptions options;
    options.max_length = 6;
    auto greedy = greedy_decode(model, model.initial_state(model.encode(batch)), options);
    auto beam = beam_search(model, model.initial_state(model.encode(batch)), options);
    for (size_t b = 0; b < greedy.size(); ++b) {
        CHECK(beam[b][0].tokens == greedy[b].tokens);
        CHECK(beam[b][0].log_prob == doctest::Approx(greedy[b].log_prob).epsilon(1e-12));
    }
}

// ---- config ----------------------------------------------------------------------------------

TEST_CASE("config: model.attention_mask and model.position_bias(_ratio)") {
    Config defaults = Config::from_json(nlohmann::json::object());
    CHECK(defaults.model.attention_mask);
    CHECK(defaults.model.position_bias == 0);
    CHECK(defaults.model.position_bias_ratio == 1);
    nlohmann::json j = {
        {"model",
         {{"attention_mask", false}, {"position_bias", 0.1}, {"position_bias_ratio", 0.5}}}};
    Config c = Config::from_json(j);
    CHECK_FALSE(c.model.attention_mask);
    CHECK(c.model.position_bias == 0.1);
    CHECK(c.model.position_bias_ratio == 0.5);
    Config again = Config::from_json(c.to_json());  // travels with a checkpoint
    CHECK_FALSE(again.model.attention_mask);
    CHECK(again.model.position_bias == 0.1);
    CHECK(again.model.position_bias_ratio == 0.5);

    auto error = [](const nlohmann::json& j) {
        try {
            Config::from_json(j, "c.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error({{"model", {{"position_bias", -0.1}}}}).find("model.position_bias") !=
          std::string::npos);
    CHECK(error({{"model", {{"position_bias_ratio", 0}}}}).find("model.position_bias_ratio") !=
          std::string::npos);
    CHECK(error({{"model", {{"attention_mask", "no"}}}}).find("model.attention_mask") !=
          std::string::npos);
    CHECK(error({{"model", {{"attention", "none"}, {"position_bias", 0.1}}}})
              .find("only with attention") != std::string::npos);
}
