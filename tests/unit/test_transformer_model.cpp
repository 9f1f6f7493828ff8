// The Transformer translation model (models/model/transformer.h) in double: equal to the same
// model built in PyTorch (logits, label-smoothed loss, every parameter's gradient to 1e-12),
// gradient-checked, decoding one token at a time with cached keys and values gives the
// teacher-forced pass's log-probabilities to 1e-12, beam width 1 equals greedy decoding, and the
// config's Transformer keys are checked with errors that name them.
#include "batch_util.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/transformer.h"
#include "seqgrad/models/training/grad_norms.h"
#include "transformer_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

Batch reference_batch(const nlohmann::json& c) {
    Batch b;
    b.batch_size = int(c.at("src_lengths").size());
    b.src_len = c.at("src_len");
    b.tgt_len = c.at("tgt_len");
    b.src_ids = c.at("src_ids").get<std::vector<int32_t>>();
    b.src_lengths = c.at("src_lengths").get<std::vector<int32_t>>();
    b.tgt_in = c.at("tgt_in").get<std::vector<int32_t>>();
    b.tgt_out = c.at("tgt_out").get<std::vector<int32_t>>();
    b.tgt_lengths = c.at("tgt_lengths").get<std::vector<int32_t>>();
    for (int32_t n : b.tgt_lengths) b.num_target_tokens += n;
    return b;
}

}  // namespace

TEST_CASE("the Transformer model == the same model in PyTorch (logits, loss, gradients)") {
    const nlohmann::json c = read_transformer_reference().at("model");
    ModelConfig config = tiny_transformer_config(false, "learned");
    config.max_positions = c.at("max_positions");
    Rng rng(1);
    Transformer model(config, c.at("source_vocab"), c.at("target_vocab"), rng);
    load_reference(model, c.at("parameters"));
    const Batch batch = reference_batch(c);
    TransformerForward f = model.forward(batch);
    const Tensor logits = model.project(f.decoded);
    CHECK(max_abs_diff(logits, tensor_of(c.at("logits"))) <= 1e-12);
    LossOutput out = model.forward_loss(batch, LossOptions{1.0, c.at("label_smoothing").get<double>()});
    out.loss.backward();
    CHECK(out.num_tokens == 9);
    CHECK(std::fabs(out.loss.item() - c.at("loss").get<double>()) <= 1e-12);
    CHECK(check_parameter_grads(model, c.at("grad_parameters")) == 4 + 2 * 12 + 2 + 2 * 18 + 2 + 2);
}

TEST_CASE(
    "the Transformer model passes gradcheck (post-norm sinusoidal; pre-norm learned shared)") {
    const Batch batch = mixed_length_batch(3);
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        ModelConfig config =
            tiny_transformer_config(norm_first, norm_first ? "learned" : "sinusoidal");
        config.share_embeddings = norm_first ? "target" : "none";
        config.encoder_layers = 1;
        Rng rng(2);
        Transformer model(config, 13, 13, rng);
        if (norm_first) {  // the output projection is the target embedding: only a bias of its own
            CHECK(model.named_parameters().front().first == "out_bias");
            CHECK(!model.out);
        }
        expect_gradcheck([&](auto&) { return model.forward_loss(batch, LossOptions{1.0, 0.1}).loss; },
                         model.parameters());
    }
}

TEST_CASE(
    "incremental decoding's log-probabilities == the teacher-forced pass's; beam 1 == greedy") {
    const Batch batch = mixed_length_batch(4);
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        Rng rng(5);
        Transformer model(tiny_transformer_config(norm_first, "learned"), 13, 13, rng);
        model.eval();
        NoGradGuard no_grad;
        TransformerForward f = model.forward(batch, true);
        const Tensor full = log_softmax(model.project(f.decoded));  // [B,T,V]
        const Tensor cross = average_heads(f.weights.back());       // [B,T,S]
        auto state = model.start_decoding(batch);
        const int64_t B = batch.batch_size, T = batch.tgt_len, S = batch.src_len, V = 13;
        for (int64_t t = 0; t < T; ++t) {
            CAPTURE(t);
            std::vector<int32_t> previous;
            for (int64_t b = 0; b < B; ++b) previous.push_back(batch.tgt_in[size_t(b * T + t)]);
            StepResult r = model.step(previous, *state);
            REQUIRE(r.log_probs.shape() == Shape{B, V});
            REQUIRE(r.attention.shape() == Shape{B, S});
            double worst = 0, worst_attention = 0;
            for (int64_t b = 0; b < B; ++b) {
                if (t >= batch.tgt_lengths[size_t(b)]) continue;  // past the row's target
                for (int64_t v = 0; v < V; ++v)
                    worst = std::max(worst, std::fabs(r.log_probs.data()[b * V + v] -
                                                      full.data()[(b * T + t) * V + v]));
                for (int64_t s = 0; s < S; ++s)
                    worst_attention =
                        std::max(worst_attention, std::fabs(r.attention.data()[b * S + s] -
                                                            cross.data()[(b * T + t) * S + s]));
            }
            CHECK(worst <= 1e-12);
            CHECK(worst_attention <= 1e-12);
        }
        DecodeOptions options;
        options.max_length = 7;
        std::vector<Hypothesis> greedy =
            greedy_decode(model, model.start_decoding(batch), options, batch.src_lengths);
        options.beam_size = 1;
        std::vector<std::vector<Hypothesis>> beam =
            beam_search(model, model.start_decoding(batch), options, batch.src_lengths);
        REQUIRE(beam.size() == greedy.size());
        for (size_t i = 0; i < greedy.size(); ++i) {
            CHECK(beam[i][0].tokens == greedy[i].tokens);
            CHECK(beam[i][0].log_prob == greedy[i].log_prob);
        }
        options.beam_size = 3;
        options.nbest = 3;
        options.no_repeat_ngram_size = 2;
        options.coverage_penalty = 0.2;
        for (const auto& nbest :
             beam_search(model, model.start_decoding(batch), options, batch.src_lengths))
            CHECK(nbest.size() == 3);
    }
}

TEST_CASE("model.kind \"transformer\": keys, defaults and errors that name the key") {
    using nlohmann::json;
    auto model_of = [](json model) {
        return Config::from_json({{"model", model}}, "c.json").model;
    };
    ModelConfig m =
        model_of({{"kind", "transformer"}, {"layers", 3}, {"d_model", 16}, {"heads", 4}});
    CHECK(m.encoder_layers == 3);
    CHECK(m.decoder_layers == 3);
    CHECK(Config::from_json(Config::from_json({{"model", {{"kind", "transformer"}}}}).to_json())
              .model.kind == "transformer");
    CHECK(model_of(json::object()).kind == "rnn");
    CHECK_THROWS_WITH_AS(model_of({{"kind", "transformer"}, {"d_model", 10}, {"heads", 4}}),
                         "c.json: model.d_model: 10 is not divisible by model.heads 4 (each head "
                         "gets d_model / heads dims)",
                         Error);
    CHECK_THROWS_WITH_AS(model_of({{"kind", "transformer"}, {"heads", 0}}),
                         doctest::Contains("model.heads"), Error);
    CHECK_THROWS_WITH_AS(model_of({{"heads", 4}}),
                         "c.json: model.heads: only read with model.kind \"transformer\" (the "
                         "kind is \"rnn\")",
                         Error);
    CHECK_THROWS_WITH_AS(model_of({{"kind", "transformer"}, {"attention", "luong_dot"}}),
                         doctest::Contains("model.attention: not read with model.kind"), Error);
    CHECK_THROWS_WITH_AS(model_of({{"kind", "transformer"}, {"layers", 2}, {"encoder_layers", 1}}),
                         doctest::Contains("model.layers: give either"), Error);
    CHECK_THROWS_WITH_AS(model_of({{"kind", "transformer"}, {"positional", "rotary"}}),
                         doctest::Contains("model.positional"), Error);
    Rng rng(1);
    Transformer model(tiny_transformer_config(false, "sinusoidal"), 9, 9, rng);
    CHECK_THROWS_WITH_AS(model.forward_loss(mixed_length_batch(1), LossOptions{0.5}),
                         doctest::Contains("train.teacher_forcing must be 1"), Error);
    CHECK(make_model(tiny_transformer_config(false, "learned"), 9, 9, rng)->vocab_size() == 9);
}

TEST_CASE("FusedLayers::attention (SEQGRAD_DISABLE=fused_attention) reaches every attention") {
    const Batch batch = mixed_length_batch(8);
    Rng rng_fused(9), rng_composed(9);
    ModelConfig config = tiny_transformer_config(false, "sinusoidal");
    Transformer fused(config, 13, 13, rng_fused);
    Transformer composed(config, 13, 13, rng_composed, FusedLayers{true, false});
    for (const auto& layer : composed.transformer.encoder.layers)
        CHECK(!layer->self_attn.use_fused);
    for (const auto& layer : composed.transformer.decoder.layers) {
        CHECK(!layer->self_attn.use_fused);
        CHECK(!layer->multihead_attn.use_fused);
    }
    CHECK(fused.transformer.decoder.layers[0]->multihead_attn.use_fused);
    CHECK(std::fabs(fused.forward_loss(batch).loss.item() -
                    composed.forward_loss(batch).loss.item()) < 1e-12);
}

TEST_CASE("the gradient-norm groups of a Transformer: encoder, cross-attention, decoder, output") {
    Rng rng(10);
    Transformer model(tiny_transformer_config(false, "sinusoidal"), 13, 13, rng);
    model.forward_loss(mixed_length_batch(11)).loss.backward();
    double sq[4] = {0, 0, 0, 0};  // by the documented prefixes
    for (const auto& [name, p] : model.named_parameters()) {
        double sum = 0;
        for (real g : p.grad().to_vector()) sum += double(g) * double(g);
        const bool encoder =
            name.rfind("transformer.encoder.", 0) == 0 || name.rfind("source_embedding.", 0) == 0;
        const bool cross = name.find(".multihead_attn.") != std::string::npos;
        const bool output = name.rfind("out.", 0) == 0;
        sq[encoder ? 0 : cross ? 1 : output ? 3 : 2] += sum;
    }
    const GroupGradNorms n = group_grad_norms(model);
    CHECK(n.encoder == doctest::Approx(std::sqrt(sq[0])).epsilon(1e-12));
    CHECK(n.attention == doctest::Approx(std::sqrt(sq[1])).epsilon(1e-12));
    CHECK(n.decoder == doctest::Approx(std::sqrt(sq[2])).epsilon(1e-12));
    CHECK(n.output == doctest::Approx(std::sqrt(sq[3])).epsilon(1e-12));
    for (double g : {n.encoder, n.attention, n.decoder, n.output}) CHECK(g > 0);
}
