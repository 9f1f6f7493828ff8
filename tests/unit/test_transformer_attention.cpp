// The Transformer's attention weights per layer and head, in double: what the decoding step returns
// (StepResult::self_attention, cross_attention) equals the teacher-forced pass's weights, every
// head's row sums to 1 over the unmasked positions and is exactly 0 on the masked ones, the mean
// over heads is StepResult::attention; apps/attention/transformer_attention.h gives the same
// numbers for one sentence, in the shapes the explorer and `seqgrad attention` read.
#include <doctest/doctest.h>

#include <cmath>

#include "apps/attention/transformer_attention.h"
#include "batch_util.h"
#include "seqgrad/models/model/transformer.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

ModelConfig tiny_config() {
    ModelConfig c;
    c.kind = "transformer";
    c.d_model = 6;
    c.heads = 3;
    c.ff_size = 8;
    c.encoder_layers = 2;
    c.decoder_layers = 2;
    c.positional = "learned";
    c.max_positions = 16;
    return c;
}

// w[b, k, t, j] of weights [B, h, T, J]
double at(const Tensor& w, int64_t b, int64_t k, int64_t t, int64_t j) {
    return w.data()[((b * w.size(1) + k) * w.size(2) + t) * w.size(3) + j];
}

}  // namespace

TEST_CASE(
    "the decoding step's weights per layer and head == the teacher-forced pass's, rows sum to 1 "
    "over the unmasked positions, their mean over heads is StepResult::attention") {
    const Batch batch = mixed_length_batch(4);
    Rng rng(7);
    Transformer model(tiny_config(), 13, 13, rng);
    model.eval();
    NoGradGuard no_grad;
    const TransformerForward f = model.forward(batch, /*weights=*/true);
    REQUIRE(f.weights.size() == 2 + 2 * 2);  // encoder self ×2, then (self, cross) per layer
    const int64_t B = batch.batch_size, T = batch.tgt_len, S = batch.src_len, h = 3;
    auto state = model.start_decoding(batch);
    state->keep_layer_attention = true;  // every layer's weights, head by head
    double worst_self = 0, worst_cross = 0, worst_sum = 0, worst_mean = 0, masked = 0;
    double head_spread = 0;  // how far head 0 is from head 1: the heads must differ
    for (int64_t t = 0; t < T; ++t) {
        std::vector<int32_t> previous;
        for (int64_t b = 0; b < B; ++b) previous.push_back(batch.tgt_in[size_t(b * T + t)]);
        const StepResult r = model.step(previous, *state);
        REQUIRE(r.self_attention.size() == 2);
        REQUIRE(r.cross_attention.size() == 2);
        for (size_t l = 0; l < 2; ++l) {
            const Tensor &self = r.self_attention[l], &cross = r.cross_attention[l];
            REQUIRE(self.shape() == Shape{B, h, 1, t + 1});
            REQUIRE(cross.shape() == Shape{B, h, 1, S});
            const Tensor &full_self = f.weights[2 + 2 * l], &full_cross = f.weights[3 + 2 * l];
            for (int64_t b = 0; b < B; ++b) {
                if (t >= batch.tgt_lengths[size_t(b)]) continue;  // past the row's target
                const int64_t source_length = batch.src_lengths[size_t(b)];
                for (int64_t k = 0; k < h; ++k) {
                    double sum = 0;
                    for (int64_t s = 0; s < S; ++s) {
                        const double w = at(cross, b, k, 0, s);
                        if (s < source_length)
                            sum += w;
                        else
                            masked = std::max(masked, std::fabs(w));
                        worst_cross =
                            std::max(worst_cross, std::fabs(w - at(full_cross, b, k, t, s)));
                    }
                    worst_sum = std::max(worst_sum, std::fabs(sum - 1));
                    sum = 0;
                    for (int64_t j = 0; j <= t; ++j) {
                        const double w = at(self, b, k, 0, j);
                        sum += w;
                        worst_self = std::max(worst_self, std::fabs(w - at(full_self, b, k, t, j)));
                    }
                    worst_sum = std::max(worst_sum, std::fabs(sum - 1));
                }
                for (int64_t s = 0; s < source_length; ++s)
                    head_spread = std::max(
                        head_spread, std::fabs(at(cross, b, 0, 0, s) - at(cross, b, 1, 0, s)));
                if (l == 1)  // the top layer: StepResult::attention is its mean over heads
                    for (int64_t s = 0; s < S; ++s) {
                        double mean = 0;
                        for (int64_t k = 0; k < h; ++k) mean += at(cross, b, k, 0, s) / double(h);
                        worst_mean =
                            std::max(worst_mean, std::fabs(mean - r.attention.data()[b * S + s]));
                    }
            }
        }
    }
    CHECK(worst_self <= 1e-12);
    CHECK(worst_cross <= 1e-12);
    CHECK(worst_sum <= 1e-12);
    CHECK(masked == 0);  // padding gets exactly zero weight
    CHECK(worst_mean <= 1e-12);
    CHECK(head_spread > 1e-3);
}

TEST_CASE(
    "transformer_attention: every layer and head of one sentence, rows summing to 1, the "
    "teacher-forced pass's numbers, mean_over_heads is the average") {
    Rng rng(8);
    Transformer model(tiny_config(), 13, 13, rng);
    model.eval();
    const std::vector<int32_t> source = {5, 6, 7, 8, Vocab::EOS}, output = {9, 10, Vocab::EOS};
    const TransformerAttention a = transformer_attention(model, source, output);
    const size_t S = source.size(), T = output.size(), h = 3;
    REQUIRE(a.encoder.size() == 2);
    REQUIRE(a.decoder.size() == 2);
    REQUIRE(a.cross.size() == 2);

    NoGradGuard no_grad;
    const TransformerForward f = model.forward(make_batch({{source, output}}, {0}), true);
    double worst = 0, worst_sum = 0;
    auto check = [&](const WeightRows& rows, const Tensor& full, size_t k, size_t n_rows,
                     bool causal, size_t columns) {
        REQUIRE(rows.size() == n_rows);
        for (size_t t = 0; t < n_rows; ++t) {
            REQUIRE(rows[t].size() == (causal ? t + 1 : columns));
            double sum = 0;
            for (size_t j = 0; j < rows[t].size(); ++j) {
                sum += rows[t][j];
                worst = std::max(
                    worst, std::fabs(rows[t][j] - at(full, 0, int64_t(k), int64_t(t), int64_t(j))));
            }
            worst_sum = std::max(worst_sum, std::fabs(sum - 1));
        }
    };
    for (size_t l = 0; l < 2; ++l) {
        REQUIRE(a.encoder[l].size() == h);
        for (size_t k = 0; k < h; ++k) {
            check(a.encoder[l][k], f.weights[l], k, S, false, S);
            check(a.decoder[l][k], f.weights[2 + 2 * l], k, T, true, T);
            check(a.cross[l][k], f.weights[3 + 2 * l], k, T, false, S);
        }
    }
    CHECK(worst <= 1e-12);
    CHECK(worst_sum <= 1e-12);

    // the mean over heads: PyTorch's average_attn_weights, as average_heads computes it
    const Tensor mean = average_heads(f.weights.back());  // [1, T, S]
    const WeightRows m = mean_over_heads(a.cross[1]);
    double worst_mean = 0;
    for (size_t t = 0; t < T; ++t)
        for (size_t s = 0; s < S; ++s) {
            const double average =
                (a.cross[1][0][t][s] + a.cross[1][1][t][s] + a.cross[1][2][t][s]) / 3;
            worst_mean = std::max(worst_mean, std::fabs(m[t][s] - average));
            worst_mean = std::max(worst_mean, std::fabs(m[t][s] - mean.data()[t * S + s]));
        }
    CHECK(worst_mean <= 1e-12);

    CHECK_THROWS_WITH(transformer_attention(model, source, {}),
                      doctest::Contains("an output of 0"));
}
