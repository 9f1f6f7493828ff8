#include "seqgrad/layers/positional_encoding.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// P[p, 2i] = sin(p ω_i),  P[p, 2i+1] = cos(p ω_i),  ω_i = 10000^(−2i/E)
Tensor sinusoidal_positions(int64_t offset, int64_t T, int64_t E) {
    Tensor table = Tensor::empty({T, E});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < E; ++j) {
            const double omega = std::pow(10000.0, -double(j - j % 2) / double(E));
            const double angle = double(offset + t) * omega;
            table.data()[t * E + j] = real(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    return table;
}

PositionalEncoding::PositionalEncoding(bool learned, int64_t max_positions, int64_t E, Rng& rng)
    : max_positions_(max_positions) {
    if (learned) {
        if (max_positions < 1)
            throw Error(fmt::format("PositionalEncoding: max_positions {} < 1", max_positions));
        table_ = std::make_unique<Embedding>(max_positions, E, -1, rng);
        register_module("embedding", *table_);
    }
}

Tensor PositionalEncoding::forward(const Tensor& x, int64_t offset) const {
    if (x.rank() != 3)
        throw Error(fmt::format("PositionalEncoding: x {}: expected [B,T,E]", x.shape().str()));
    const int64_t T = x.size(1), E = x.size(2);
    if (!table_) return x + sinusoidal_positions(offset, T, E);  // [T,E] broadcasts over B
    if (offset + T > max_positions_)
        throw Error(
            fmt::format("PositionalEncoding: positions up to {} but the learned table "
                        "has {} (model.max_positions)",
                        offset + T, max_positions_));
    std::vector<int32_t> positions(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) positions[size_t(t)] = int32_t(offset + t);
    return x + table_->forward(positions, Shape{T});  // [T,E] broadcasts over B
}

}  // namespace seqgrad
