// The `seqgrad gradcheck` entries of the Transformer: its ops (layer_norm, scaled dot-product
// attention with padding, the causal mask, a fully masked row and packed sentences, gelu, sqrt,
// transpose of two dims), its layers (MultiheadAttention, the encoder and decoder layers post- and
// pre-norm, the learned positions) and tiny whole models, post-norm and pre-norm.
#include <string>
#include <vector>

#include "apps/gradcheck/gradcheck_registry.h"
#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/autograd/fused_layer_norm.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/layers/positional_encoding.h"
#include "seqgrad/layers/transformer.h"
#include "seqgrad/models/model/transformer.h"

namespace seqgrad::gradcheck_suite {
namespace {

TransformerLayerOptions tiny_layer(bool norm_first) {
    TransformerLayerOptions o;
    o.d_model = 4;
    o.heads = 2;
    o.ff_size = 6;
    o.dropout = 0;
    o.norm_first = norm_first;
    return o;
}

// scaled_dot_product_attention with every kind of mask: key padding, causal, a fully masked
// row, packed sentences.
void add_attention_ops(Registry& r) {
    const Tensor padding = mask_tensor({2, 4}, {0, 0, 0, 1, 0, 0, 1, 1});
    const Tensor everything_padded = mask_tensor({2, 4}, {0, 1, 0, 0, 1, 1, 1, 1});
    auto qkv = [] {
        return Inputs{random({2, 2, 3, 3}, 907), random({2, 2, 4, 3}, 908),
                      random({2, 2, 4, 2}, 909)};
    };
    r.add(
        "op", "scaled_dot_product_attention (key padding)",
        [padding](const Inputs& x) {
            return scaled_dot_product_attention(x[0], x[1], x[2], padding).output;
        },
        qkv);
    r.add(
        "op", "scaled_dot_product_attention (key padding + causal)",
        [padding](const Inputs& x) {
            return scaled_dot_product_attention(x[0], x[1], x[2], padding, true).output;
        },
        qkv);
    r.add(
        "op", "scaled_dot_product_attention (a fully masked row)",
        [everything_padded](const Inputs& x) {
            return scaled_dot_product_attention(x[0], x[1], x[2], everything_padded).output;
        },
        qkv);
    // packed sentences of 1 and 2 queries over 3 and 1 keys (cross), and of 2 and 2 (causal self)
    const Packing queries = Packing::of_lengths({1, 2}), keys = Packing::of_lengths({3, 1});
    r.add(
        "op", "scaled_dot_product_attention (packed sentences)",
        [queries, keys](const Inputs& x) {
            return scaled_dot_product_attention(x[0], x[1], x[2], KeyMask::packed(queries, keys))
                .output;
        },
        [] {
            return Inputs{random({1, 2, 3, 3}, 921), random({1, 2, 4, 3}, 922),
                          random({1, 2, 4, 2}, 923)};
        });
    const Packing self = Packing::of_lengths({2, 2});
    r.add(
        "op", "scaled_dot_product_attention (packed sentences + causal)",
        [self](const Inputs& x) {
            return scaled_dot_product_attention(x[0], x[1], x[2], KeyMask::packed(self, self), true)
                .output;
        },
        [] {
            return Inputs{random({1, 2, 4, 3}, 924), random({1, 2, 4, 3}, 925),
                          random({1, 2, 4, 2}, 926)};
        });
}

void add_transformer_ops(Registry& r) {
    r.add(
        "op", "layer_norm", [](const Inputs& x) { return layer_norm(x[0], x[1], x[2]); },
        [] {
            return Inputs{random({2, 3, 5}, 901, -2, 2), random({5}, 902, 0.5, 1.5),
                          random({5}, 903)};
        });
    r.add(
        "op", "gelu", [](const Inputs& x) { return gelu(x[0]); },
        [] {
            return Inputs{random({3, 4}, 904, -3, 3)};
        });
    r.add(
        "op", "sqrt", [](const Inputs& x) { return sqrt(x[0]); },
        [] {
            return Inputs{random({3, 4}, 905, 0.5, 2)};
        });
    r.add(
        "op", "transpose (dims 1, 2)", [](const Inputs& x) { return transpose(x[0], 1, 2); },
        [] {
            return Inputs{random({2, 3, 4, 2}, 906)};
        });
    add_attention_ops(r);
}

void add_transformer_layers(Registry& r) {
    r.add("layer", "MultiheadAttention (cross, padding)", [](const GradcheckOptions& o) {
        Rng rng(910);
        MultiheadAttention mha(4, 2, rng);
        const Tensor padding = mask_tensor({2, 4}, {0, 0, 0, 0, 0, 0, 1, 1});
        return gradcheck(
            [&](const Inputs& x) { return mha.forward(x[0], x[1], x[1], padding).output; },
            with_parameters({random({2, 3, 4}, 911), random({2, 4, 4}, 912)}, mha), o);
    });
    for (bool norm_first : {false, true}) {
        const std::string form = norm_first ? " (pre-norm)" : " (post-norm)";
        r.add("layer", "TransformerEncoderLayer" + form, [norm_first](const GradcheckOptions& o) {
            Rng rng(913);
            TransformerEncoderLayer layer(tiny_layer(norm_first), rng);
            const Tensor padding = mask_tensor({2, 3}, {0, 0, 0, 0, 0, 1});
            return gradcheck([&](const Inputs& x) { return layer.forward(x[0], padding); },
                             with_parameters({random({2, 3, 4}, 914)}, layer), o);
        });
        r.add("layer", "TransformerDecoderLayer" + form, [norm_first](const GradcheckOptions& o) {
            Rng rng(915);
            TransformerDecoderLayer layer(tiny_layer(norm_first), rng);
            const Tensor memory_padding = mask_tensor({2, 3}, {0, 0, 0, 0, 1, 1});
            const Tensor target_padding = mask_tensor({2, 3}, {0, 0, 1, 0, 0, 0});
            return gradcheck(
                [&](const Inputs& x) {
                    return layer.forward(x[0], x[1], target_padding, memory_padding);
                },
                with_parameters({random({2, 3, 4}, 916), random({2, 3, 4}, 917)}, layer), o);
        });
    }
    r.add("layer", "PositionalEncoding (learned)", [](const GradcheckOptions& o) {
        Rng rng(918);
        PositionalEncoding positions(true, 6, 4, rng);
        return gradcheck([&](const Inputs& x) { return positions.forward(x[0], 1); },
                         with_parameters({random({2, 3, 4}, 919)}, positions), o);
    });
}

// A tiny Transformer (d_model 4, 2 heads, FFN 6, 1 + 2 layers, vocabularies of 7 ids) on the
// batch of the Seq2Seq entries; the loss is forward_loss with label smoothing 0.1.
void add_transformer_models(Registry& r) {
    for (bool norm_first : {false, true})
        r.add("model",
              norm_first ? "Transformer pre-norm, learned positions, shared embeddings"
                         : "Transformer post-norm, sinusoidal positions",
              [norm_first](const GradcheckOptions& o) {
                  ModelConfig config;
                  config.kind = "transformer";
                  config.d_model = 4;
                  config.heads = 2;
                  config.ff_size = 6;
                  config.encoder_layers = 1;
                  config.decoder_layers = 2;
                  config.norm_first = norm_first;
                  config.positional = norm_first ? "learned" : "sinusoidal";
                  config.share_embeddings = norm_first ? "target" : "none";
                  config.max_positions = 8;
                  Rng rng(920);
                  Transformer model(config, 7, 7, rng);
                  const std::vector<EncodedPair> pairs{{{4, 5, 2}, {6, 4, 2}}, {{6, 4}, {5, 2}}};
                  const Batch batch = make_batch(pairs, {0, 1});
                  LossOptions smoothed;
                  smoothed.label_smoothing = 0.1;
                  return gradcheck(
                      [&](const Inputs&) { return model.forward_loss(batch, smoothed).loss; },
                      model.parameters(), o);
              });
}

}  // namespace

void add_transformer(Registry& r) {
    add_transformer_ops(r);
    add_transformer_layers(r);
    add_transformer_models(r);
}

}  // namespace seqgrad::gradcheck_suite
