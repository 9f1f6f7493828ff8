#include "seqgrad/layers/transformer.h"

#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"

namespace seqgrad {
namespace {

void check_options(const TransformerLayerOptions& o) {
    if (o.activation != "relu" && o.activation != "gelu")
        throw Error(
            fmt::format("Transformer layer: activation '{}': expected relu or gelu", o.activation));
    if (o.ff_size < 1) throw Error(fmt::format("Transformer layer: ff_size {} < 1", o.ff_size));
}

void check_input(const char* what, const Tensor& x, int64_t E) {
    if (x.rank() != 3 || x.size(2) != E)
        throw Error(fmt::format("{}: input {}: expected [B,T,{}]", what, x.shape().str(), E));
}

}  // namespace

FeedForward::FeedForward(const TransformerLayerOptions& o, Rng& rng)
    : linear1(o.d_model, o.ff_size, true, rng),
      linear2(o.ff_size, o.d_model, true, rng),
      dropout(o.dropout, rng),
      gelu(o.activation == "gelu") {
    check_options(o);
}

// linear2(dropout(act(linear1(x))))
Tensor FeedForward::forward(const Tensor& x) const {
    Tensor hidden = linear1.forward(x);
    return linear2.forward(dropout.forward(gelu ? seqgrad::gelu(hidden) : relu(hidden)));
}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerOptions& o, Rng& rng)
    : self_attn(o.d_model, o.heads, rng),
      ff(o, rng),
      norm1(o.d_model, o.eps),
      norm2(o.d_model, o.eps),
      dropout1(o.dropout, rng),
      dropout2(o.dropout, rng),
      norm_first(o.norm_first) {
    self_attn.use_fused = o.fused_attention;
    register_module("self_attn", self_attn);
    register_module("linear1", ff.linear1);
    register_module("linear2", ff.linear2);
    register_module("norm1", norm1);
    register_module("norm2", norm2);
    register_module("dropout", ff.dropout);
    register_module("dropout1", dropout1);
    register_module("dropout2", dropout2);
}

// post-norm: x = norm1(x + SA(x)); x = norm2(x + FF(x)).  pre-norm: x += SA(norm1(x)); x +=
// FF(norm2(x))
Tensor TransformerEncoderLayer::forward(const Tensor& x, const KeyMask& mask,
                                        Tensor* weights) const {
    check_input("TransformerEncoderLayer", x, self_attn.embed_dim());
    auto attend = [&](const Tensor& h) {
        MultiheadAttentionOutput a = self_attn.forward(h, h, h, mask, false, weights);
        if (weights) *weights = a.weights;
        return dropout1.forward(a.output);
    };
    if (norm_first) {
        Tensor y = x + attend(norm1.forward(x));
        return y + dropout2.forward(ff.forward(norm2.forward(y)));
    }
    Tensor y = norm1.forward(x + attend(x));
    return norm2.forward(y + dropout2.forward(ff.forward(y)));
}

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerOptions& o, Rng& rng)
    : self_attn(o.d_model, o.heads, rng),
      multihead_attn(o.d_model, o.heads, rng),
      ff(o, rng),
      norm1(o.d_model, o.eps),
      norm2(o.d_model, o.eps),
      norm3(o.d_model, o.eps),
      dropout1(o.dropout, rng),
      dropout2(o.dropout, rng),
      dropout3(o.dropout, rng),
      norm_first(o.norm_first) {
    self_attn.use_fused = multihead_attn.use_fused = o.fused_attention;
    register_module("self_attn", self_attn);
    register_module("multihead_attn", multihead_attn);
    register_module("linear1", ff.linear1);
    register_module("linear2", ff.linear2);
    register_module("norm1", norm1);
    register_module("norm2", norm2);
    register_module("norm3", norm3);
    register_module("dropout", ff.dropout);
    register_module("dropout1", dropout1);
    register_module("dropout2", dropout2);
    register_module("dropout3", dropout3);
}

// x after self-attention (`attended` = SA's output), then cross-attention and feed-forward
Tensor TransformerDecoderLayer::finish(const Tensor& x, const Tensor& attended,
                                       const KeysValues& memory, const KeyMask& memory_mask,
                                       Tensor* cross_weights) const {
    auto cross = [&](const Tensor& h) {
        TapeScope scope("attention");  // the explorer's tape: the cross-attention of this layer
        MultiheadAttentionOutput a =
            multihead_attn.attend(h, memory, memory_mask, false, cross_weights);
        if (cross_weights) *cross_weights = a.weights;
        return dropout2.forward(a.output);
    };
    if (norm_first) {
        Tensor y = x + dropout1.forward(attended);
        y = y + cross(norm2.forward(y));
        return y + dropout3.forward(ff.forward(norm3.forward(y)));
    }
    Tensor y = norm1.forward(x + dropout1.forward(attended));
    y = norm2.forward(y + cross(y));
    return norm3.forward(y + dropout3.forward(ff.forward(y)));
}

Tensor TransformerDecoderLayer::forward(const Tensor& x, const Tensor& memory,
                                        const KeyMask& target_mask, const KeyMask& memory_mask,
                                        std::vector<Tensor>* weights) const {
    check_input("TransformerDecoderLayer", x, self_attn.embed_dim());
    check_input("TransformerDecoderLayer (memory)", memory, self_attn.embed_dim());
    const Tensor h = norm_first ? norm1.forward(x) : x;
    MultiheadAttentionOutput sa =
        self_attn.forward(h, h, h, target_mask, /*causal=*/true, weights != nullptr);
    Tensor cross_weights;
    KeysValues memory_kv;
    {
        TapeScope scope("attention");
        memory_kv = multihead_attn.keys_values(memory, memory);
    }
    Tensor y = finish(x, sa.output, memory_kv, memory_mask, weights ? &cross_weights : nullptr);
    if (weights) *weights = {sa.weights, cross_weights};
    return y;
}

// The newest position attends to every position so far: its own keys and values are appended
// to the cache, and no causal mask is needed (nothing later exists yet).
Tensor TransformerDecoderLayer::step(const Tensor& x, DecoderLayerCache& cache,
                                     const Tensor& memory_padding_mask, Tensor* cross_weights,
                                     Tensor* self_weights) const {
    check_input("TransformerDecoderLayer::step", x, self_attn.embed_dim());
    const Tensor h = norm_first ? norm1.forward(x) : x;
    KeysValues now = self_attn.keys_values(h, h);  // [N,h,1,d]
    if (cache.self.keys.defined()) {
        cache.self.keys = concat({cache.self.keys, now.keys}, 2);
        cache.self.values = concat({cache.self.values, now.values}, 2);
    } else {
        cache.self = now;
    }
    MultiheadAttentionOutput sa =
        self_attn.attend(h, cache.self, Tensor(), false, self_weights != nullptr);
    if (self_weights) *self_weights = sa.weights;
    return finish(x, sa.output, cache.memory, memory_padding_mask, cross_weights);
}

TransformerEncoder::TransformerEncoder(const TransformerLayerOptions& o, int num_layers, Rng& rng)
    : norm(o.d_model, o.eps) {
    if (num_layers < 1)
        throw Error(fmt::format("TransformerEncoder: num_layers {} < 1", num_layers));
    for (int l = 0; l < num_layers; ++l) {
        layers.push_back(std::make_unique<TransformerEncoderLayer>(o, rng));
        register_module(fmt::format("layers.{}", l), *layers.back());
    }
    register_module("norm", norm);
}

Tensor TransformerEncoder::forward(const Tensor& x, const KeyMask& mask,
                                   std::vector<Tensor>* weights) const {
    Tensor y = x;
    if (weights) weights->clear();
    for (size_t l = 0; l < layers.size(); ++l) {
        TapeScope scope{int64_t(l)};  // the explorer's tape: layer l's ops (the final norm: L)
        Tensor w;
        y = layers[l]->forward(y, mask, weights ? &w : nullptr);
        if (weights) weights->push_back(w);
    }
    TapeScope scope{int64_t(layers.size())};
    return norm.forward(y);
}

TransformerDecoder::TransformerDecoder(const TransformerLayerOptions& o, int num_layers, Rng& rng)
    : norm(o.d_model, o.eps) {
    if (num_layers < 1)
        throw Error(fmt::format("TransformerDecoder: num_layers {} < 1", num_layers));
    for (int l = 0; l < num_layers; ++l) {
        layers.push_back(std::make_unique<TransformerDecoderLayer>(o, rng));
        register_module(fmt::format("layers.{}", l), *layers.back());
    }
    register_module("norm", norm);
}

Tensor TransformerDecoder::forward(const Tensor& x, const Tensor& memory,
                                   const KeyMask& target_mask, const KeyMask& memory_mask,
                                   std::vector<Tensor>* weights) const {
    Tensor y = x;
    if (weights) weights->clear();
    for (size_t l = 0; l < layers.size(); ++l) {
        TapeScope scope{int64_t(l)};
        std::vector<Tensor> w;
        y = layers[l]->forward(y, memory, target_mask, memory_mask, weights ? &w : nullptr);
        if (weights) weights->insert(weights->end(), w.begin(), w.end());
    }
    TapeScope scope{int64_t(layers.size())};
    return norm.forward(y);
}

std::vector<DecoderLayerCache> TransformerDecoder::start(const Tensor& memory) const {
    std::vector<DecoderLayerCache> caches(layers.size());
    for (size_t l = 0; l < layers.size(); ++l)
        caches[l].memory = layers[l]->multihead_attn.keys_values(memory, memory);
    return caches;
}

Tensor TransformerDecoder::step(const Tensor& x, std::vector<DecoderLayerCache>& caches,
                                const Tensor& memory_padding_mask,
                                std::vector<Tensor>* cross_weights,
                                std::vector<Tensor>* self_weights,
                                Tensor* top_cross_weights) const {
    if (caches.size() != layers.size())
        throw Error(fmt::format("TransformerDecoder::step: {} caches for {} layers", caches.size(),
                                layers.size()));
    Tensor y = x;
    if (cross_weights) cross_weights->clear();
    if (self_weights) self_weights->clear();
    for (size_t l = 0; l < layers.size(); ++l) {
        Tensor cross, self;
        const bool top = l + 1 == layers.size();
        const bool want_cross = cross_weights || (top && top_cross_weights);
        y = layers[l]->step(y, caches[l], memory_padding_mask, want_cross ? &cross : nullptr,
                            self_weights ? &self : nullptr);
        if (cross_weights) cross_weights->push_back(cross);
        if (self_weights) self_weights->push_back(self);
        if (top && top_cross_weights) *top_cross_weights = cross;
    }
    return norm.forward(y);
}

}  // namespace seqgrad
