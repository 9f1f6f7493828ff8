// Positional encodings: what tells a Transformer where each token is (attention alone does not
// know order). Both add a vector per position to the (scaled) token embeddings:
//   x_t = √E · emb(y_t) + P[offset + t]                      x [B,T,E]
// Sinusoidal (Vaswani et al. 2017; no parameters):
//   P[p, 2i] = sin(p / 10000^(2i/E)),   P[p, 2i+1] = cos(p / 10000^(2i/E))
// Learned: P is a parameter "embedding.weight" [max_positions, E] (an Embedding, N(0, 1)), trained
// like the token embeddings (as BERT and the tutorial model of bentrevett/pytorch-seq2seq do).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/module.h"

namespace seqgrad {

// The sinusoidal table rows [offset, offset + T) -> [T, E] (no gradient)
Tensor sinusoidal_positions(int64_t offset, int64_t T, int64_t E);
// Its rows at the given positions -> [N, E]
Tensor sinusoidal_positions(const std::vector<int32_t>& positions, int64_t E);

class PositionalEncoding : public Module {
  public:
    // learned: a parameter table of max_positions rows; otherwise sinusoidal (no parameters,
    // any position).
    PositionalEncoding(bool learned, int64_t max_positions, int64_t E, Rng& rng);
    // x [B,T,E] -> x + P[offset .. offset+T). A learned table throws past max_positions.
    Tensor forward(const Tensor& x, int64_t offset = 0) const;
    // x [B,N,E] -> x + P[positions[n]] at each n: packed sentences (B = 1) give each row its place
    // in its own sentence (Packing::positions).
    Tensor forward(const Tensor& x, const std::vector<int32_t>& positions) const;

    bool learned() const { return table_ != nullptr; }
    int64_t max_positions() const { return max_positions_; }

  private:
    std::unique_ptr<Embedding> table_;  // learned: registered as "embedding" (embedding.weight)
    int64_t max_positions_;
};

}  // namespace seqgrad
