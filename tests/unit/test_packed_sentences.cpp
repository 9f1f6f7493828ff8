// Packed sentences, the Transformer's training layout: a batch's sentences end to end with no
// padding, each attending to its own positions only. In double: the packed attention op passes
// gradcheck and equals its composed twin (block-diagonal mask) and the padded op at every real
// position; the stacks give the padded pass's outputs; and the model's packed loss and every
// parameter's gradient equal the padded pass's.
#include <cmath>

#include "batch_util.h"
#include "seqgrad/layers/positional_encoding.h"
#include "seqgrad/models/model/transformer.h"
#include "transformer_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

// Σ w ⊙ y: a scalar whose gradient is w (not all ones), to compare gradients of two forms.
Tensor weighted_sum(const Tensor& y, uint64_t seed) {
    return sum(y * random_tensor(y.shape(), seed, false));
}

// padded [B,H,L,D] -> its rows l < lengths[b], end to end: [1,H,ΣL_b,D] (a new leaf)
Tensor pack_rows(const Tensor& padded, const std::vector<int32_t>& lengths) {
    const int64_t B = padded.size(0), H = padded.size(1), L = padded.size(2), D = padded.size(3);
    std::vector<real> values;
    for (int64_t h = 0; h < H; ++h)
        for (int64_t b = 0; b < B; ++b)
            for (int64_t l = 0; l < lengths[size_t(b)]; ++l)
                for (int64_t c = 0; c < D; ++c)
                    values.push_back(padded.data()[((b * H + h) * L + l) * D + c]);
    const int64_t N = int64_t(values.size()) / (H * D);
    return Tensor::from_vector({1, H, N, D}, values, true);
}

// The largest difference between packed [1,H,N,D] and the real rows of padded [B,H,L,D].
double max_diff_at_real_rows(const Tensor& packed, const Tensor& padded,
                             const std::vector<int32_t>& lengths) {
    return max_abs_diff(packed, pack_rows(padded, lengths));
}

}  // namespace

TEST_CASE("Packing: offsets, positions inside each sentence, and the block-diagonal mask") {
    const Packing p = Packing::of_lengths({2, 0, 3});
    CHECK(p.starts == std::vector<int64_t>{0, 2, 2, 5});
    CHECK(p.sentences() == 3);
    CHECK(p.total() == 5);
    CHECK(p.length(2) == 3);
    CHECK(p.positions() == std::vector<int32_t>{0, 1, 0, 1, 2});
    const Packing keys = Packing::of_lengths({1, 2, 2});
    // rows: queries 0-1 (sentence 0, key 0), none for sentence 1, queries 2-4 (keys 3-4)
    CHECK(packed_mask(p, keys, false).to_vector() == std::vector<real>{0, 1, 1, 1, 1,  //
                                                                       0, 1, 1, 1, 1,  //
                                                                       1, 1, 1, 0, 0,  //
                                                                       1, 1, 1, 0, 0,  //
                                                                       1, 1, 1, 0, 0});
    const Packing self = Packing::of_lengths({2, 3});
    CHECK(packed_mask(self, self, true).to_vector() == std::vector<real>{0, 1, 1, 1, 1,  //
                                                                         0, 0, 1, 1, 1,  //
                                                                         1, 1, 0, 1, 1,  //
                                                                         1, 1, 0, 0, 1,  //
                                                                         1, 1, 0, 0, 0});
    CHECK_THROWS_WITH_AS(Packing::of_lengths({2, -1}), "Packing::of_lengths: a negative length -1",
                         Error);
    CHECK_THROWS_WITH_AS(KeyMask::packed(p, self),
                         "KeyMask::packed: 3 sentences of queries for 2 of keys", Error);
}

TEST_CASE("packed attention: gradcheck, == its composed twin, == the padded op at real rows") {
    const std::vector<int32_t> q_lengths = {2, 3, 1}, k_lengths = {3, 1, 4};
    const Packing queries = Packing::of_lengths(q_lengths), keys = Packing::of_lengths(k_lengths);
    const int64_t B = 3, H = 2, T = 3, S = 4, d = 3, dv = 2;
    const Tensor q_padded = random_tensor({B, H, T, d}, 1),
                 k_padded = random_tensor({B, H, S, d}, 2);
    const Tensor v_padded = random_tensor({B, H, S, dv}, 3);
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        // causal needs T_i <= S_i: self-attention over the keys' own packing
        const std::vector<int32_t>& ql = causal ? k_lengths : q_lengths;
        const Packing& qp = causal ? keys : queries;
        const Tensor q_source = causal ? random_tensor({B, H, S, d}, 4) : q_padded;
        Tensor q = pack_rows(q_source, ql), k = pack_rows(k_padded, k_lengths),
               v = pack_rows(v_padded, k_lengths);
        const KeyMask mask = KeyMask::packed(qp, keys);
        expect_gradcheck(
            [&](auto& in) {
                return scaled_dot_product_attention(in[0], in[1], in[2], mask, causal).output;
            },
            {q, k, v});

        DotProductAttention fused = scaled_dot_product_attention(q, k, v, mask, causal, true);
        Tensor loss = weighted_sum(fused.output, 5);
        loss.backward();
        const Tensor gq = q.grad(), gk = k.grad(), gv = v.grad();
        q.zero_grad(), k.zero_grad(), v.zero_grad();
        Tensor weights;
        Tensor loss2 =
            weighted_sum(scaled_dot_product_attention_composed(q, k, v, mask, causal, &weights), 5);
        loss2.backward();
        CHECK(std::fabs(loss.item() - loss2.item()) < 1e-12);
        CHECK(max_abs_diff(fused.weights, weights) < 1e-14);
        CHECK(max_abs_diff(gq, q.grad()) < 1e-12);
        CHECK(max_abs_diff(gk, k.grad()) < 1e-12);
        CHECK(max_abs_diff(gv, v.grad()) < 1e-12);
        // weights: [1,h,ΣT,ΣS], zero outside each sentence's block, rows summing to 1
        const Tensor outside = packed_mask(qp, keys, causal);
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < qp.total(); ++i) {
                double row = 0;
                for (int64_t j = 0; j < keys.total(); ++j) {
                    const real w = fused.weights.data()[(h * qp.total() + i) * keys.total() + j];
                    if (outside.data()[i * keys.total() + j] != 0) CHECK(w == 0);
                    row += w;
                }
                CHECK(std::fabs(row - 1) < 1e-14);
            }

        // the padded op with a key padding mask gives the same numbers at every real query
        DotProductAttention padded =
            scaled_dot_product_attention(q_source.detach(), k_padded.detach(), v_padded.detach(),
                                         padding_mask(k_lengths, S), causal);
        CHECK(max_diff_at_real_rows(fused.output, padded.output, ql) < 1e-14);
    }
}

TEST_CASE("packed attention with an empty sentence: its queries see nothing, zeros and no NaN") {
    const Packing queries = Packing::of_lengths({2, 1}), keys = Packing::of_lengths({0, 2});
    Tensor q = random_tensor({1, 2, 3, 2}, 7), k = random_tensor({1, 2, 2, 2}, 8);
    Tensor v = random_tensor({1, 2, 2, 2}, 9);
    DotProductAttention a =
        scaled_dot_product_attention(q, k, v, KeyMask::packed(queries, keys), false, true);
    weighted_sum(a.output, 10).backward();
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 2; ++i)  // sentence 0's two queries, both heads
            for (int64_t c = 0; c < 2; ++c) {
                CHECK(a.output.data()[(h * 3 + i) * 2 + c] == 0);
                CHECK(q.grad().data()[(h * 3 + i) * 2 + c] == 0);
            }
    for (real g : q.grad().to_vector()) CHECK(std::isfinite(g));
}

TEST_CASE("packed attention names the shapes and the packing on bad input") {
    const Packing two = Packing::of_lengths({2, 3}), longer = Packing::of_lengths({3, 1});
    Tensor q = random_tensor({1, 2, 5, 4}, 1), k = random_tensor({1, 2, 4, 4}, 2);
    CHECK_THROWS_WITH_AS(
        scaled_dot_product_attention(q, k, k, KeyMask::packed(two, two)),
        "scaled_dot_product_attention: packed q [1,2,5,4] and k [1,2,4,4] for 2 sentences of 5 "
        "queries and 2 of 5 keys: expected B = 1, T = 5 and S = 5, and no padding mask",
        Error);
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, k, KeyMask::packed(two, longer), true),
                         "scaled_dot_product_attention: causal with sentence 1 of 3 queries and 1 "
                         "keys: needs T_i <= S_i",
                         Error);
}

TEST_CASE("the encoder and decoder stacks on packed sentences == the padded pass at real rows") {
    const std::vector<int32_t> src_lengths = {3, 1, 4}, tgt_lengths = {2, 3, 1};
    const Packing source = Packing::of_lengths(src_lengths);
    const Packing target = Packing::of_lengths(tgt_lengths);
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        TransformerLayerOptions o;
        o.d_model = 4, o.heads = 2, o.ff_size = 6, o.dropout = 0, o.norm_first = norm_first;
        Rng rng(3);
        EncoderDecoder model(o, 2, rng);
        // [B,L,E] as [B,1,L,E] for pack_rows
        const Tensor src = random_tensor({3, 4, 4}, 11), tgt = random_tensor({3, 3, 4}, 12);
        const Tensor memory = model.encoder.forward(src, padding_mask(src_lengths, 4));
        const Tensor out = model.decoder.forward(tgt, memory, padding_mask(tgt_lengths, 3),
                                                 padding_mask(src_lengths, 4));
        auto packed = [](const Tensor& x, const std::vector<int32_t>& lengths) {
            Tensor p = pack_rows(reshape(x, {x.size(0), 1, x.size(1), x.size(2)}), lengths);
            return reshape(p, {1, p.size(2), p.size(3)});
        };
        const Tensor packed_memory =
            model.encoder.forward(packed(src, src_lengths), KeyMask::packed(source, source));
        const Tensor packed_out =
            model.decoder.forward(packed(tgt, tgt_lengths), packed_memory,
                                  KeyMask::packed(target, target), KeyMask::packed(target, source));
        CHECK(max_abs_diff(packed_memory, packed(memory, src_lengths)) < 1e-12);
        CHECK(max_abs_diff(packed_out, packed(out, tgt_lengths)) < 1e-12);
    }
}

TEST_CASE("positional encodings at given positions == at an offset, and a packed row's own place") {
    Rng rng(4);
    const Tensor x = random_tensor({1, 3, 4}, 5, false);
    for (bool learned : {false, true}) {
        CAPTURE(learned);
        PositionalEncoding positions(learned, 8, 4, rng);
        CHECK(max_abs_diff(positions.forward(x, 2), positions.forward(x, {2, 3, 4})) == 0);
        const Tensor zero = Tensor::zeros({1, 3, 4});  // x + P = P: rows of the table
        const Tensor packed = positions.forward(zero, {0, 0, 1}), table = positions.forward(zero);
        CHECK(max_abs_diff(slice(packed, 1, 1, 2), slice(table, 1, 0, 1)) == 0);
        CHECK(max_abs_diff(slice(packed, 1, 2, 3), slice(table, 1, 1, 2)) == 0);
        CHECK_THROWS_WITH_AS(positions.forward(x, {0, 1}),
                             "PositionalEncoding: x [1,3,4] for 2 positions: expected [B,2,E]",
                             Error);
    }
}

TEST_CASE("the model's packed loss and every gradient == the padded pass's") {
    const Batch batch = mixed_length_batch(6);
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        ModelConfig config =
            tiny_transformer_config(norm_first, norm_first ? "learned" : "sinusoidal");
        config.share_embeddings = norm_first ? "target" : "none";
        Rng rng(7);
        Transformer model(config, 13, 13, rng);
        LossOutput packed = model.forward_loss(batch, LossOptions{1.0, 0.1});
        packed.loss.backward();
        std::vector<Tensor> grads;
        for (const Tensor& p : model.parameters()) grads.push_back(p.grad().detach());
        model.zero_grad();
        LossOutput padded = model.forward_loss_padded(batch, 0.1);
        padded.loss.backward();
        CHECK(packed.num_tokens == padded.num_tokens);
        CHECK(packed.num_correct == padded.num_correct);
        CHECK(std::fabs(packed.loss.item() - padded.loss.item()) < 1e-12);
        const std::vector<Tensor> parameters = model.parameters();
        REQUIRE(parameters.size() == grads.size());
        for (size_t i = 0; i < grads.size(); ++i) {
            CAPTURE(model.named_parameters()[i].first);
            CHECK(max_abs_diff(grads[i], parameters[i].grad()) < 1e-12);
        }
    }
}
