// Coverage inside the attention (layers/attention.h; model.coverage, train.coverage_loss): the
// score with c_s = Σ_{t'<t} α_{t',s} subtracted or learned, gradient-checked in double through
// c_s with every attention kind; the coverage vector carried by the decoder state (training
// equals step-by-step decoding, beam search reorders it, beam 1 equals greedy); See et al.'s
// coverage loss against a hand computation; the config keys and the checkpoint's parameters.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "attention_variants.h"
#include "batch_util.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/training/data_parallel.h"
#include "temp_dir.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::random_tensor;
using seqgrad::testing::scale_parameters;
using seqgrad::testing::Variant;
using seqgrad::testing::variants;

namespace {

const std::vector<int32_t> kLengths{3, 1, 4};  // a batch that mixes lengths, S = 4
const char* const kAttentionKinds[] = {"bahdanau", "luong_dot", "luong_general", "luong_concat"};

// A coverage vector as the decoder makes one: ≥ 0, and 0 at the padded positions.
Tensor some_coverage(uint64_t seed, bool requires_grad) {
    Tensor c = random_tensor({3, 4}, seed, false);
    for (int64_t b = 0; b < 3; ++b)
        for (int64_t s = 0; s < 4; ++s) {
            real& v = c.data()[b * 4 + s];
            v = s < kLengths[size_t(b)] ? std::fabs(v) + real(0.1) : real(0);
        }
    c.set_requires_grad(requires_grad);
    return c;
}

}  // namespace

// ---- one layer -------------------------------------------------------------------------------

TEST_CASE("coverage subtract: score = plain score − β·c_s; learned (Luong): + w·c_s") {
    const Tensor mask = padding_mask(kLengths, 4);
    const Tensor coverage = some_coverage(3, false);
    for (Coverage kind : {Coverage::subtract, Coverage::learned}) {
        for (const Variant& variant : variants()) {
            if (kind == Coverage::learned && variant.name.rfind("bahdanau", 0) == 0) continue;
            CAPTURE(variant.name);
            CAPTURE(to_string(kind));
            Rng rng(20);
            auto attention = variant.make(rng);
            Tensor keys = random_tensor({3, 4, variant.key_dim}, 21, false);
            Tensor query = random_tensor({3, variant.query_dim}, 22, false);
            const Tensor projected = attention->project_keys(keys);
            const AttentionResult plain = attention->forward(query, keys, projected, mask);
            attention->set_coverage(kind, 0.7, rng);
            const AttentionResult covered =
                attention->forward(query, keys, projected, mask, Tensor(), coverage);
            const double w =
                kind == Coverage::subtract ? -0.7 : double(attention->W_cov->weight.item());
            for (int64_t i = 0; i < 12; ++i)
                CHECK(
                    double(covered.scores.data()[i]) ==
                    doctest::Approx(double(plain.scores.data()[i]) + w * double(coverage.data()[i]))
                        .epsilon(1e-14));
            // undefined coverage is c = 0: the plain attention
            CHECK(attention->forward(query, keys, projected, mask).weights.to_vector() ==
                  plain.weights.to_vector());
        }
    }
}

TEST_CASE("coverage learned (Bahdanau, Tu et al.): score = vᵀ tanh(W_q q + W_k k_s + w_c c_s)") {
    Rng rng(30);
    BahdanauAttention attention(4, 6, 7, rng);
    attention.set_coverage(Coverage::learned, 1.0, rng);
    REQUIRE(attention.W_cov);
    CHECK(attention.W_cov->weight.shape() == Shape{7, 1});
    Tensor keys = random_tensor({3, 4, 6}, 31, false);
    Tensor query = random_tensor({3, 4}, 32, false);
    const Tensor coverage = some_coverage(33, false);
    const AttentionResult r =
        attention.forward(query, keys, attention.project_keys(keys), Tensor(), Tensor(), coverage);
    const Tensor qp = attention.W_q.forward(query), kp = attention.project_keys(keys);
    for (int64_t b = 0; b < 3; ++b)
        for (int64_t s = 0; s < 4; ++s) {
            double score = 0;
            for (int64_t a = 0; a < 7; ++a)
                score += double(attention.v.weight.data()[a]) *
                         std::tanh(double(qp.data()[b * 7 + a]) +
                                   double(kp.data()[(b * 4 + s) * 7 + a]) +
                                   double(attention.W_cov->weight.data()[a]) *
                                       double(coverage.data()[b * 4 + s]));
            CHECK(double(r.scores.data()[b * 4 + s]) == doctest::Approx(score).epsilon(1e-13));
        }
    CHECK(attention.named_parameters().back().first == "W_cov.weight");
}

TEST_CASE("gradcheck through c_s: subtract and learned, every kind, two steps c_1 = c_0 + α_0") {
    const Tensor mask = padding_mask(kLengths, 4);
    for (Coverage kind : {Coverage::subtract, Coverage::learned}) {
        for (const Variant& variant : variants()) {
            CAPTURE(variant.name);
            CAPTURE(to_string(kind));
            Rng rng(40);
            auto attention = variant.make(rng);
            attention->set_coverage(kind, 0.9, rng);
            scale_parameters(*attention, 2);
            Tensor keys = random_tensor({3, 4, variant.key_dim}, 41);
            Tensor query1 = random_tensor({3, variant.query_dim}, 42);
            Tensor query2 = random_tensor({3, variant.query_dim}, 43);
            Tensor coverage0 = some_coverage(44, true);
            std::vector<Tensor> inputs{keys, query1, query2, coverage0};
            for (auto& [_, p] : attention->named_parameters()) inputs.push_back(p);
            expect_gradcheck(
                [&](auto&) {
                    Tensor projected = attention->project_keys(keys);
                    AttentionResult a1 =
                        attention->forward(query1, keys, projected, mask, Tensor(), coverage0);
                    Tensor coverage1 = add(coverage0, a1.weights);
                    AttentionResult a2 =
                        attention->forward(query2, keys, projected, mask, Tensor(), coverage1);
                    return concat({a1.context, a1.weights, a2.context, a2.weights}, 1);
                },
                inputs);
        }
    }
}

TEST_CASE("coverage: wrong shapes and a second set_coverage are errors naming what is wrong") {
    Rng rng(50);
    BahdanauAttention attention(4, 6, 7, rng);
    attention.set_coverage(Coverage::subtract, 1.0, rng);
    Tensor keys = random_tensor({3, 4, 6}, 51, false);
    Tensor query = random_tensor({3, 4}, 52, false);
    CHECK_THROWS_WITH_AS(attention.forward(query, keys, attention.project_keys(keys), Tensor(),
                                           Tensor(), Tensor::zeros({3, 5})),
                         doctest::Contains("coverage [3,5] for keys [3,4,6]: expected [3,4]"),
                         Error);
    CHECK_THROWS_AS(attention.set_coverage(Coverage::learned, 1.0, rng), Error);
    CHECK_THROWS_WITH_AS(parse_coverage("tu"), doctest::Contains("expected \"none\""), Error);
}

// ---- whole models ----------------------------------------------------------------------------

TEST_CASE("coverage: teacher-forced training equals step-by-step decoding (1e-12, double)") {
    const Batch batch = testing::mixed_length_batch(6);
    const int64_t B = batch.batch_size, T = batch.tgt_len, S = batch.src_len;
    for (const char* kind : kAttentionKinds) {
        for (const char* coverage : {"subtract", "learned"}) {
            CAPTURE(kind);
            CAPTURE(coverage);
            ModelConfig c = testing::small_model_config(kind);
            c.coverage = coverage;
            c.coverage_weight = 0.8;
            Rng rng(8);
            Seq2Seq model(c, 13, 13, rng);
            for (auto& [_, p] : model.decoder.attention->named_parameters())
                for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] *= 3;  // a coverage that acts
            model.eval();
            NoGradGuard no_grad;
            const LossOutput training = model.forward_loss(batch);
            const double training_sum = double(training.loss.item()) * double(training.num_tokens);
            auto state = model.initial_state(model.encode(batch));
            std::vector<double> summed(size_t(B * S), 0);  // Σ_t α_t, to compare with the state
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
                for (int64_t i = 0; i < B * S; ++i)
                    summed[size_t(i)] += double(step.attention.data()[i]);
            }
            CHECK(decoding_sum == doctest::Approx(training_sum).epsilon(1e-12));
            // the state carries c = Σ_t α_t, and 0 at the padded source positions
            const Tensor carried = state->coverage;
            REQUIRE(carried.shape() == Shape{B, S});
            for (int64_t b = 0; b < B; ++b)
                for (int64_t s = 0; s < S; ++s) {
                    CHECK(double(carried.data()[b * S + s]) ==
                          doctest::Approx(summed[size_t(b * S + s)]).epsilon(1e-12));
                    if (s >= batch.src_lengths[size_t(b)]) CHECK(carried.data()[b * S + s] == 0);
                }
        }
    }
}

TEST_CASE("coverage: beam 1 equals greedy; beam search carries each hypothesis's own c") {
    const Batch batch = testing::mixed_length_batch(9);
    for (const char* kind : {"bahdanau", "luong_general"}) {
        for (const char* coverage : {"subtract", "learned"}) {
            CAPTURE(kind);
            CAPTURE(coverage);
            ModelConfig c = testing::small_model_config(kind);
            c.coverage = coverage;
            c.coverage_weight = 2.0;
            Rng rng(9);
            Seq2Seq model(c, 13, 13, rng);
            for (auto& [_, p] : model.decoder.attention->named_parameters())
                for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] *= 3;
            model.eval();
            NoGradGuard no_grad;
            DecodeOptions options;
            options.max_length = 6;
            options.length_penalty = DecodeOptions::none;
            const auto initial = model.initial_state(model.encode(batch));
            auto greedy = greedy_decode(model, model.initial_state(model.encode(batch)), options);
            auto beam1 = beam_search(model, model.initial_state(model.encode(batch)), options);
            for (size_t b = 0; b < greedy.size(); ++b) {
                CHECK(beam1[b][0].tokens == greedy[b].tokens);
                CHECK(beam1[b][0].log_prob == doctest::Approx(greedy[b].log_prob).epsilon(1e-12));
            }
            // Beam 3: rescoring each best hypothesis alone, one row, gives its log-probability
            // (it would not if the beams' coverage vectors were not reordered with them).
            options.beam_size = 3;
            auto beam3 = beam_search(model, model.initial_state(model.encode(batch)), options);
            for (int32_t b = 0; b < int32_t(beam3.size()); ++b) {
                const Hypothesis& best = beam3[size_t(b)][0];
                std::unique_ptr<DecoderState> row = initial->select({b});
                int32_t previous = Vocab::SOS;
                double log_prob = 0;
                for (int32_t token : best.tokens) {
                    StepResult step = model.step({previous}, *row);
                    log_prob += double(step.log_probs.data()[token]);
                    previous = token;
                }
                CHECK(log_prob == doctest::Approx(best.log_prob).epsilon(1e-9));
            }
        }
    }
}

TEST_CASE("coverage loss: λ (1/N) Σ_t Σ_s min(α_{t,s}, c_{t,s}) against a hand computation") {
    const Batch batch = testing::mixed_length_batch(11);
    const int64_t B = batch.batch_size, T = batch.tgt_len, S = batch.src_len;
    for (const char* kind : {"bahdanau", "luong_dot"}) {
        CAPTURE(kind);
        ModelConfig c = testing::small_model_config(kind);
        c.coverage = "learned";
        Rng rng(12);
        Seq2Seq model(c, 13, 13, rng);
        NoGradGuard no_grad;
        // by hand: the attention of every step, decoded one step at a time with the gold tokens
        auto state = model.initial_state(model.encode(batch));
        std::vector<double> coverage(size_t(B * S), 0);
        double overlap = 0;
        for (int64_t t = 0; t < T; ++t) {
            std::vector<int32_t> previous;
            for (int64_t b = 0; b < B; ++b) previous.push_back(batch.tgt_in[size_t(b * T + t)]);
            const StepResult step = model.step(previous, *state);
            for (int64_t b = 0; b < B; ++b)
                for (int64_t s = 0; s < S; ++s) {
                    const double a = double(step.attention.data()[b * S + s]);
                    if (batch.tgt_out[size_t(b * T + t)] != Vocab::PAD)
                        overlap += std::min(a, coverage[size_t(b * S + s)]);
                    coverage[size_t(b * S + s)] += a;
                }
        }
        CHECK(overlap > 0.1);
        const LossOutput plain = model.forward_loss(batch);  // λ = 0
        LossOptions half;
        half.coverage_loss = 0.5;
        const LossOutput with_loss = model.forward_loss(batch, half);  // training mode: λ counts
        const double N = double(plain.num_tokens);
        CHECK(double(with_loss.loss.item()) ==
              doctest::Approx(double(plain.loss.item()) + 0.5 * overlap / N).epsilon(1e-12));
        model.eval();  // a regulariser: validation (eval mode) reports the cross-entropy
        CHECK(double(model.forward_loss(batch, half).loss.item()) ==
              doctest::Approx(double(plain.loss.item())).epsilon(1e-14));
    }
}

TEST_CASE("coverage loss: a whole model's gradient checks in double (learned, Bahdanau, Luong)") {
    const Batch batch = testing::mixed_length_batch(13);
    for (const char* kind : {"bahdanau", "luong_concat"}) {
        CAPTURE(kind);
        ModelConfig c = testing::small_model_config(kind);
        c.embedding_size = 3;
        c.hidden_size = 4;
        c.attention_size = 3;
        c.coverage = "learned";
        Rng rng(14);
        Seq2Seq model(c, 13, 13, rng);
        LossOptions one;
        one.coverage_loss = 1.0;
        std::vector<Tensor> inputs;
        for (auto& [name, p] : model.named_parameters())
            if (name.find("decoder.attention") == 0 || name.find("decoder.cell") == 0)
                inputs.push_back(p);
        expect_gradcheck([&](auto&) { return model.forward_loss(batch, one).loss; }, inputs);
    }
}

namespace {

std::vector<double> gradients_of(const Module& model) {
    std::vector<double> g;
    for (const Tensor& p : model.parameters())
        for (real x : p.grad().to_vector()) g.push_back(double(x));
    return g;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
    return worst;
}

}  // namespace

TEST_CASE("coverage loss: unsorted rows, sorted rows and 1, 2, 3 threads give one loss") {
    const Batch batch = testing::mixed_length_batch(3);
    REQUIRE(!is_sorted_by_target_length(batch));
    ModelConfig c = testing::small_model_config("bahdanau");
    c.coverage = "learned";
    Rng rng(18);
    Seq2Seq model(c, 13, 13, rng);
    LossOptions options;
    options.coverage_loss = 0.7;
    // unsorted: rows past their end run on with PAD targets, which the loss must not count
    LossOutput unsorted = model.forward_loss(batch, model.encode(batch), options);
    unsorted.loss.backward();
    const std::vector<double> g = gradients_of(model);
    model.zero_grad();
    LossOutput sorted = model.forward_loss(batch, options);
    sorted.loss.backward();
    CHECK(std::fabs(double(sorted.loss.item()) - double(unsorted.loss.item())) < 1e-12);
    CHECK(max_difference(gradients_of(model), g) < 1e-12);
    for (int threads : {1, 2, 3}) {  // each shard's coverage loss weighs n_k / N, as its CE
        CAPTURE(threads);
        model.zero_grad();
        DataParallel parallel(threads);
        Rng shard_seeds(5);
        LossOutput out = parallel.forward_backward(model, batch, options, shard_seeds);
        CHECK(std::fabs(double(out.loss.item()) - double(sorted.loss.item())) < 1e-12);
        CHECK(max_difference(gradients_of(model), g) < 1e-12);
    }
}

TEST_CASE("coverage: a forced prefix builds c up like any other step") {
    const Batch batch = testing::mixed_length_batch(19);
    ModelConfig c = testing::small_model_config("luong_concat");
    c.coverage = "subtract";
    c.coverage_weight = 2;
    Rng rng(20);
    Seq2Seq model(c, 13, 13, rng);
    model.eval();
    NoGradGuard no_grad;
    DecodeOptions options;
    options.beam_size = 3;
    options.max_length = 6;
    options.length_penalty = DecodeOptions::none;
    const auto initial = model.initial_state(model.encode(batch));
    BeamSearchExtras extras;
    extras.forced_prefixes.assign(size_t(batch.batch_size), {7, 8});
    auto results = beam_search(model, model.initial_state(model.encode(batch)), options, {}, extras);
    for (int32_t b = 0; b < int32_t(results.size()); ++b) {
        const Hypothesis& best = results[size_t(b)][0];
        REQUIRE(best.tokens.size() >= 2);
        CHECK(best.tokens[0] == 7);
        CHECK(best.tokens[1] == 8);
        std::unique_ptr<DecoderState> row = initial->select({b});
        int32_t previous = Vocab::SOS;
        double log_prob = 0;
        for (int32_t token : best.tokens) {
            StepResult step = model.step({previous}, *row);
            log_prob += double(step.log_probs.data()[token]);
            previous = token;
        }
        CHECK(log_prob == doctest::Approx(best.log_prob).epsilon(1e-9));
    }
}

TEST_CASE("coverage: the checkpoint holds decoder.attention.W_cov.weight and loads it back") {
    testing::TempDir dir("coverage_checkpoint");
    ModelConfig c = testing::small_model_config("bahdanau");
    c.coverage = "learned";
    Rng rng(15);
    Seq2Seq model(c, 13, 13, rng);
    bool found = false;
    for (auto& [name, p] : model.named_parameters())
        if (name == "decoder.attention.W_cov.weight") found = p.shape() == Shape{4, 1};
    CHECK(found);
    save_checkpoint(dir.file("m.safetensors"), model, {}, nlohmann::json::object());
    Rng other_rng(16);
    Seq2Seq other(c, 13, 13, other_rng);
    load_parameters(load_checkpoint(dir.file("m.safetensors")), other);
    CHECK(other.decoder.attention->W_cov->weight.to_vector() ==
          model.decoder.attention->W_cov->weight.to_vector());
    // a model without coverage refuses it, naming the parameter
    Rng plain_rng(17);
    Seq2Seq plain(testing::small_model_config("bahdanau"), 13, 13, plain_rng);
    CHECK_THROWS_WITH_AS(load_parameters(load_checkpoint(dir.file("m.safetensors")), plain),
                         doctest::Contains("decoder.attention.W_cov.weight"), Error);
}

// ---- config ----------------------------------------------------------------------------------

namespace {

std::string config_error(const nlohmann::json& j) {
    try {
        Config::from_json(j, "c.json");
    } catch (const Error& e) {
        return std::string(e.what());
    }
    return std::string();
}

}  // namespace

TEST_CASE("config: model.coverage, model.coverage_weight, train.coverage_loss") {
    const Config defaults = Config::from_json(nlohmann::json::object());
    CHECK(defaults.model.coverage == "none");
    CHECK(defaults.model.coverage_weight == 1.0);
    CHECK(defaults.train.coverage_loss == 0);
    const Config c =
        Config::from_json({{"model", {{"coverage", "subtract"}, {"coverage_weight", 0.5}}},
                           {"train", {{"coverage_loss", 1.0}}}});
    CHECK(c.model.coverage == "subtract");
    CHECK(c.model.coverage_weight == 0.5);
    CHECK(c.train.coverage_loss == 1.0);
    const Config again = Config::from_json(c.to_json());  // travels with the run
    CHECK(again.model.coverage == "subtract");
    CHECK(again.model.coverage_weight == 0.5);
    CHECK(again.train.coverage_loss == 1.0);
    nlohmann::json learned_json = c.to_json();
    learned_json["model"]["coverage"] = "learned";
    learned_json["model"]["coverage_weight"] = 1.0;
    const Config learned = Config::from_json(learned_json, "x");
    CHECK(Config::from_json(learned.to_json()).model.coverage == "learned");

    const std::string unknown = config_error({{"model", {{"coverage", "tu"}}}});
    CHECK(unknown.find("model.coverage") != std::string::npos);
    CHECK(unknown.find("\"subtract\"") != std::string::npos);
    const std::string no_attention =
        config_error({{"model", {{"coverage", "learned"}, {"attention", "none"}}}});
    CHECK(no_attention.find("model.coverage") != std::string::npos);
    CHECK(no_attention.find("model.attention") != std::string::npos);
    const std::string transformer =
        config_error({{"model", {{"coverage", "subtract"}, {"kind", "transformer"}}}});
    CHECK(transformer.find("model.coverage") != std::string::npos);
    CHECK(transformer.find("model.kind") != std::string::npos);
    const std::string loss_alone = config_error({{"train", {{"coverage_loss", 1.0}}}});
    CHECK(loss_alone.find("train.coverage_loss") != std::string::npos);
    CHECK(loss_alone.find("model.coverage") != std::string::npos);
    const std::string beta_alone =
        config_error({{"model", {{"coverage", "learned"}, {"coverage_weight", 2.0}}}});
    CHECK(beta_alone.find("model.coverage_weight") != std::string::npos);
    CHECK(beta_alone.find("model.coverage ") != std::string::npos);
    CHECK(config_error({{"model", {{"coverage_weight", -1}}}}).find("model.coverage_weight") !=
          std::string::npos);
    CHECK(config_error({{"train", {{"coverage_loss", -1}}}}).find("train.coverage_loss") !=
          std::string::npos);
}
