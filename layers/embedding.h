// Embedding: a lookup table of vectors, one row per token id (PyTorch's nn.Embedding).
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/layers/module.h"

namespace seqgrad {

class Embedding : public Module {
  public:
    // Parameter "weight" [num_embeddings, embedding_dim], N(0, 1) as in PyTorch. padding_idx
    // (-1 = none) names the row used for padding: it starts at zero and never gets a gradient,
    // so it stays zero through training.
    Embedding(int64_t num_embeddings, int64_t embedding_dim, int32_t padding_idx, Rng& rng);
    // Tied weights: an embedding that reads `shared` [num_embeddings, embedding_dim], another
    // module's parameter, as its own "weight". The owner registers only one of the modules that
    // hold it, so the weight is one parameter: one optimizer entry, one checkpoint tensor, and
    // the gradients of every use add up in its .grad.
    Embedding(const Tensor& shared, int32_t padding_idx);

    // ids (shape ids_shape, e.g. [B,T]) -> [ids_shape..., embedding_dim]
    Tensor forward(const std::vector<int32_t>& ids, const Shape& ids_shape) const;

    int64_t num_embeddings() const { return weight.size(0); }
    int64_t embedding_dim() const { return weight.size(1); }
    int32_t padding_idx() const { return padding_idx_; }

    Tensor weight;  // [num_embeddings, embedding_dim]

  private:
    int32_t padding_idx_;
};

}  // namespace seqgrad
