// The model options of models/run/config.h beyond the attention kind: model.decoder_layers,
// model.output_layer, model.init, model.attention_bias, model.encoder_hidden_size (and, with the
// recurrent cells, model.cell). For every combination: the teacher-forced loss equals the loss of
// the same tokens fed one step at a time through Seq2Seq::step (the DecoderState carries every
// layer), the forward record's attention is the step decoder's row for row, beam width 1 equals
// greedy, and every optimisation switch gives the same loss. Then the parameter-parity test
// against the PyTorch tutorial model.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "batch_util.h"
#include "ladder_variants.h"
#include "seqgrad/autograd/kernels/switches.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/model/seq2seq.h"
#include "test_util.h"

using namespace seqgrad;

namespace {

struct OptionCase {
    std::string name;
    ModelConfig config;
};

// Small models (E = 5, H = 6, A = 4) covering every option at least once.
std::vector<OptionCase> option_cases() {
    std::vector<OptionCase> cases;
    auto add = [&](const std::string& name, const std::string& attention, auto&& edit) {
        ModelConfig c = testing::small_model_config(attention);
        edit(c);
        cases.push_back({name, c});
    };
    add("bahdanau, 2 decoder layers, deep output", "bahdanau", [](ModelConfig& c) {
        c.decoder_layers = 2;
        c.output_layer = "deep";
    });
    add("luong_general + input feeding, bidirectional 2-layer encoder, 2 decoder layers, deep",
        "luong_general", [](ModelConfig& c) {
            c.bidirectional = true;
            c.encoder_layers = 2;
            c.decoder_layers = 2;
            c.output_layer = "deep";
        });
    add("luong_dot, bidirectional encoder of 3 per direction, 3 decoder layers", "luong_dot",
        [](ModelConfig& c) {
            c.bidirectional = true;
            c.encoder_hidden_size = 3;
            c.decoder_layers = 3;
        });
    add("none, deep output, init normal", "none", [](ModelConfig& c) {
        c.output_layer = "deep";
        c.init = "normal";
    });
    add("bahdanau without key bias, encoder 4 != decoder 6, 2-layer encoder, 2 decoder layers",
        "bahdanau", [](ModelConfig& c) {
            c.attention_bias = false;
            c.encoder_hidden_size = 4;
            c.encoder_layers = 2;
            c.decoder_layers = 2;
        });
    // the other cells: the LSTM's (h, c) through the bridges, the stack and the beam
    add("lstm, bahdanau, bidirectional 2-layer encoder, 2 decoder layers, deep", "bahdanau",
        [](ModelConfig& c) {
            c.cell = "lstm";
            c.bidirectional = true;
            c.encoder_layers = 2;
            c.decoder_layers = 2;
            c.output_layer = "deep";
        });
    add("lstm, luong_general + input feeding, encoder 4 != decoder 6", "luong_general",
        [](ModelConfig& c) {
            c.cell = "lstm";
            c.encoder_hidden_size = 4;
        });
    add("lstm, no attention, 2-layer encoder and decoder", "none", [](ModelConfig& c) {
        c.cell = "lstm";
        c.encoder_layers = 2;
        c.decoder_layers = 2;
    });
    add("rnn, bahdanau, bidirectional, deep output", "bahdanau", [](ModelConfig& c) {
        c.cell = "rnn";
        c.bidirectional = true;
        c.output_layer = "deep";
    });
    add("rnn, luong_concat, 2 decoder layers", "luong_concat", [](ModelConfig& c) {
        c.cell = "rnn";
        c.decoder_layers = 2;
    });
    return cases;
}

// Σ_t −log p(y_t | y_<t, x) over the real tokens, by Seq2Seq::step from initial_state, / tokens.
double stepwise_loss(const Seq2Seq& model, const Batch& batch) {
    NoGradGuard no_grad;
    auto state = model.initial_state(model.encode(batch));
    const int64_t B = batch.batch_size, T = batch.tgt_len;
    double total = 0;
    int64_t tokens = 0;
    for (int64_t t = 0; t < T; ++t) {
        std::vector<int32_t> previous(static_cast<size_t>(B));
        for (int64_t b = 0; b < B; ++b) previous[size_t(b)] = batch.tgt_in[size_t(b * T + t)];
        StepResult r = model.step(previous, *state);
        const int64_t V = r.log_probs.size(1);
        for (int64_t b = 0; b < B; ++b) {
            const int32_t y = batch.tgt_out[size_t(b * T + t)];
            if (y == Vocab::PAD) continue;
            total -= double(r.log_probs.data()[b * V + y]);
            tokens++;
        }
    }
    return total / double(tokens);
}

struct RestoreSwitches {
    Switches saved = switches();
    ~RestoreSwitches() { set_switches(saved); }
};

}  // namespace

TEST_CASE("model options: the teacher-forced loss equals the step-by-step decoder's") {
    const Batch batch = testing::mixed_length_batch(5);
    for (const OptionCase& c : option_cases()) {
        INFO(c.name);
        Rng rng(23);
        Seq2Seq model(c.config, 13, 13, rng);
        model.eval();
        const double loss = double(model.forward_loss(batch).loss.item());
        CHECK(std::isfinite(loss));
        CHECK(std::fabs(stepwise_loss(model, batch) - loss) <= 1e-12 * loss);
    }
}

// The record keeps the batch's order: row b of step t is sentence b, for the n_t leading rows
// still running at t (mixed_length_batch is not sorted by target length).
TEST_CASE("model options: the forward record's attention is the step decoder's, row for row") {
    const Batch batch = testing::mixed_length_batch(5);
    const int64_t B = batch.batch_size, T = batch.tgt_len, S = batch.src_len;
    for (const OptionCase& c : option_cases()) {
        if (c.config.attention == "none") continue;
        INFO(c.name);
        Rng rng(23);
        Seq2Seq model(c.config, 13, 13, rng);
        model.eval();
        NoGradGuard no_grad;
        ForwardRecord record;
        model.forward_loss(batch, {}, &record);
        REQUIRE(record.attention.size() == size_t(T));
        REQUIRE(record.attention_scores.size() == size_t(T));
        auto state = model.initial_state(model.encode(batch));
        int64_t compared = 0;
        for (int64_t t = 0; t < T; ++t) {
            std::vector<int32_t> previous(static_cast<size_t>(B));
            for (int64_t b = 0; b < B; ++b) previous[size_t(b)] = batch.tgt_in[size_t(b * T + t)];
            const Tensor step_weights = model.step(previous, *state).attention;
            const Tensor& weights = record.attention[size_t(t)];
            const Tensor& scores = record.attention_scores[size_t(t)];
            REQUIRE(weights.shape() == scores.shape());
            for (int64_t b = 0; b < weights.size(0); ++b) {
                // α = softmax(e) over the row's real positions, and the step decoder's α
                const int64_t valid = batch.src_lengths[size_t(b)];
                const real* e = scores.data() + b * S;
                const double top = double(*std::max_element(e, e + valid));
                double z = 0;
                for (int64_t s = 0; s < valid; ++s) z += std::exp(double(e[s]) - top);
                for (int64_t s = 0; s < S; ++s) {
                    const double expected = s < valid ? std::exp(double(e[s]) - top) / z : 0.0;
                    CHECK(double(weights.data()[b * S + s]) ==
                          doctest::Approx(expected).epsilon(1e-12));
                    CHECK(double(weights.data()[b * S + s]) ==
                          doctest::Approx(double(step_weights.data()[b * S + s])).epsilon(1e-12));
                }
                compared += 1;
            }
        }
        CHECK(compared >= batch.num_target_tokens);
    }
}

TEST_CASE("model options: beam width 1 equals greedy, and beam search reorders every layer") {
    const Batch batch = testing::mixed_length_batch(9);
    for (const OptionCase& c : option_cases()) {
        INFO(c.name);
        Rng rng(29);
        Seq2Seq model(c.config, 13, 13, rng);
        model.eval();
        NoGradGuard no_grad;
        const EncodedSource source = model.encode(batch);
        DecodeOptions options;
        options.max_length = 8;
        const auto greedy = greedy_decode(model, model.initial_state(source), options);
        const auto beam1 = beam_search(model, model.initial_state(source), options);
        REQUIRE(greedy.size() == beam1.size());
        for (size_t s = 0; s < greedy.size(); ++s) {
            CHECK(greedy[s].tokens == beam1[s][0].tokens);
            CHECK(std::fabs(greedy[s].log_prob - beam1[s][0].log_prob) <= 1e-9);
        }
        // width 3: a hypothesis' log-probability, re-scored by forcing its tokens through a
        // fresh one-row state, is the same (the reordered rows carried every layer's state)
        options.beam_size = 3;
        const auto beam3 = beam_search(model, model.initial_state(source), options);
        for (size_t s = 0; s < beam3.size(); ++s) {
            const Hypothesis& h = beam3[s][0];
            auto state = model.initial_state(source)->select({int32_t(s)});
            double log_prob = 0;
            int32_t previous = Vocab::SOS;
            for (int32_t token : h.tokens) {
                StepResult r = model.step({previous}, *state);
                log_prob += double(r.log_probs.data()[token]);
                previous = token;
            }
            CHECK(std::fabs(log_prob - h.log_prob) <= 1e-9 * std::max(1.0, std::fabs(log_prob)));
        }
    }
}

TEST_CASE("model options: every optimisation switch off gives the same loss and gradients") {
    RestoreSwitches restore;
    const Batch batch = testing::mixed_length_batch(5);
    // a model built and run as the variant says (its switches in force)
    auto run = [&](const ModelConfig& config, const char* off,
                   std::vector<std::vector<real>>* gradients) {
        const testing::LadderVariant variant = testing::ladder_variant(off);
        set_switches(variant.switches);
        Rng rng(31);
        Seq2Seq model(config, 13, 13, rng, testing::fused_layers(config, variant));
        const bench::LadderModel ladder(model, variant.loss);
        LossOutput out = ladder.forward_loss(batch, 0.1);
        out.loss.backward();
        for (const Tensor& p : model.parameters()) gradients->push_back(p.grad().to_vector());
        return double(out.loss.item());
    };
    for (const OptionCase& c : option_cases()) {
        std::vector<std::vector<real>> on_gradients;
        const double on = run(c.config, "", &on_gradients);
        for (const char* off : {"fused_gru", "fused_lstm", "fused_rnn", "fused_attention",
                                "fused_loss", "real_tokens", "one_projection", "cached_keys",
                                "sort_by_length", "shared_steps", "packed", "small_m"}) {
            INFO(c.name << ", off: " << off);
            std::vector<std::vector<real>> gradients;
            CHECK(std::fabs(run(c.config, off, &gradients) - on) <= 1e-12 * on);
            REQUIRE(gradients.size() == on_gradients.size());
            double worst = 0;
            for (size_t i = 0; i < gradients.size(); ++i)
                worst = std::max(worst, testing::max_abs_difference(gradients[i], on_gradients[i]));
            CHECK(worst < 1e-10);
        }
    }
}

TEST_CASE("model options: the decoder's initial state per layer") {
    const Batch batch = testing::mixed_length_batch(3);
    ModelConfig c = testing::small_model_config("bahdanau");
    c.encoder_layers = 2;
    c.hidden_size = 6;
    Rng rng(37);
    for (int decoder_layers : {2, 3}) {
        c.decoder_layers = decoder_layers;
        Seq2Seq model(c, 13, 13, rng);
        model.eval();
        NoGradGuard no_grad;
        const EncodedSource source = model.encode(batch);
        const RecurrentOutput g =
            model.encoder.recurrent->forward(source.embedded, batch.src_lengths);
        REQUIRE(source.initial_state.size() == size_t(decoder_layers));
        for (int l = 0; l < decoder_layers; ++l) {
            // as many layers: layer l from encoder layer l; else every layer from the top one
            const int from = decoder_layers == 2 ? l : 1;
            const Tensor expected = slice(g.final_hidden, 0, from, from + 1);
            CHECK(testing::max_abs_difference(source.initial_state[size_t(l)].h.to_vector(),
                                              expected.to_vector()) == 0);
        }
    }
}

TEST_CASE("model options: an LSTM decoder starts from the encoder's (h, c)") {
    const Batch batch = testing::mixed_length_batch(3);
    ModelConfig c = testing::small_model_config("bahdanau");
    c.cell = "lstm";
    c.encoder_layers = 2;
    c.decoder_layers = 2;
    Rng rng(39);
    {
        Seq2Seq model(c, 13, 13, rng);
        NoGradGuard no_grad;
        const EncodedSource source = model.encode(batch);
        const RecurrentOutput r =
            model.encoder.recurrent->forward(source.embedded, batch.src_lengths);
        REQUIRE(r.final_cell.defined());
        for (int l = 0; l < 2; ++l) {
            CHECK(source.initial_state[size_t(l)].h.to_vector() ==
                  slice(r.final_hidden, 0, l, l + 1).to_vector());
            CHECK(source.initial_state[size_t(l)].c.to_vector() ==
                  slice(r.final_cell, 0, l, l + 1).to_vector());
        }
    }
    // bidirectional: h_0 = tanh(bridge([h_fwd; h_bwd])), c_0 = cell_bridge([c_fwd; c_bwd])
    c.bidirectional = true;
    c.encoder_layers = 1;
    c.decoder_layers = 1;
    Seq2Seq model(c, 13, 13, rng);
    NoGradGuard no_grad;
    const EncodedSource source = model.encode(batch);
    const RecurrentOutput r = model.encoder.recurrent->forward(source.embedded, batch.src_lengths);
    const int64_t B = batch.batch_size, H = c.hidden_size;
    auto both = [&](const Tensor& final) {
        return concat(
            {reshape(slice(final, 0, 0, 1), {B, H}), reshape(slice(final, 0, 1, 2), {B, H})}, 1);
    };
    REQUIRE(model.encoder.cell_bridge);
    CHECK(testing::max_abs_difference(
              source.initial_state[0].h.to_vector(),
              tanh(model.encoder.bridge->forward(both(r.final_hidden))).to_vector()) == 0);
    CHECK(testing::max_abs_difference(
              source.initial_state[0].c.to_vector(),
              model.encoder.cell_bridge->forward(both(r.final_cell)).to_vector()) == 0);
}

TEST_CASE("model options: parameter names per cell, and a checkpoint of another cell is an error") {
    auto names = [](const ModelConfig& c) {
        Rng rng(43);
        Seq2Seq model(c, 13, 13, rng);
        std::vector<std::string> out;
        for (const auto& [name, p] : model.named_parameters()) out.push_back(name);
        return out;
    };
    auto has = [](const std::vector<std::string>& v, const std::string& name) {
        return std::find(v.begin(), v.end(), name) != v.end();
    };
    ModelConfig c = testing::small_model_config("bahdanau");
    c.bidirectional = true;
    // GRU: the keys checkpoints have always had
    std::vector<std::string> gru = names(c);
    CHECK(has(gru, "encoder.gru.weight_ih_l0_reverse"));
    CHECK(has(gru, "decoder.cell.weight_hh"));
    CHECK(has(gru, "encoder.bridge.weight"));
    CHECK_FALSE(has(gru, "encoder.cell_bridge.weight"));
    c.cell = "lstm";
    c.decoder_layers = 2;
    std::vector<std::string> lstm = names(c);
    CHECK(has(lstm, "encoder.lstm.weight_ih_l0_reverse"));
    CHECK(has(lstm, "encoder.cell_bridge.bias"));
    CHECK(has(lstm, "decoder.cell.bias_hh"));
    CHECK(has(lstm, "decoder.cell_l1.weight_ih"));
    c.cell = "rnn";
    CHECK(has(names(c), "encoder.rnn.weight_hh_l0"));

    // a checkpoint records its config; loading it with another cell names both
    ModelConfig gru_config = testing::small_model_config("bahdanau");
    Rng rng(47);
    Seq2Seq model(gru_config, 13, 13, rng);
    Config config;
    config.model = gru_config;
    const std::string path =
        (std::filesystem::temp_directory_path() /
         fmt::format("seqgrad_test_{}_model_options_gru.safetensors", ::getpid()))
            .string();
    save_checkpoint(path, model, {}, nlohmann::json{{"config", config.to_json()}});
    const SafetensorsFile file = load_safetensors(path);
    CHECK_NOTHROW(check_checkpoint_cell(file, gru_config.cell));
    ModelConfig lstm_config = gru_config;
    lstm_config.cell = "lstm";
    CHECK_THROWS_WITH_AS(check_checkpoint_cell(file, lstm_config.cell),
                         doctest::Contains("model_options_gru.safetensors: the checkpoint holds a "
                                           "model with model.cell \"gru\", the config asks for "
                                           "\"lstm\""),
                         Error);
    std::remove(path.c_str());
}

TEST_CASE("model options: init normal draws weights from N(0, 0.01), biases 0, PAD rows 0") {
    ModelConfig c = testing::small_model_config("bahdanau");
    c.hidden_size = 40;
    c.embedding_size = 30;
    c.attention_size = 20;
    c.init = "normal";
    Rng rng(41);
    Seq2Seq model(c, 50, 60, rng);
    double sum = 0, squares = 0;
    int64_t n = 0;
    for (const auto& [name, p] : model.named_parameters()) {
        INFO(name);
        const std::vector<real> v = p.to_vector();
        if (name.find("weight") == std::string::npos) {
            for (real x : v) CHECK(x == 0);
            continue;
        }
        for (real x : v) sum += double(x), squares += double(x) * double(x), n++;
    }
    const double mean = sum / double(n), std = std::sqrt(squares / double(n) - mean * mean);
    CHECK(std::fabs(mean) < 5e-4);
    CHECK(std::fabs(std - 0.01) < 5e-4);
    for (const Embedding* e : {&model.encoder.embedding, &model.decoder.embedding})
        for (int64_t j = 0; j < e->embedding_dim(); ++j)
            CHECK(e->weight.data()[int64_t(Vocab::PAD) * e->embedding_dim() + j] == 0);
}

// The model of the most used PyTorch tutorial of Bahdanau et al. 2015 ("Neural Machine
// Translation by Jointly Learning to Align and Translate", Multi30k de-en): 20,518,405
// parameters. Each count pins down one choice of seqgrad's layers.
TEST_CASE("model options: parameter parity with the PyTorch tutorial model (20,518,405)") {
    ModelConfig c;
    c.embedding_size = 256;
    c.hidden_size = 512;
    c.bidirectional = true;
    c.attention = "bahdanau";
    c.attention_size = 512;
    c.output_layer = "deep";
    Rng rng(1);
    Seq2Seq model(c, 7853, 5893, rng);
    auto count = [&](const std::string& prefix) {
        int64_t n = 0;
        for (const auto& [name, p] : model.named_parameters())
            if (name.rfind(prefix, 0) == 0) n += p.numel();
        return n;
    };
    // 7,853 x 256 and 5,893 x 256
    CHECK(count("encoder.embedding.") == 2010368);
    CHECK(count("decoder.embedding.") == 1508608);
    // two directions x (3H x (E + H) + both biases 2 x 3H): PyTorch's nn.GRU, b_ih and b_hh
    CHECK(count("encoder.gru.") == 2365440);
    // one Linear(2H -> H) with a bias from [h_fwd; h_bwd] (not one per direction, not bias-free)
    CHECK(count("encoder.bridge.") == 524800);
    // the tutorial's attn = Linear(2H_enc + H_dec -> 512) with a bias is W_q (512 x 512, no
    // bias) + W_k (512 x 1024) + W_k's bias: 786,944 pins attention_bias = true (false gives
    // 786,432) and attention_size = 512; its v = Linear(512 -> 1, no bias) is the "+ 512"
    CHECK(count("decoder.attention.W_q.") + count("decoder.attention.W_k.") == 786944);
    CHECK(count("decoder.attention.W_k.bias") == 512);
    CHECK(count("decoder.attention.v.") == 512);
    // one GRU layer reading [emb(y); c_t] (256 + 1024 = 1,280 inputs), both biases
    CHECK(count("decoder.cell.") == 2755584);
    CHECK(model.decoder.num_layers() == 1);
    // deep output: Linear([h_t; c_t; emb] = 512 + 1024 + 256 = 1,792 -> 5,893) with a bias
    // (plain output would be 512 -> 5,893: 3,023,109)
    CHECK(count("decoder.out.") == 10566149);
    CHECK(model.parameter_count() == 20518405);

    // attention_bias = false removes exactly W_k's bias
    c.attention_bias = false;
    Seq2Seq without_bias(c, 7853, 5893, rng);
    CHECK(without_bias.parameter_count() == 20518405 - 512);
}

TEST_CASE("model options: bad values name the key") {
    auto error_of = [](const nlohmann::json& j) {
        try {
            Config::from_json(j, "c.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of({{"model", {{"decoder_layers", 0}}}}) ==
          "c.json: model.decoder_layers: expected an integer in [1, 8], got 0");
    CHECK(error_of({{"model", {{"output_layer", "wide"}}}}) ==
          "c.json: model.output_layer: expected one of \"plain\", \"deep\", got \"wide\"");
    CHECK(error_of({{"model", {{"init", "xavier"}}}}) ==
          "c.json: model.init: expected one of \"pytorch\", \"normal\", got \"xavier\"");
    CHECK(error_of({{"model", {{"attention", "luong_dot"}, {"attention_bias", false}}}})
              .find("c.json: model.attention_bias: only read with model.attention "
                    "\"bahdanau\"") == 0);
    CHECK(error_of({{"model", {{"encoder_hidden_size", -1}}}}) ==
          "c.json: model.encoder_hidden_size: expected a non-negative integer, got -1");
    // a run directory's config.json lists every key, defaults included: it parses back
    Config c = Config::from_json({{"model", {{"decoder_layers", 2}, {"output_layer", "deep"}}}});
    const Config again = Config::from_json(c.to_json());
    CHECK(again.model.decoder_layers == 2);
    CHECK(again.model.output_layer == "deep");
    CHECK(again.model.init == "pytorch");
    CHECK(again.model.attention_bias);
}

// configs/dates-lstm.json: the course's date model shape (README, "Dates with LSTMs"); its
// training is not a test (CI time), its shape is.
TEST_CASE("model options: configs/dates-lstm.json parses into the course model's shape") {
    const Config c = Config::load(std::string(SEQGRAD_SOURCE_DIR) + "/configs/dates-lstm.json");
    CHECK(c.model.cell == "lstm");
    CHECK(c.model.bidirectional);
    CHECK(c.model.encoder_size() == 32);
    CHECK(c.model.hidden_size == 64);
    CHECK(c.model.attention == "bahdanau");
    Rng rng(1);
    Seq2Seq model(c.model, 41, 15, rng);  // the vocabularies of the dates task
    CHECK(model.parameter_count() == 70755);
    CHECK(model.encoder.recurrent->type() == CellType::lstm);
    CHECK(model.encoder.recurrent->hidden_size() == 32);
    CHECK(model.decoder.cells[0]->hidden_size() == 64);
}
