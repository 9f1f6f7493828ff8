// The Transformer's layers in double: MultiheadAttention, the encoder and decoder layers (post-
// and pre-norm, GELU), the stacks with their final norms and the positional encodings pass
// gradcheck with padding and the causal mask in play; parameter names are PyTorch's; the
// decoder's one-step-at-a-time pass with cached keys and values equals the teacher-forced pass.
#include "seqgrad/layers/positional_encoding.h"
#include "transformer_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

TransformerLayerOptions tiny(bool norm_first, const char* activation = "relu") {
    TransformerLayerOptions o;
    o.d_model = 4;
    o.heads = 2;
    o.ff_size = 6;
    o.dropout = 0;
    o.norm_first = norm_first;
    o.activation = activation;
    return o;
}

std::vector<std::string> names(const Module& m) {
    std::vector<std::string> out;
    for (auto& [name, _] : m.named_parameters()) out.push_back(name);
    return out;
}

}  // namespace

TEST_CASE("parameter names and shapes are nn.Transformer's") {
    Rng rng(1);
    TransformerDecoderLayer layer(tiny(false), rng);
    CHECK(names(layer) ==
          std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                   "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                                   "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                                   "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias",
                                   "linear1.weight", "linear1.bias", "linear2.weight",
                                   "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight",
                                   "norm2.bias", "norm3.weight", "norm3.bias"});
    CHECK(layer.self_attn.in_proj_weight.shape() == Shape{12, 4});
    CHECK(layer.ff.linear1.weight.shape() == Shape{6, 4});
    TransformerEncoder encoder(tiny(true), 2, rng);
    CHECK(names(encoder).size() == 2 * 12 + 2);
    CHECK(names(encoder)[0] == "layers.0.self_attn.in_proj_weight");
    CHECK(names(encoder).back() == "norm.bias");
    CHECK_THROWS_WITH_AS(MultiheadAttention(6, 4, rng),
                         "MultiheadAttention: embed_dim 6 must be a positive multiple of "
                         "num_heads 4 (>= 1)",
                         Error);
}

TEST_CASE("MultiheadAttention passes gradcheck (cross-attention with padding; causal self)") {
    Rng rng(2);
    MultiheadAttention mha(4, 2, rng);
    Tensor query = random_tensor({2, 3, 4}, 3), key = random_tensor({2, 4, 4}, 4);
    Tensor pad = padding_mask({4, 2}, 4);
    expect_gradcheck([&](auto& in) { return mha.forward(in[0], in[1], in[1], pad).output; },
                     with_parameters({query, key}, mha));
    Tensor x = random_tensor({2, 3, 4}, 5);
    Tensor self_pad = padding_mask({3, 2}, 3);
    expect_gradcheck(
        [&](auto& in) { return mha.forward(in[0], in[0], in[0], self_pad, true).output; },
        with_parameters({x}, mha));
}

TEST_CASE("encoder and decoder layers pass gradcheck: post-norm, pre-norm, GELU, masks") {
    Tensor src = random_tensor({2, 3, 4}, 6), tgt = random_tensor({2, 3, 4}, 7);
    Tensor src_pad = padding_mask({3, 2}, 3), tgt_pad = padding_mask({2, 3}, 3);
    for (bool norm_first : {false, true})
        for (const char* activation : {"relu", "gelu"}) {
            CAPTURE(norm_first);
            CAPTURE(activation);
            Rng rng(8);
            TransformerEncoderLayer enc(tiny(norm_first, activation), rng);
            expect_gradcheck([&](auto& in) { return enc.forward(in[0], src_pad); },
                             with_parameters({src}, enc));
            TransformerDecoderLayer dec(tiny(norm_first, activation), rng);
            expect_gradcheck([&](auto& in) { return dec.forward(in[0], in[1], tgt_pad, src_pad); },
                             with_parameters({tgt, src}, dec));
        }
}

TEST_CASE("the stacks with their final norms pass gradcheck") {
    Rng rng(9);
    EncoderDecoder model(tiny(false), 2, rng);
    Tensor src = random_tensor({2, 3, 4}, 10), tgt = random_tensor({2, 2, 4}, 11);
    Tensor src_pad = padding_mask({3, 1}, 3), tgt_pad = padding_mask({2, 1}, 2);
    expect_gradcheck(
        [&](auto& in) {
            Tensor memory = model.encoder.forward(in[0], src_pad);
            return model.decoder.forward(in[1], memory, tgt_pad, src_pad);
        },
        with_parameters({src, tgt}, model));
}

TEST_CASE(
    "decoding one position at a time with cached keys and values == the teacher-forced pass") {
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        Rng rng(12);
        EncoderDecoder model(tiny(norm_first), 2, rng);
        const int64_t T = 4;
        Tensor src = random_tensor({2, 3, 4}, 13, false), tgt = random_tensor({2, T, 4}, 14, false);
        Tensor src_pad = padding_mask({3, 2}, 3);
        NoGradGuard no_grad;
        Tensor memory = model.encoder.forward(src, src_pad);
        std::vector<Tensor> full_weights;
        Tensor full = model.decoder.forward(tgt, memory, Tensor(), src_pad, &full_weights);
        std::vector<DecoderLayerCache> caches = model.decoder.start(memory);
        for (int64_t t = 0; t < T; ++t) {
            CAPTURE(t);
            std::vector<Tensor> cross;
            Tensor y = model.decoder.step(slice(tgt, 1, t, t + 1), caches, src_pad, &cross);
            CHECK(max_abs_diff(y, slice(full, 1, t, t + 1)) <= 1e-12);
            CHECK(caches[1].self.keys.shape() == Shape{2, 2, t + 1, 2});
            // the top layer's cross-attention weights of this step: row t of the full pass's
            CHECK(max_abs_diff(cross[1], slice(full_weights[3], 2, t, t + 1)) <= 1e-12);
        }
    }
}

TEST_CASE("positional encodings: sinusoidal values, learned gradcheck, the table's limit") {
    Tensor table = sinusoidal_positions(0, 3, 4);
    CHECK(table.to_vector()[0] == 0);                                              // sin(0)
    CHECK(table.to_vector()[1] == 1);                                              // cos(0)
    CHECK(std::fabs(table.to_vector()[2 * 4 + 2] - std::sin(2 / 100.0)) < 1e-15);  // p=2, i=1
    CHECK(max_abs_diff(sinusoidal_positions(2, 1, 4), slice(table, 0, 2, 3)) == 0);
    Rng rng(15);
    PositionalEncoding sinusoidal(false, 0, 4, rng);
    CHECK(sinusoidal.named_parameters().empty());
    Tensor x = random_tensor({2, 3, 4}, 16);
    expect_gradcheck([&](auto& in) { return sinusoidal.forward(in[0], 1); }, {x});
    PositionalEncoding learned(true, 5, 4, rng);
    CHECK(names(learned) == std::vector<std::string>{"embedding.weight"});
    expect_gradcheck([&](auto& in) { return learned.forward(in[0], 2); },
                     with_parameters({x}, learned));
    CHECK_THROWS_WITH_AS(learned.forward(x, 3),
                         "PositionalEncoding: positions up to 6 but the learned table has 5 "
                         "(model.max_positions)",
                         Error);
}
