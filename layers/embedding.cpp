#include "seqgrad/layers/embedding.h"

#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, int32_t padding_idx, Rng& rng)
    : padding_idx_(padding_idx) {
    if (num_embeddings < 1 || embedding_dim < 1)
        throw Error(fmt::format("Embedding: num_embeddings {} and embedding_dim {} must be >= 1",
                                num_embeddings, embedding_dim));
    if (padding_idx < -1 || padding_idx >= num_embeddings)
        throw Error(fmt::format("Embedding: padding_idx {} must be -1 (none) or in [0, {})",
                                padding_idx, num_embeddings));
    weight = register_parameter("weight", Tensor::empty({num_embeddings, embedding_dim}));
    init::normal(weight, 0, 1, rng);
    if (padding_idx >= 0) {
        real* row = weight.data() + int64_t(padding_idx) * embedding_dim;
        std::fill(row, row + embedding_dim, real(0));
    }
}

Embedding::Embedding(const Tensor& shared, int32_t padding_idx) : padding_idx_(padding_idx) {
    if (!shared.defined() || shared.rank() != 2)
        throw Error(fmt::format("Embedding: a shared weight must be a matrix [V,E], got {}",
                                shared.defined() ? shared.shape().str() : "an undefined tensor"));
    if (padding_idx < -1 || padding_idx >= shared.size(0))
        throw Error(fmt::format("Embedding: padding_idx {} must be -1 (none) or in [0, {})",
                                padding_idx, shared.size(0)));
    weight = register_parameter("weight", shared);
}

// ids [ids_shape] -> [ids_shape..., E]; the padding row gets no gradient (the embedding op).
Tensor Embedding::forward(const std::vector<int32_t>& ids, const Shape& ids_shape) const {
    return embedding(weight, ids, ids_shape, padding_idx_);
}

}  // namespace seqgrad
