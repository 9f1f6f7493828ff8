// LayerNorm, MultiheadAttention and the Transformer's encoder and decoder against PyTorch's
// nn.LayerNorm, nn.MultiheadAttention and nn.Transformer in double: padded batches with source,
// target and memory key-padding masks and the causal mask give the same outputs, averaged
// attention weights, losses and gradients (inputs and every parameter) to 1e-12, through the
// fused ops and their composed twins, post-norm and pre-norm. The numbers come from
// tests/data/make_transformer_reference.py (run once with PyTorch; this test never imports it).
#include "transformer_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

TEST_CASE("LayerNorm == nn.LayerNorm (float64)") {
    const nlohmann::json c = read_transformer_reference().at("layer_norm");
    for (bool fused : {true, false}) {
        CAPTURE(fused);
        LayerNorm norm(5);
        norm.use_fused = fused;
        load_reference(norm, c.at("parameters"));
        Tensor x = tensor_of(c.at("x"), true);
        Tensor y = norm.forward(x);
        Tensor loss = sum(y * tensor_of(c.at("w")));
        loss.backward();
        CHECK(std::fabs(loss.item() - c.at("loss").get<double>()) <= 1e-12);
        CHECK(max_abs_diff(y, tensor_of(c.at("y"))) <= 1e-12);
        CHECK(max_abs_diff(x.grad(), tensor_of(c.at("grad_x"))) <= 1e-12);
        CHECK(check_parameter_grads(norm, c.at("grad_parameters")) == 2);
    }
}

TEST_CASE(
    "MultiheadAttention == nn.MultiheadAttention (cross and causal self-attention, padding)") {
    const nlohmann::json reference = read_transformer_reference();
    for (const char* name : {"mha_cross", "mha_self"})
        for (bool fused : {true, false}) {
            CAPTURE(name);
            CAPTURE(fused);
            const nlohmann::json& c = reference.at(name);
            Rng rng(1);
            MultiheadAttention mha(c.at("embed_dim"), c.at("heads"), rng);
            mha.use_fused = fused;
            load_reference(mha, c.at("parameters"));
            const bool self = c.at("causal");
            Tensor query = tensor_of(c.at("query"), true);
            Tensor key = self ? query : tensor_of(c.at("key"), true);
            Tensor pad = padding_mask(c.at("lengths").get<std::vector<int32_t>>(), key.size(1));
            MultiheadAttentionOutput out = mha.forward(query, key, key, pad, self, true);
            Tensor loss = sum(out.output * tensor_of(c.at("w")));
            loss.backward();
            CHECK(std::fabs(loss.item() - c.at("loss").get<double>()) <= 1e-12);
            CHECK(max_abs_diff(out.output, tensor_of(c.at("output"))) <= 1e-12);
            CHECK(out.weights.shape() ==
                  Shape{query.size(0), mha.num_heads(), query.size(1), key.size(1)});
            CHECK(max_abs_diff(average_heads(out.weights), tensor_of(c.at("weights"))) <= 1e-12);
            CHECK(max_abs_diff(query.grad(), tensor_of(c.at("grad_query"))) <= 1e-12);
            if (!self) CHECK(max_abs_diff(key.grad(), tensor_of(c.at("grad_key"))) <= 1e-12);
            CHECK(check_parameter_grads(mha, c.at("grad_parameters")) == 4);
        }
}

TEST_CASE("Transformer encoder and decoder == nn.Transformer (post-norm, pre-norm, all masks)") {
    const nlohmann::json reference = read_transformer_reference();
    for (const char* name : {"transformer_post", "transformer_pre"})
        for (bool fused : {true, false}) {
            CAPTURE(name);
            CAPTURE(fused);
            const nlohmann::json& c = reference.at(name);
            TransformerLayerOptions o;
            o.d_model = c.at("d_model");
            o.heads = c.at("heads");
            o.ff_size = c.at("ff_size");
            o.dropout = 0;
            o.norm_first = c.at("norm_first");
            Rng rng(1);
            EncoderDecoder model(o, c.at("layers"), rng);
            for (auto* attn :
                 {&model.encoder.layers[0]->self_attn, &model.decoder.layers[1]->self_attn,
                  &model.decoder.layers[0]->multihead_attn})
                attn->use_fused = fused;
            model.encoder.norm.use_fused = model.decoder.layers[0]->norm2.use_fused = fused;
            load_reference(model, c.at("parameters"));
            Tensor src = tensor_of(c.at("src"), true), tgt = tensor_of(c.at("tgt"), true);
            Tensor src_pad = padding_mask(c.at("src_lengths"), src.size(1));
            Tensor tgt_pad = padding_mask(c.at("tgt_lengths"), tgt.size(1));
            Tensor memory = model.encoder.forward(src, src_pad);
            Tensor out = model.decoder.forward(tgt, memory, tgt_pad, src_pad);
            Tensor loss =
                sum(memory * tensor_of(c.at("w_memory"))) + sum(out * tensor_of(c.at("w_out")));
            loss.backward();
            CHECK(std::fabs(loss.item() - c.at("loss").get<double>()) <= 1e-12);
            CHECK(max_abs_diff(memory, tensor_of(c.at("memory"))) <= 1e-12);
            CHECK(max_abs_diff(out, tensor_of(c.at("output"))) <= 1e-12);
            CHECK(max_abs_diff(src.grad(), tensor_of(c.at("grad_src"))) <= 1e-12);
            CHECK(max_abs_diff(tgt.grad(), tensor_of(c.at("grad_tgt"))) <= 1e-12);
            // 2 encoder layers x 12 + norm 2, 2 decoder layers x 18 + norm 2
            CHECK(check_parameter_grads(model, c.at("grad_parameters")) == 64);
        }
}
