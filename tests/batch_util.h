// A padded batch for the model tests, shared by the test suites.
#pragma once

#include <string>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/run/config.h"

namespace seqgrad::testing {

// 7 pairs of mixed source and target lengths (EOS included), ids drawn from `seed`, in an order
// that is NOT sorted by target length.
inline Batch mixed_length_batch(uint64_t seed) {
    std::vector<EncodedPair> pairs;
    Rng rng(seed);
    const int target_lengths[] = {2, 5, 3, 5, 1, 4, 2};
    const int source_lengths[] = {4, 2, 6, 3, 5, 1, 2};
    for (int i = 0; i < 7; ++i) {
        EncodedPair p;
        for (int s = 0; s < source_lengths[i] - 1; ++s)
            p.source.push_back(4 + int32_t(rng.below(9)));
        p.source.push_back(Vocab::EOS);
        for (int t = 0; t < target_lengths[i] - 1; ++t)
            p.target.push_back(4 + int32_t(rng.below(9)));
        p.target.push_back(Vocab::EOS);
        pairs.push_back(p);
    }
    return make_batch(pairs, {0, 1, 2, 3, 4, 5, 6});
}

// A model small enough for exact comparisons (E = 5, H = 6, A = 4), with input feeding for Luong
// general so that every decoder path runs.
inline ModelConfig small_model_config(const std::string& attention) {
    ModelConfig c;
    c.embedding_size = 5;
    c.hidden_size = 6;
    c.attention_size = 4;
    c.attention = attention;
    c.input_feeding = attention == "luong_general";
    return c;
}

}  // namespace seqgrad::testing
