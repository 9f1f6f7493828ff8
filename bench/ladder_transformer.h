// The Transformer's rungs of the performance ladder (docs/performance.md): train_throughput
// --config t --ladder-off NAME,... runs the same Transformer with these optimisations undone:
//   fused_attention   every MultiheadAttention runs scaled_dot_product_attention_composed
//                     (batched matmuls, masked_fill, softmax: each its own op) instead of the
//                     fused op of autograd/fused_dot_product_attention.h
//   fused_layer_norm  every LayerNorm runs layer_norm_composed instead of the fused op of
//                     autograd/fused_layer_norm.h
//   fused_loss        the loss as PyTorch's tutorial computes it: out() over every position
//                     (padding included) [B*T, V], then cross_entropy_composed ignoring PAD,
//                     instead of linear_cross_entropy over the real target tokens only (this
//                     runs the padded batch, so it turns packed_sentences off too)
//   packed_sentences  the padded batch [B,T,E] through every layer (forward_loss_padded)
//                     instead of the sentences packed end to end without padding
// The layers take "fused or composed" as their public use_fused flag, which this sets; the model
// is not changed. tests/unit/test_transformer_ops.cpp holds the fused ops equal to their twins.
#pragma once

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/loss.h"
#include "seqgrad/models/model/transformer.h"

namespace seqgrad::bench {

struct TransformerLadderOptions {
    bool fused_attention = true, fused_layer_norm = true, fused_loss = true,
         packed_sentences = true;
};

inline TransformerLadderOptions parse_transformer_ladder_off(const std::string& list) {
    TransformerLadderOptions o;
    std::stringstream in(list);
    for (std::string name; std::getline(in, name, ',');) {
        if (name.empty()) continue;
        if (name == "fused_attention")
            o.fused_attention = false;
        else if (name == "fused_layer_norm")
            o.fused_layer_norm = false;
        else if (name == "fused_loss")
            o.fused_loss = o.packed_sentences = false;
        else if (name == "packed_sentences")
            o.packed_sentences = false;
        else
            throw std::runtime_error(fmt::format(
                "--ladder-off: unknown rung '{}' for the Transformer (known: fused_attention, "
                "fused_layer_norm, fused_loss, packed_sentences)",
                name));
    }
    return o;
}

// Sets every attention's and layer norm's use_fused.
inline void set_transformer_ladder(Transformer& model, const TransformerLadderOptions& o) {
    TransformerEncoderDecoder& t = model.transformer;
    for (auto& layer : t.encoder.layers) {
        layer->self_attn.use_fused = o.fused_attention;
        layer->norm1.use_fused = layer->norm2.use_fused = o.fused_layer_norm;
    }
    t.encoder.norm.use_fused = o.fused_layer_norm;
    for (auto& layer : t.decoder.layers) {
        layer->self_attn.use_fused = layer->multihead_attn.use_fused = o.fused_attention;
        layer->norm1.use_fused = layer->norm2.use_fused = layer->norm3.use_fused =
            o.fused_layer_norm;
    }
    t.decoder.norm.use_fused = o.fused_layer_norm;
}

// The training loss: packed (model.forward_loss), padded with the fused loss over the real tokens
// (forward_loss_padded), or padded with every position projected (fused_loss off).
inline Tensor transformer_ladder_loss(const Transformer& model, const Batch& batch,
                                      const TransformerLadderOptions& o) {
    if (o.packed_sentences) return model.forward_loss(batch).loss;
    if (o.fused_loss) return model.forward_loss_padded(batch).loss;
    const TransformerForward f = model.forward(batch);
    const Tensor logits = model.project(reshape(f.decoded, {-1, int64_t(model.config().d_model)}));
    return cross_entropy_composed(logits, batch.tgt_out, Vocab::PAD, Reduction::mean);
}

}  // namespace seqgrad::bench
