#include "seqgrad/layers/positional_encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// P[p, 2i] = sin(p ω_i),  P[p, 2i+1] = cos(p ω_i),  ω_i = 10000^(−2i/E)
Tensor sinusoidal_positions(const std::vector<int32_t>& positions, int64_t E) {
    int32_t count =
        0;  // rows 0 .. count - 1 of the table are needed (packed sentences repeat them)
    for (int32_t p : positions) {
        if (p < 0) throw Error(fmt::format("sinusoidal_positions: a negative position {}", p));
        count = std::max(count, p + 1);
    }
    std::vector<real> rows(size_t(count) * size_t(E));
    for (int64_t j = 0; j < E; ++j) {
        const double omega = std::pow(10000.0, -double(j - j % 2) / double(E));
        for (int32_t p = 0; p < count; ++p) {
            const double angle = double(p) * omega;
            rows[size_t(p) * size_t(E) + size_t(j)] =
                real(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    }
    Tensor table = Tensor::empty({int64_t(positions.size()), E});
    for (size_t n = 0; n < positions.size(); ++n)
        std::copy_n(rows.data() + size_t(positions[n]) * size_t(E), E, table.data() + n * E);
    return table;
}

Tensor sinusoidal_positions(int64_t offset, int64_t T, int64_t E) {
    std::vector<int32_t> positions(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) positions[size_t(t)] = int32_t(offset + t);
    return sinusoidal_positions(positions, E);
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
    std::vector<int32_t> positions(static_cast<size_t>(x.rank() == 3 ? x.size(1) : 0));
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = int32_t(offset + int64_t(t));
    return forward(x, positions);
}

Tensor PositionalEncoding::forward(const Tensor& x, const std::vector<int32_t>& positions) const {
    if (x.rank() != 3 || x.size(1) != int64_t(positions.size()))
        throw Error(fmt::format("PositionalEncoding: x {} for {} positions: expected [B,{},E]",
                                x.shape().str(), positions.size(), positions.size()));
    const int64_t T = x.size(1), E = x.size(2);
    if (!table_) return x + sinusoidal_positions(positions, E);  // [T,E] broadcasts over B
    int64_t count = 0;  // positions 0 .. count - 1 are needed
    for (int32_t p : positions) count = std::max(count, int64_t(p) + 1);
    if (count > max_positions_)
        throw Error(
            fmt::format("PositionalEncoding: positions up to {} but the learned table has {} "
                        "(model.max_positions)",
                        count, max_positions_));
    return x + table_->forward(positions, Shape{T});  // [T,E] broadcasts over B
}

}  // namespace seqgrad
