// The synthetic data and model configurations of the throughput benchmarks, defined exactly as
// in bench/torch_baseline.py (configs a..e) and bench/torch_tutorials.py (configs t and g; their
// headers are the reference): sentences of min_len..max_len tokens (EOS included) with ids
// uniform in [4, V), source and target lengths independent, a fixed pool of batches reused in
// rotation.
//   t: the Transformer of nn.Transformer's translation tutorial, at the shape of (a): 3 + 3
//      layers, d_model 256, 8 heads, feed-forward 512, batch 32, vocabularies 4000/6000,
//      lengths 5..12, no dropout (as every config here)
//   g: the GRU model of bentrevett/pytorch-seq2seq notebook 3 (Bahdanau et al. 2015):
//      bidirectional GRU encoder, embeddings 256, hidden 512 per direction, the bridge
//      tanh(fc([h_fwd; h_bwd])) to the decoder's 512, additive attention of size 512, deep
//      output out([h_t; c_t; emb(y_{t-1})]); vocabularies 7853/5893 (Multi30k's), 20,518,405
//      parameters; batch 128, lengths 5..19 (mean 12, EOS included; Multi30k's sentences
//      average about 12 tokens), no dropout
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "apps/cli/model_switches.h"
#include "seqgrad/autograd/rng.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/run/config.h"

namespace seqgrad::bench {

struct BenchConfig {
    std::string name, attention;
    int E, H, A, B;  // the Transformer: E = d_model, H = the feed-forward size F
    int64_t Vs, Vt;
    std::string cell = "gru";  // the encoder's and decoder's cell (train_throughput --cell)
    std::string kind = "rnn";  // or "transformer"
    int min_len = 5, max_len = 12;
    int layers = 1, heads = 0;  // the Transformer's depth of each stack, heads
    bool bidirectional = false, deep_output = false;
    int encoder_hidden = 0;  // per direction; 0 = H
};

inline BenchConfig bench_config(const std::string& name) {
    if (name == "a") return {"a", "bahdanau", 256, 256, 256, 32, 4000, 6000};
    if (name == "b") return {"b", "bahdanau", 256, 256, 256, 64, 4000, 6000};
    if (name == "c") return {"c", "bahdanau", 512, 512, 512, 64, 4000, 6000};
    if (name == "d") return {"d", "luong_general", 256, 256, 256, 32, 4000, 6000};
    if (name == "e") return {"e", "bahdanau", 64, 64, 64, 16, 50, 50};
    if (name == "t") {
        BenchConfig c{"t", "multihead", 256, 512, 0, 32, 4000, 6000};
        c.kind = "transformer";
        c.layers = 3;
        c.heads = 8;
        return c;
    }
    if (name == "g") {
        BenchConfig c{"g", "bahdanau", 256, 512, 512, 128, 7853, 5893};
        c.min_len = 5;
        c.max_len = 19;
        c.bidirectional = true;
        c.deep_output = true;
        c.encoder_hidden = 512;
        return c;
    }
    throw std::runtime_error(fmt::format("unknown config '{}' (a, b, c, d, e, t or g)", name));
}

inline ModelConfig model_config(const BenchConfig& b) {
    ModelConfig m;
    if (b.kind == "transformer") {
        m.kind = "transformer";
        m.d_model = b.E;
        m.ff_size = b.H;
        m.heads = b.heads;
        m.encoder_layers = m.decoder_layers = b.layers;
        return m;
    }
    m.embedding_size = b.E;
    m.hidden_size = b.H;
    m.attention_size = b.A;
    m.attention = b.attention;
    m.cell = b.cell;
    m.bidirectional = b.bidirectional;
    m.encoder_hidden_size = b.encoder_hidden;
    m.output_layer = b.deep_output ? "deep" : "plain";
    return m;
}

// The layers' options for the model of `b`: SEQGRAD_DISABLE=fused_gru, fused_attention, ...
inline FusedLayers fused_layers(const BenchConfig& b) {
    return seqgrad::fused_layers(model_config(b).cell, switches());
}

// L-1 ids uniform in [4, V) then EOS; L uniform in [min_len, max_len].
inline std::vector<int32_t> random_sentence(Rng& rng, int64_t vocab, int min_len, int max_len) {
    int length = min_len + int(rng.below(uint64_t(max_len - min_len + 1)));
    std::vector<int32_t> s;
    for (int i = 0; i < length - 1; ++i) s.push_back(4 + int32_t(rng.below(uint64_t(vocab - 4))));
    s.push_back(Vocab::EOS);
    return s;
}

// min_len / max_len 0: the config's own
inline std::vector<Batch> batch_pool(const BenchConfig& c, uint64_t seed, int count = 16,
                                     int min_len = 0, int max_len = 0, int target_len = 0) {
    if (min_len == 0) min_len = c.min_len;
    if (max_len == 0) max_len = c.max_len;
    Rng rng(seed);
    std::vector<Batch> pool;
    for (int k = 0; k < count; ++k) {
        std::vector<EncodedPair> pairs;
        std::vector<size_t> indices;
        for (int i = 0; i < c.B; ++i) {
            EncodedPair p;
            p.source = random_sentence(rng, c.Vs, min_len, max_len);
            p.target = target_len > 0 ? random_sentence(rng, c.Vt, target_len, target_len)
                                      : random_sentence(rng, c.Vt, min_len, max_len);
            pairs.push_back(p);
            indices.push_back(size_t(i));
        }
        pool.push_back(make_batch(pairs, indices));
    }
    return pool;
}

// Floating-point operations of the useful (non-pad) work of one training step: the forward
// products counted per real source / target token, times 3 for forward + backward (each
// product's backward is two products of the same size). Elementwise work is left out.
// The Transformer (per layer, per real token): the projections, q·k and a·v over the real
// positions attended (the decoder's self-attention: the t + 1 positions up to its own).
inline double transformer_training_flops(const BenchConfig& c, const Batch& b) {
    const double E = c.E, F = c.H, V = double(c.Vt), L = c.layers;
    double forward = 0;
    for (int i = 0; i < b.batch_size; ++i) {
        const double S = b.src_lengths[i], T = b.tgt_lengths[i];
        // encoder: q, k, v and out projections, scores and context, feed-forward
        forward += L * S * (2 * E * 3 * E + 2 * E * E + 4 * S * E + 4 * E * F);
        // decoder self-attention (causal: sum over t of t + 1 positions), cross-attention
        // (q and out per target token, k and v of the memory per source token), feed-forward
        forward += L * (T * (2 * E * 3 * E + 2 * E * E) + 4 * E * T * (T + 1) / 2);
        forward += L * (T * (2 * E * E + 2 * E * E + 4 * S * E) + S * 2 * E * 2 * E);
        forward += L * T * 4 * E * F;
        forward += T * 2 * E * V;  // output projection
    }
    return 3 * forward;
}

inline double training_flops(const BenchConfig& c, const Batch& b) {
    if (c.kind == "transformer") return transformer_training_flops(c, b);
    const double E = c.E, H = c.H, A = c.A, V = double(c.Vt);
    const double G = c.cell == "lstm" ? 4 : c.cell == "rnn" ? 1 : 3;  // gates
    // the encoder: He per direction, K = its output size (the keys and the context)
    const double He = c.encoder_hidden > 0 ? c.encoder_hidden : H, dirs = c.bidirectional ? 2 : 1;
    const double K = dirs * He;
    const double O = c.deep_output ? H + K + E : H;  // what the output projection reads
    double forward = 0;
    for (int i = 0; i < b.batch_size; ++i) {
        const double S = b.src_lengths[i], T = b.tgt_lengths[i];
        forward += dirs * S * (2 * E * G * He + 2 * He * G * He);  // encoder
        if (K != H || dirs > 1) forward += 2 * K * H;              // bridge, once
        if (c.attention == "bahdanau") {
            forward += S * 2 * K * A;                              // keys projected once
            forward += T * (2 * H * A + 2 * S * A + 2 * S * K);    // query, scores, context
            forward += T * (2 * (E + K) * G * H + 2 * H * G * H);  // decoder cell
        } else {
            forward += S * 2 * H * H;                                // W_a keys once
            forward += T * (2 * S * H + 2 * S * H + 2 * 2 * H * H);  // scores, context, W_c
            forward += T * (2 * E * G * H + 2 * H * G * H);
        }
        forward += T * 2 * O * V;  // output projection
    }
    return 3 * forward;
}

}  // namespace seqgrad::bench
