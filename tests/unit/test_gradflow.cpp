// Gradient-flow measurement (apps/studies/gradflow.h) on tiny models: the structure of the result
// (finite numbers at every position, exactly zero gradient at padded positions, the numbers
// agree with the gradient the parameters get), not a scientific conclusion.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "apps/cli/gradflow_options.h"
#include "apps/studies/gradflow.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/recurrent.h"
#include "test_util.h"

using namespace seqgrad;

namespace {

ModelConfig tiny_config(const std::string& attention, bool bidirectional = false) {
    ModelConfig c;
    c.embedding_size = 4;
    c.hidden_size = 5;
    c.attention_size = 6;
    c.attention = attention;
    c.bidirectional = bidirectional;
    return c;
}

// Three sources of lengths 6, 4 and 2 in which every token id occurs once (ids 4..15), so
// that the gradient of an embedding-table row is the gradient of one source position.
Batch padded_batch() {
    std::vector<EncodedPair> pairs{
        {{4, 5, 6, 7, 8, 9}, {4, 5, 2}}, {{10, 11, 12, 13}, {10, 2}}, {{14, 15}, {15, 14, 2}}};
    return make_batch(pairs, {0, 1, 2});
}

int count_lines(const std::string& path) {
    std::ifstream in(path);
    int n = 0;
    std::string line;
    while (std::getline(in, line)) ++n;
    return n;
}

}  // namespace

TEST_CASE("synthetic copy and reverse batches: sources of exactly L, targets from the first K") {
    Rng rng(1);
    Batch copy = synthetic_batch("copy", 7, 3, 5, 4, rng);
    CHECK(copy.batch_size == 4);
    CHECK(copy.src_len == 7);
    CHECK(copy.tgt_len == 4);  // K tokens + EOS
    for (int b = 0; b < 4; ++b) {
        CHECK(copy.src_lengths[b] == 7);
        for (int t = 0; t < 7; ++t) {
            CHECK(copy.src_ids[b * 7 + t] >= 4);
            CHECK(copy.src_ids[b * 7 + t] < 9);
        }
        for (int k = 0; k < 3; ++k) CHECK(copy.tgt_out[b * 4 + k] == copy.src_ids[b * 7 + k]);
        CHECK(copy.tgt_out[b * 4 + 3] == Vocab::EOS);
    }
    Batch reverse = synthetic_batch("reverse", 5, 0, 5, 2, rng);  // K = 0: the whole source
    CHECK(reverse.tgt_len == 6);
    for (int b = 0; b < 2; ++b)
        for (int k = 0; k < 5; ++k)
            CHECK(reverse.tgt_out[b * 6 + k] == reverse.src_ids[b * 5 + (4 - k)]);
    CHECK_THROWS_AS(synthetic_batch("sort", 5, 2, 5, 2, rng), Error);
}

TEST_CASE("gradient flow on a padded batch: finite everywhere, zero at padding") {
    for (const char* attention : {"none", "bahdanau", "luong_dot", "luong_general", "luong_concat"})
        for (bool bidirectional : {false, true}) {
            if (bidirectional && std::string(attention) == "luong_dot") continue;  // needs K == H
            CAPTURE(attention);
            CAPTURE(bidirectional);
            Rng rng(3);
            Seq2Seq model(tiny_config(attention, bidirectional), 16, 16, rng);
            model.eval();
            Batch batch = padded_batch();
            FlowMeasurement m = measure_gradient_flow(model, batch);
            // Rows in another order (source lengths 2, 4, 6: not decreasing): the per-position
            // averages are the same, so the encoder states still receive their gradients.
            FlowMeasurement reordered = measure_gradient_flow(model, take_rows(batch, {2, 1, 0}));
            REQUIRE(reordered.hidden.size() == m.hidden.size());
            for (size_t t = 0; t < m.hidden.size(); ++t) {
                CHECK(std::abs(reordered.hidden[t] - m.hidden[t]) <= 1e-12 * m.hidden[t]);
                CHECK(std::abs(reordered.embedding[t] - m.embedding[t]) <= 1e-12 * m.embedding[t]);
            }
            REQUIRE(m.hidden.size() == 6);
            REQUIRE(m.embedding.size() == 6);
            CHECK(m.rows == std::vector<int>{3, 3, 2, 2, 1, 1});
            CHECK(std::isfinite(m.loss));
            for (size_t t = 0; t < 6; ++t) {
                CAPTURE(t);
                CHECK(std::isfinite(m.hidden[t]));
                CHECK(m.hidden[t] > 0);
                CHECK(std::isfinite(m.embedding[t]));
                CHECK(m.embedding[t] > 0);
            }
            // padded source positions get exactly zero gradient, real ones a positive one
            for (int b = 0; b < 3; ++b)
                for (int t = 0; t < 6; ++t) {
                    CAPTURE(b);
                    CAPTURE(t);
                    if (t >= batch.src_lengths[b])
                        CHECK(m.embedding_per_row[size_t(b * 6 + t)] == 0);
                    else
                        CHECK(m.embedding_per_row[size_t(b * 6 + t)] > 0);
                }
            // each id occurs once, so its embedding-table row's gradient is that position's
            const real* g = model.encoder.embedding.weight.grad_data();
            REQUIRE(g != nullptr);
            for (int b = 0; b < 3; ++b)
                for (int t = 0; t < batch.src_lengths[b]; ++t) {
                    const int id = batch.src_ids[size_t(b * 6 + t)];
                    double sq = 0;
                    for (int j = 0; j < 4; ++j) sq += double(g[id * 4 + j]) * g[id * 4 + j];
                    CHECK(std::sqrt(sq) ==
                          doctest::Approx(m.embedding_per_row[size_t(b * 6 + t)]).epsilon(1e-9));
                }
            CHECK(m.groups.encoder > 0);
            CHECK(m.groups.output > 0);
            CHECK(m.groups.total >= m.groups.encoder);
            // attention diagnostics exist exactly when there is attention (saturation: when
            // its score has a tanh MLP)
            const std::string kind = attention;
            CHECK(std::isnan(m.entropy) == (kind == "none"));
            CHECK(std::isnan(m.saturation) == (kind != "bahdanau" && kind != "luong_concat"));
            if (kind != "none") {
                CHECK(m.groups.attention >= 0);
                CHECK(m.entropy > 0);
                CHECK(m.entropy_ratio > 0);
                CHECK(m.entropy_ratio <= 1 + 1e-12);
            }
            if (!std::isnan(m.saturation)) {
                CHECK(m.saturation >= 0);
                CHECK(m.saturation <= 1);
            }
        }
}

TEST_CASE("attention none vs bahdanau: the gradient at t = 1 is a plausible positive number") {
    Rng data_rng(5);
    Batch batch = synthetic_batch("copy", 20, 3, 8, 6, data_rng);
    for (const char* attention : {"none", "bahdanau"}) {
        CAPTURE(attention);
        Rng rng(7);
        Seq2Seq model(tiny_config(attention), 12, 12, rng);
        model.eval();
        FlowMeasurement m = measure_gradient_flow(model, batch);
        REQUIRE(m.hidden.size() == 20);
        CHECK(m.hidden[0] > 0);
        CHECK(m.hidden[0] < 1e3);
        CHECK(m.embedding[0] > 0);
        CHECK(m.hidden.back() > 0);  // the last state feeds the decoder directly
        for (int r : m.rows) CHECK(r == 6);
    }
}

// The split of dL/dh_t in a Seq2Seq: EncodedSource::outputs is its own node, and what reaches
// it is the direct part; the rest must be J_{t+1}ᵀ dL/dh_{t+1}, computed here independently by
// backpropagating dL/dh_{t+1} through one composed GRU step.
TEST_CASE("Seq2Seq: dL/dh_t = (through attention) + (through h_{t+1}); none has no direct part") {
    for (const char* cell : {"rnn", "gru", "lstm"})
        for (const char* attention : {"none", "bahdanau", "luong_dot"}) {
            CAPTURE(cell);
            CAPTURE(attention);
            Rng rng(3);
            ModelConfig config = tiny_config(attention);
            config.cell = cell;
            // the LSTM's recurrence also runs through c_{t+1}, whose gradient is not kept: its
            // check is the norms' and the zero direct part's
            const bool lstm = config.cell == "lstm";
            Seq2Seq model(config, 16, 16, rng);
            model.eval();
            Rng data_rng(8);
            Batch batch = synthetic_batch("copy", 6, 3, 8, 3, data_rng);
            const int64_t B = 3, S = 6, H = 5, E = 4;
            model.zero_grad();
            EncodedSource source = model.encode(batch);
            source.outputs.retain_grad();
            for (Tensor& h : source.step_states) h.retain_grad();
            model.forward_loss(batch, source).loss.backward();
            const bool none = std::string(attention) == "none";
            CHECK((source.outputs.grad_data() == nullptr) == none);
            const Recurrent::Weights& w = model.encoder.recurrent->weights(0, 0);
            double direct_sum = 0;
            // the last step also feeds the decoder's h_0
            for (int64_t t = 0; t + 1 < S && !lstm; ++t) {
                CAPTURE(t);
                Tensor h =
                    Tensor::from_vector({B, H}, source.step_states[size_t(t)].to_vector(), true);
                Tensor x = reshape(slice(source.embedded.detach(), 1, t + 1, t + 2), {B, E});
                Tensor next = cell_step_composed(parse_cell_type(cell), w, x, {h, Tensor()}).h;
                const real* g_next = source.step_states[size_t(t + 1)].grad_data();
                REQUIRE(g_next != nullptr);
                sum(mul(next,
                        Tensor::from_vector({B, H}, std::vector<real>(g_next, g_next + B * H))))
                    .backward();
                const real* total = source.step_states[size_t(t)].grad_data();
                const real* direct = source.outputs.grad_data();
                for (int64_t b = 0; b < B; ++b)
                    for (int64_t j = 0; j < H; ++j) {
                        const double d = direct ? double(direct[(b * S + t) * H + j]) : 0;
                        direct_sum += std::fabs(d);
                        CHECK(double(total[b * H + j]) ==
                              doctest::Approx(d + double(h.grad_data()[b * H + j])).epsilon(1e-10));
                    }
            }
            if (!lstm) CHECK((direct_sum == 0) == none);
            // measure_gradient_flow reports their norms
            FlowMeasurement m = measure_gradient_flow(model, batch);
            for (int64_t t = 0; t < S; ++t) {
                CAPTURE(t);
                CHECK((m.direct[size_t(t)] == 0) == none);
                CHECK(m.hidden[size_t(t)] <= m.direct[size_t(t)] + m.recurrent[size_t(t)] + 1e-15);
                if (none) CHECK(m.recurrent[size_t(t)] == doctest::Approx(m.hidden[size_t(t)]));
            }
        }
}

TEST_CASE("the study: every (model, stage, L) curve, CSV and SVG files") {
    GradflowOptions o;
    o.models = {"none", "bahdanau"};
    o.lengths = {3, 6};
    o.seeds = 2;
    o.batch_size = 4;
    o.train_steps = 2;
    o.measure_at = {1};  // an extra measurement after step 1: stage "step1"
    o.target_length = 2;
    o.symbols = 5;
    o.model = tiny_config("none");
    o.quiet = true;
    o.out_dir = (std::filesystem::temp_directory_path() /
                 ("seqgrad_test_gradflow_" + std::to_string(::getpid())))
                    .string();
    std::filesystem::remove_all(o.out_dir);
    GradflowReport report = run_gradflow(o);
    REQUIRE(report.curves.size() == 12);  // 2 models x 3 stages x 2 lengths
    for (const FlowCurve& c : report.curves) {
        CAPTURE(c.model);
        CAPTURE(c.stage);
        CAPTURE(c.length);
        CHECK(int(c.hidden.size()) == c.length);
        for (double x : c.hidden) CHECK((std::isfinite(x) && x > 0));
        CHECK(std::isnan(c.entropy) == (c.model == "none"));
    }
    CHECK(report.training.size() == 8);  // 2 models x 2 seeds x 2 steps
    std::vector<std::string> written = write_gradflow_outputs(report, o);
    for (const char* name :
         {"gradflow.csv", "summary.csv", "training.csv", "grad_vs_position_fresh.svg",
          "grad_vs_position_trained.svg", "grad_vs_position_relative_fresh.svg",
          "grad_first_step_vs_length_fresh.svg", "grad_vs_position_step1.svg", "training_loss.svg",
          "training_encoder_grad_norm.svg"}) {
        CAPTURE(name);
        CHECK(std::filesystem::exists(std::filesystem::path(o.out_dir) / name));
    }
    // one line per (model, stage, L, t) plus the header: 2 * 3 * (3 + 6) + 1
    CHECK(count_lines(o.out_dir + "/gradflow.csv") == 55);
    CHECK(count_lines(o.out_dir + "/summary.csv") == 13);
    std::string table = gradflow_summary_table(report);
    CHECK(table.find("bahdanau") != std::string::npos);
    CHECK(table.find("trained") != std::string::npos);
    CHECK(table.find("step1") != std::string::npos);
    std::filesystem::remove_all(o.out_dir);

    o.task = "sort";
    CHECK_THROWS_AS(run_gradflow(o), Error);
}

TEST_CASE("gradflow: the Transformer beside the RNN models; its loss is the model's own") {
    ModelConfig c;
    c.kind = "transformer";
    c.d_model = 4;
    c.heads = 2;
    c.ff_size = 6;
    c.encoder_layers = c.decoder_layers = 1;
    Rng rng(5);
    Transformer model(c, 16, 16, rng);
    model.eval();
    const Batch batch = padded_batch();
    FlowMeasurement m = measure_gradient_flow(model, batch);
    // the loss of the written-out pass is forward_loss's, and the parameters got its gradient
    CHECK(m.loss == doctest::Approx(double(model.forward_loss(batch).loss.item())).epsilon(1e-12));
    CHECK(m.groups.total > 0);
    REQUIRE(m.hidden.size() == 6);
    for (size_t t = 0; t < 6; ++t) {
        CAPTURE(t);
        CHECK((std::isfinite(m.hidden[t]) && m.hidden[t] > 0));
        CHECK((std::isfinite(m.embedding[t]) && m.embedding[t] > 0));
        CHECK(std::isnan(m.direct[t]));  // the RNN's split does not apply
    }
    // padded source positions (row 1 from t = 4, row 2 from t = 2) get exactly zero gradient
    CHECK(m.embedding_per_row[1 * 6 + 4] == 0);
    CHECK(m.embedding_per_row[2 * 6 + 2] == 0);
    CHECK(m.embedding_per_row[0 * 6 + 5] > 0);

    GradflowOptions o = parse_gradflow_options({"--attention",     "none,transformer",
                                                "--lengths",       "3,5",
                                                "--seeds",         "1",
                                                "--batch",         "3",
                                                "--hidden",        "4",
                                                "--heads",         "2",
                                                "--ff-size",       "6",
                                                "--layers",        "1",
                                                "--symbols",       "5",
                                                "--target-length", "2",
                                                "--quiet"});
    GradflowReport report = run_gradflow(o);
    int transformer_rows = 0;
    for (const FlowCurve& curve : report.curves) {
        if (curve.model != "transformer") continue;
        ++transformer_rows;
        CAPTURE(curve.length);
        CHECK(int(curve.hidden.size()) == curve.length);
        for (double x : curve.hidden) CHECK((std::isfinite(x) && x > 0));
        for (double x : curve.embedding) CHECK((std::isfinite(x) && x > 0));
        CHECK(std::isfinite(curve.loss));
    }
    CHECK(transformer_rows == 2);
    CHECK(gradflow_summary_table(report).find("transformer") != std::string::npos);

    // the heads must divide d_model
    CHECK_THROWS_WITH_AS(
        parse_gradflow_options({"--attention", "transformer", "--hidden", "6", "--heads", "4"}),
        doctest::Contains("--heads 4 must divide --hidden 6"), Error);
}
