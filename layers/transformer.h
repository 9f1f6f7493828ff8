// The Transformer's layers, PyTorch's nn.TransformerEncoderLayer / nn.TransformerDecoderLayer /
// nn.TransformerEncoder / nn.TransformerDecoder (batch_first=True) with their parameter names,
// so that a state dict of nn.Transformer maps onto TransformerEncoder + TransformerDecoder
// (encoder.layers.0.self_attn.in_proj_weight, ..., encoder.norm.weight, decoder.layers.0.
// multihead_attn.out_proj.bias, ...).
//
// Shapes: x [B,T,E] (E = d_model), memory [B,S,E], masks [B,T] / [B,S] nonzero at padding.
// Packed sentences (training's layout): x [1,ΣT_i,E], memory [1,ΣS_i,E], and the masks say where
// each sentence is (KeyMask::packed, autograd/fused_dot_product_attention.h). Only attention
// mixes positions, and it keeps each sentence to itself; every other part is position-wise.
//
//   FF(x) = linear2(dropout(act(linear1(x))))        E -> F -> E, act = relu or gelu
//   encoder layer, post-norm (norm_first = false, the original Transformer):
//     x = norm1(x + dropout1(SelfAttn(x)))
//     x = norm2(x + dropout2(FF(x)))
//   encoder layer, pre-norm (norm_first = true):
//     x = x + dropout1(SelfAttn(norm1(x)))
//     x = x + dropout2(FF(norm2(x)))
//   decoder layer (post-norm; pre-norm normalises each sub-layer's input instead, as above):
//     x = norm1(x + dropout1(SelfAttn(x, causal)))
//     x = norm2(x + dropout2(CrossAttn(x, memory)))
//     x = norm3(x + dropout3(FF(x)))
//   stacks: encoder = norm(layer_N(...layer_1(x))), decoder likewise, each with its final norm
//   (nn.Transformer always has both).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seqgrad/layers/dropout.h"
#include "seqgrad/layers/layer_norm.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/multihead_attention.h"

namespace seqgrad {

struct TransformerLayerOptions {
    int64_t d_model = 512;
    int64_t heads = 8;
    int64_t ff_size = 2048;  // F, PyTorch's dim_feedforward
    real dropout = 0.1;
    bool norm_first = false;          // pre-norm
    std::string activation = "relu";  // or "gelu"
    real eps = 1e-5;                  // of every LayerNorm
    bool fused_attention = true;      // every MultiheadAttention's use_fused
};

// The position-wise feed-forward block's parts, shared by both layers.
class FeedForward {
  public:
    FeedForward(const TransformerLayerOptions& options, Rng& rng);
    Tensor forward(const Tensor& x) const;  // linear2(dropout(act(linear1(x))))

    Linear linear1, linear2;
    Dropout dropout;
    bool gelu;
};

class TransformerEncoderLayer : public Module {
  public:
    TransformerEncoderLayer(const TransformerLayerOptions& options, Rng& rng);
    // x [B,S,E], mask: key padding [B,S] or a packing -> [B,S,E]. weights (optional) receives the
    // self-attention weights [B,h,S,S].
    Tensor forward(const Tensor& x, const KeyMask& mask, Tensor* weights = nullptr) const;

    MultiheadAttention self_attn;
    FeedForward ff;  // its linear1, linear2 registered under the layer, as PyTorch
    LayerNorm norm1, norm2;
    Dropout dropout1, dropout2;
    bool norm_first;
};

// What a decoder layer keeps between decoding steps: its self-attention's keys and values of
// every position so far ([N,h,t,d], growing by one position per step) and the cross-attention's
// keys and values of the memory ([N,h,S,d], computed once).
struct DecoderLayerCache {
    KeysValues self;
    KeysValues memory;
};

class TransformerDecoderLayer : public Module {
  public:
    TransformerDecoderLayer(const TransformerLayerOptions& options, Rng& rng);
    // The teacher-forced pass: x [B,T,E] attends causally to itself and to memory [B,S,E].
    // weights (optional): {self [B,h,T,T], cross [B,h,T,S]}.
    // target_mask: the target's key padding [B,T] or packing; memory_mask: the memory's.
    Tensor forward(const Tensor& x, const Tensor& memory, const KeyMask& target_mask,
                   const KeyMask& memory_mask, std::vector<Tensor>* weights = nullptr) const;
    // One decoding step: x [N,1,E] is the newest position; its keys and values are appended to
    // cache.self (which need not be defined at the first step). cross_weights (optional)
    // receives [N,h,1,S], self_weights (optional) [N,h,1,t] over the t positions so far.
    Tensor step(const Tensor& x, DecoderLayerCache& cache, const Tensor& memory_padding_mask,
                Tensor* cross_weights = nullptr, Tensor* self_weights = nullptr) const;

    MultiheadAttention self_attn, multihead_attn;
    FeedForward ff;
    LayerNorm norm1, norm2, norm3;
    Dropout dropout1, dropout2, dropout3;
    bool norm_first;

  private:
    // the cross-attention and feed-forward sub-layers after self-attention's output `attended`
    Tensor finish(const Tensor& x, const Tensor& attended, const KeysValues& memory,
                  const KeyMask& memory_mask, Tensor* cross_weights) const;
};

class TransformerEncoder : public Module {
  public:
    TransformerEncoder(const TransformerLayerOptions& options, int num_layers, Rng& rng);
    // x [B,S,E] -> memory [B,S,E]; weights (optional): each layer's [B,h,S,S]
    Tensor forward(const Tensor& x, const KeyMask& mask,
                   std::vector<Tensor>* weights = nullptr) const;

    std::vector<std::unique_ptr<TransformerEncoderLayer>> layers;  // "layers.0", "layers.1", ...
    LayerNorm norm;
};

class TransformerDecoder : public Module {
  public:
    TransformerDecoder(const TransformerLayerOptions& options, int num_layers, Rng& rng);
    // x [B,T,E] -> [B,T,E]; weights (optional): each layer's {self, cross}, in layer order
    Tensor forward(const Tensor& x, const Tensor& memory, const KeyMask& target_mask,
                   const KeyMask& memory_mask, std::vector<Tensor>* weights = nullptr) const;
    // One step for every row: x [N,1,E] -> [N,1,E]; caches: one per layer.
    // cross_weights (optional): each layer's [N,h,1,S]; self_weights (optional): each layer's
    // [N,h,1,t]; top_cross_weights (optional): the top layer's [N,h,1,S] only.
    Tensor step(const Tensor& x, std::vector<DecoderLayerCache>& caches,
                const Tensor& memory_padding_mask, std::vector<Tensor>* cross_weights = nullptr,
                std::vector<Tensor>* self_weights = nullptr,
                Tensor* top_cross_weights = nullptr) const;
    // Each layer's cache before the first step: the memory's keys and values.
    std::vector<DecoderLayerCache> start(const Tensor& memory) const;

    std::vector<std::unique_ptr<TransformerDecoderLayer>> layers;
    LayerNorm norm;
};

// nn.Transformer's two stacks under its names: "encoder.layers.0...", "decoder.norm...".
class TransformerEncoderDecoder : public Module {
  public:
    TransformerEncoderDecoder(const TransformerLayerOptions& options, int encoder_layers,
                              int decoder_layers, Rng& rng)
        : encoder(options, encoder_layers, rng), decoder(options, decoder_layers, rng) {
        register_module("encoder", encoder);
        register_module("decoder", decoder);
    }
    TransformerEncoder encoder;
    TransformerDecoder decoder;
};

}  // namespace seqgrad
