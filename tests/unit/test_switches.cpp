// Every optimisation the performance ladder turns off (the SEQGRAD_DISABLE switches of
// autograd/kernels/switches.h and the loss and decoder forms of bench/ladder_model.h) gives the
// same training loss and gradients as with everything on (in double, to 1e-10), for each
// attention kind, and so do the Transformer's rungs (bench/ladder_transformer.h); and a bad
// SEQGRAD_DISABLE value is an error naming it.
#include <cmath>

#include "batch_util.h"
#include "bench/ladder_transformer.h"
#include "ladder_variants.h"
#include "seqgrad/autograd/kernels/switches.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/model/transformer.h"
#include "test_util.h"

using namespace seqgrad;

namespace {

Batch mixed_batch() {
    return testing::mixed_length_batch(5);
}

struct LossAndGradients {
    double loss;
    int64_t tokens, correct;
    std::vector<std::vector<real>> gradients;
};

// A fresh model (the same seed: the same weights) built and run as the variant says (its switches
// in force), one backward.
LossAndGradients run(const std::string& attention, double label_smoothing,
                     const testing::LadderVariant& variant) {
    set_switches(variant.switches);
    Rng rng(17);
    const ModelConfig config = testing::small_model_config(attention);
    Seq2Seq model(config, 13, 13, rng, testing::fused_layers(config, variant));
    const bench::LadderModel ladder(model, variant.loss);
    LossOutput out = ladder.forward_loss(mixed_batch(), label_smoothing);
    out.loss.backward();
    LossAndGradients r{double(out.loss.item()), out.num_tokens, out.num_correct, {}};
    for (const Tensor& p : model.parameters()) r.gradients.push_back(p.grad().to_vector());
    return r;
}

struct RestoreSwitches {
    Switches saved = switches();
    ~RestoreSwitches() { set_switches(saved); }
};

}  // namespace

TEST_CASE("switches: each optimisation off gives the loss and gradients of everything on") {
    RestoreSwitches restore;
    const char* names[] = {"fused_gru",
                           "fused_attention",
                           "fused_loss",
                           "real_tokens",
                           "one_projection",
                           "cached_keys",
                           "sort_by_length",
                           "shared_steps",
                           "packed",
                           "small_m",
                           "buffer_pool",
                           "fused_gru,fused_loss,fused_attention,real_tokens,one_projection,"
                           "cached_keys,sort_by_length,shared_steps,packed,small_m,buffer_pool"};
    for (const char* attention : {"bahdanau", "luong_general", "luong_concat", "none"})
        for (double smoothing : {0.0, 0.1}) {
            const LossAndGradients all_on = run(attention, smoothing, testing::ladder_variant(""));
            for (const char* off : names) {
                INFO(attention << ", label smoothing " << smoothing << ", off: " << off);
                const LossAndGradients r = run(attention, smoothing, testing::ladder_variant(off));
                CHECK(std::fabs(r.loss - all_on.loss) <= 1e-12 * std::fabs(all_on.loss));
                CHECK(r.tokens == all_on.tokens);
                CHECK(r.correct == all_on.correct);
                REQUIRE(r.gradients.size() == all_on.gradients.size());
                double worst = 0;
                for (size_t i = 0; i < r.gradients.size(); ++i)
                    for (size_t j = 0; j < r.gradients[i].size(); ++j)
                        worst = std::max(worst, std::fabs(double(r.gradients[i][j]) -
                                                          double(all_on.gradients[i][j])));
                CHECK(worst < 1e-10);
            }
        }
}

// A small Transformer's loss and gradients with the ladder's rungs `off` undone.
LossAndGradients run_transformer(const std::string& off) {
    ModelConfig config;
    config.kind = "transformer";
    config.d_model = 8;
    config.heads = 2;
    config.ff_size = 16;
    config.encoder_layers = config.decoder_layers = 2;
    Rng rng(5);
    Transformer model(config, 13, 13, rng);
    const bench::TransformerLadderOptions o = bench::parse_transformer_ladder_off(off);
    bench::set_transformer_ladder(model, o);
    Tensor loss = bench::transformer_ladder_loss(model, mixed_batch(), o);
    loss.backward();
    LossAndGradients r{double(loss.item()), 0, 0, {}};
    for (const Tensor& p : model.parameters()) r.gradients.push_back(p.grad().to_vector());
    return r;
}

TEST_CASE("switches: each of the Transformer's rungs off gives the loss and gradients of all on") {
    const LossAndGradients all_on = run_transformer("");
    for (const char* off : {"fused_attention", "fused_layer_norm", "fused_loss", "packed_sentences",
                            "fused_attention,fused_layer_norm,fused_loss"}) {
        INFO("off: " << off);
        const LossAndGradients r = run_transformer(off);
        CHECK(std::fabs(r.loss - all_on.loss) <= 1e-12 * std::fabs(all_on.loss));
        REQUIRE(r.gradients.size() == all_on.gradients.size());
        double worst = 0;
        for (size_t i = 0; i < r.gradients.size(); ++i)
            for (size_t j = 0; j < r.gradients[i].size(); ++j)
                worst = std::max(
                    worst, std::fabs(double(r.gradients[i][j]) - double(all_on.gradients[i][j])));
        CHECK(worst < 1e-10);
    }
    CHECK(!bench::parse_transformer_ladder_off("fused_loss").packed_sentences);
    CHECK(bench::parse_transformer_ladder_off("packed_sentences").fused_loss);
    CHECK_THROWS_WITH_AS(bench::parse_transformer_ladder_off("fused_gru"),
                         doctest::Contains("unknown rung 'fused_gru' for the Transformer"),
                         std::runtime_error);
}

TEST_CASE(
    "switches: SEQGRAD_DISABLE names are checked, and real_tokens off implies sort_by_length off") {
    CHECK(parse_disabled(nullptr).fused_gru);
    CHECK(parse_disabled("").packed);
    const Switches s = parse_disabled("packed,,small_m");
    CHECK(!s.packed);
    CHECK(!s.small_m);
    CHECK(s.shared_steps);
    CHECK(!bench::parse_ladder_off("real_tokens").sort_by_length);
    CHECK(bench::parse_ladder_off("").all_on());
    CHECK_THROWS_WITH_AS(bench::parse_ladder_off("real_token"),
                         doctest::Contains("--ladder-off: unknown rung 'real_token'"),
                         std::runtime_error);
    // the ladder's loss and decoder forms are not switches of the process
    CHECK_THROWS_WITH_AS(parse_disabled("real_tokens"),
                         doctest::Contains("bench/train_throughput --ladder-off"), Error);
    CHECK_THROWS_WITH_AS(parse_disabled("packed,fused_grux"),
                         doctest::Contains("SEQGRAD_DISABLE: unknown name 'fused_grux' (known: "
                                           "fused_gru, fused_attention"),
                         Error);
}

TEST_CASE("switches: the layer options reach the layers through the model's constructor") {
    for (const char* cell : {"gru", "lstm", "rnn"}) {
        INFO(cell);
        ModelConfig config = testing::small_model_config("bahdanau");
        config.cell = cell;
        FusedLayers fused =
            fused_layers(config.cell, parse_disabled(("fused_" + std::string(cell)).c_str()));
        CHECK(!fused.cells);
        CHECK(fused.attention);
        fused = fused_layers(config.cell, parse_disabled("fused_attention"));
        CHECK(fused.cells);
        CHECK(!fused.attention);
    }
    const ModelConfig config = testing::small_model_config("bahdanau");
    for (bool fused : {true, false}) {
        Rng rng(3);
        Seq2Seq model(config, 13, 13, rng, FusedLayers{fused, fused});
        CHECK(model.encoder.recurrent->use_fused == fused);
        CHECK(model.decoder.cells[0]->use_fused == fused);
        const auto* attention =
            dynamic_cast<const BahdanauAttention*>(model.decoder.attention.get());
        REQUIRE(attention);
        CHECK(attention->use_fused == fused);
    }
}
