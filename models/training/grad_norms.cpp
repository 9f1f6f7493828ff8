#include "seqgrad/models/training/grad_norms.h"

#include <cmath>

namespace seqgrad {

// ‖g_group‖ = √(Σ over the group's parameters Σ_i (g_i · s)²), summed in double
GroupGradNorms group_grad_norms(const Module& model, double grad_scale) {
    const real s = real(grad_scale);
    double sq[4] = {0, 0, 0, 0};  // encoder, attention, decoder, output
    for (const auto& named : model.named_parameters()) {
        // (a named reference, not a structured binding: C++17 lambdas cannot capture those,
        // and clang, which builds the WebAssembly library, holds to it)
        const std::string& name = named.first;
        const Tensor& p = named.second;
        const real* g = p.grad_data();
        if (!g) continue;
        double sum = 0;
        for (int64_t i = 0; i < p.numel(); ++i) {
            const real x = g[i] * s;
            sum += double(x) * double(x);
        }
        auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
        const bool encoder = starts("encoder.") || starts("transformer.encoder.") ||
                             starts("source_embedding.") || starts("source_positions.");
        const bool attention =
            starts("decoder.attention.") || starts("attention.") ||
            (starts("transformer.decoder.layers.") && name.find(".multihead_attn.") != name.npos);
        const bool output = starts("decoder.out.") || starts("out.") || name == "out_bias";
        const int group = encoder ? 0 : attention ? 1 : output ? 3 : 2;
        sq[group] += sum;
    }
    GroupGradNorms n;
    n.encoder = std::sqrt(sq[0]);
    n.attention = std::sqrt(sq[1]);
    n.decoder = std::sqrt(sq[2]);
    n.output = std::sqrt(sq[3]);
    n.total = std::sqrt(sq[0] + sq[1] + sq[2] + sq[3]);
    return n;
}

}  // namespace seqgrad
