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

// scaled_dot_product_attention with every kind of mask, one row each: key padding, causal, a
// fully masked row, packed sentences (of 1 and 2 queries over 3 and 1 keys (cross), and of 2
// and 2 (causal self)). q, k, v: random of the row's shapes, seeds seed, seed + 1, seed + 2.
void add_attention_ops(Registry& r) {
    struct AttentionOp {
        const char* name;
        Tensor padding;  // undefined: packed, by query and key lengths
        std::vector<int32_t> query_lengths, key_lengths;
        bool causal;
        Shape q, k, v;
        uint64_t seed;
    };
    const Tensor padding = mask_tensor({2, 4}, {0, 0, 0, 1, 0, 0, 1, 1});
    const Tensor one_row_all_padded = mask_tensor({2, 4}, {0, 1, 0, 0, 1, 1, 1, 1});
    const Shape q{2, 2, 3, 3}, k{2, 2, 4, 3}, v{2, 2, 4, 2};
    const AttentionOp ops[] = {
        {"key padding", padding, {}, {}, false, q, k, v, 907},
        {"key padding + causal", padding, {}, {}, true, q, k, v, 907},
        {"a fully masked row", one_row_all_padded, {}, {}, false, q, k, v, 907},
        {"packed sentences",
         Tensor(),
         {1, 2},
         {3, 1},
         false,
         {1, 2, 3, 3},
         {1, 2, 4, 3},
         {1, 2, 4, 2},
         921},
        {"packed sentences + causal",
         Tensor(),
         {2, 2},
         {2, 2},
         true,
         {1, 2, 4, 3},
         {1, 2, 4, 3},
         {1, 2, 4, 2},
         924},
    };
    for (const AttentionOp& op : ops)
        r.add(
            "op", std::string("scaled_dot_product_attention (") + op.name + ")",
            [op](const Inputs& x) {
                if (op.padding.defined())
                    return scaled_dot_product_attention(x[0], x[1], x[2], op.padding, op.causal)
                        .output;
                const Packing queries = Packing::of_lengths(op.query_lengths),
                              keys = Packing::of_lengths(op.key_lengths);
                const KeyMask packed = KeyMask::packed(queries, keys);
                return scaled_dot_product_attention(x[0], x[1], x[2], packed, op.causal).output;
            },
            [op] {
                return Inputs{random(op.q, op.seed), random(op.k, op.seed + 1),
                              random(op.v, op.seed + 2)};
            });
}

void add_transformer_ops(Registry& r) {
    r.add(
        "op", "layer_norm", [](const Inputs& x) { return layer_norm(x[0], x[1], x[2]); },
        [] {
            return Inputs{random({2, 3, 5}, 901, -2, 2), random({5}, 902, 0.5, 1.5),
                          random({5}, 903)};
        });
    r.add_unary_ops({
        {"gelu", [](const Tensor& x) { return gelu(x); }, {3, 4}, 904, -3, 3},
        {"sqrt", [](const Tensor& x) { return sqrt(x); }, {3, 4}, 905, 0.5, 2},
        {"transpose (dims 1, 2)",
         [](const Tensor& x) { return transpose(x, 1, 2); },
         {2, 3, 4, 2},
         906},
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
