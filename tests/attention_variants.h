// Every attention variant (Bahdanau; Luong dot, general, concat; fused and composed), shared by
// the attention test suites.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "seqgrad/layers/attention.h"

namespace seqgrad::testing {

// Every attention variant, built with its own dims (dot needs query_dim == key_dim).
struct Variant {
    std::string name;
    int64_t query_dim, key_dim;
    std::function<std::unique_ptr<Attention>(Rng&)> make;
};

inline std::vector<Variant> variants() {
    auto bahdanau = [](bool fused) {
        return [fused](Rng& rng) {
            auto a = std::make_unique<BahdanauAttention>(4, 6, 7, rng);
            a->use_fused = fused;
            return std::unique_ptr<Attention>(std::move(a));
        };
    };
    auto luong = [](LuongScore kind, int64_t dq, int64_t dk, bool scaled, bool fused = true) {
        return [=](Rng& rng) {
            auto a = std::make_unique<LuongAttention>(kind, dq, dk, rng, scaled, 7);
            a->use_fused = fused;
            return std::unique_ptr<Attention>(std::move(a));
        };
    };
    return {
        {"bahdanau (fused)", 4, 6, bahdanau(true)},
        {"bahdanau (composed)", 4, 6, bahdanau(false)},
        {"luong dot", 5, 5, luong(LuongScore::dot, 5, 5, false)},
        {"luong dot (composed)", 5, 5, luong(LuongScore::dot, 5, 5, false, false)},
        {"luong dot scaled", 5, 5, luong(LuongScore::dot, 5, 5, true)},
        {"luong general", 4, 6, luong(LuongScore::general, 4, 6, false)},
        {"luong general (composed)", 4, 6, luong(LuongScore::general, 4, 6, false, false)},
        {"luong general scaled", 4, 6, luong(LuongScore::general, 4, 6, true)},
        {"luong concat (fused)", 4, 6, luong(LuongScore::concat, 4, 6, false, true)},
        {"luong concat (composed)", 4, 6, luong(LuongScore::concat, 4, 6, false, false)},
    };
}

// Parameters drawn larger than the default init, so that tanh and softmax are far from linear
// and a wrong gradient cannot hide.
inline void scale_parameters(Attention& attention, real factor) {
    for (auto& [_, p] : attention.named_parameters())
        for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] *= factor;
}

}  // namespace seqgrad::testing
