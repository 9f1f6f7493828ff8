// The synthetic data and model configurations of the throughput benchmarks, defined exactly as
// in bench/torch_baseline.py (its header is the reference): sentences of 5..12 tokens (EOS
// included) with ids uniform in [4, V), source and target lengths independent, a fixed pool of
// batches reused in rotation.
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
    int E, H, A, B;
    int64_t Vs, Vt;
    std::string cell = "gru";  // the encoder's and decoder's cell (train_throughput --cell)
};

inline BenchConfig bench_config(const std::string& name) {
    if (name == "a") return {"a", "bahdanau", 256, 256, 256, 32, 4000, 6000};
    if (name == "b") return {"b", "bahdanau", 256, 256, 256, 64, 4000, 6000};
    if (name == "c") return {"c", "bahdanau", 512, 512, 512, 64, 4000, 6000};
    if (name == "d") return {"d", "luong_general", 256, 256, 256, 32, 4000, 6000};
    if (name == "e") return {"e", "bahdanau", 64, 64, 64, 16, 50, 50};
    throw std::runtime_error(fmt::format("unknown config '{}' (a, b, c, d or e)", name));
}

inline ModelConfig model_config(const BenchConfig& b) {
    ModelConfig m;
    m.embedding_size = b.E;
    m.hidden_size = b.H;
    m.attention_size = b.A;
    m.attention = b.attention;
    m.cell = b.cell;
    apply_switches(m, switches());  // SEQGRAD_DISABLE=fused_gru, fused_attention, ...
    return m;
}

// L-1 ids uniform in [4, V) then EOS; L uniform in [min_len, max_len].
inline std::vector<int32_t> random_sentence(Rng& rng, int64_t vocab, int min_len, int max_len) {
    int length = min_len + int(rng.below(uint64_t(max_len - min_len + 1)));
    std::vector<int32_t> s;
    for (int i = 0; i < length - 1; ++i) s.push_back(4 + int32_t(rng.below(uint64_t(vocab - 4))));
    s.push_back(Vocab::EOS);
    return s;
}

inline std::vector<Batch> batch_pool(const BenchConfig& c, uint64_t seed, int count = 16,
                                     int min_len = 5, int max_len = 12, int target_len = 0) {
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
inline double training_flops(const BenchConfig& c, const Batch& b) {
    const double E = c.E, H = c.H, A = c.A, V = double(c.Vt);
    const double G = c.cell == "lstm" ? 4 : c.cell == "rnn" ? 1 : 3;  // gates
    double forward = 0;
    for (int i = 0; i < b.batch_size; ++i) {
        const double S = b.src_lengths[i], T = b.tgt_lengths[i];
        forward += S * (2 * E * G * H + 2 * H * G * H);  // encoder
        if (c.attention == "bahdanau") {
            forward += S * 2 * H * A;                              // keys projected once
            forward += T * (2 * H * A + 2 * S * A + 2 * S * H);    // query, scores, context
            forward += T * (2 * (E + H) * G * H + 2 * H * G * H);  // decoder cell
        } else {
            forward += S * 2 * H * H;                                // W_a keys once
            forward += T * (2 * S * H + 2 * S * H + 2 * 2 * H * H);  // scores, context, W_c
            forward += T * (2 * E * G * H + 2 * H * G * H);
        }
        forward += T * 2 * H * V;  // output projection
    }
    return 3 * forward;
}

}  // namespace seqgrad::bench
