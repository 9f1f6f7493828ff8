// expect: parent_grad returned nullptr for an input that needs no gradient: check it before writing
// A wrong answer to 07_gru_cell_fused for the grader's tests:
// the backward writes dh without checking it for nullptr.
// Exercise 07: the GRU cell's hand-written backward (the fused form).
//
// The gates' products are computed outside (gi = x W_ihᵀ + b_ih, gh = h W_hhᵀ + b_hh, both
// [B,3H] = r | z | n parts); this op does everything after them as ONE graph node:
//   r  = σ(gi_r + gh_r),  z = σ(gi_z + gh_z),  n = tanh(gi_n + r ⊙ gh_n)
//   h' = (1 − z) ⊙ n + z ⊙ h                                     -> [B,H]
// Backward, from dh' (call it g):
//   dh    += g ⊙ z
//   dn     = g ⊙ (1 − z)            dz = g ⊙ (h − n)
//   dan    = dn ⊙ (1 − n²)          (a_n = gi_n + r ⊙ gh_n)
//   dgi_n += dan,   dgh_n += dan ⊙ r,   dr = dan ⊙ gh_n
//   daz    = dz ⊙ z (1 − z):   dgi_z += daz,  dgh_z += daz
//   dar    = dr ⊙ r (1 − r):   dgi_r += dar,  dgh_r += dar
// Save r, z, n in the forward (e.g. in a std::vector captured by the backward lambda).
// The grader checks that the result is one node whose parents are gi, gh and h.
#include <cmath>
#include <memory>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor gru_cell_fused(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& h) {
    const int64_t B = h.size(0), H = h.size(1);
    auto gates = std::make_shared<std::vector<real>>(size_t(3 * B * H));  // r | z | n per row
    Tensor out = make_result(h.shape());
    for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
            const real *gi = input_gates.data() + b * 3 * H, *gh = hidden_gates.data() + b * 3 * H;
            real r = 1 / (1 + std::exp(-(gi[j] + gh[j])));
            real z = 1 / (1 + std::exp(-(gi[H + j] + gh[H + j])));
            real n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
            real* g = gates->data() + b * 3 * H;
            g[j] = r, g[H + j] = z, g[2 * H + j] = n;
            out.data()[b * H + j] = (1 - z) * n + z * h.data()[b * H + j];
        }
    record(out, "exercise_gru_cell", {input_gates, hidden_gates, h}, [gates, B, H](Node& out) {
        real* dgi = parent_grad(out, 0);
        real* dgh = parent_grad(out, 1);
        real* dh = parent_grad(out, 2);
        const real *gh = out.parent(1).data, *hp = out.parent(2).data;
        for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < H; ++j) {
                const real* s = gates->data() + b * 3 * H;
                const real r = s[j], z = s[H + j], n = s[2 * H + j];
                const real g = out.grad.data()[b * H + j];
                dh[b * H + j] += g * z;
                real dan = g * (1 - z) * (1 - n * n);
                real daz = g * (hp[b * H + j] - n) * z * (1 - z);
                real dar = dan * gh[b * 3 * H + 2 * H + j] * r * (1 - r);
                if (dgi) {
                    real* d = dgi + b * 3 * H;
                    d[j] += dar, d[H + j] += daz, d[2 * H + j] += dan;
                }
                if (dgh) {
                    real* d = dgh + b * 3 * H;
                    d[j] += dar, d[H + j] += daz, d[2 * H + j] += dan * r;
                }
            }
    });
    return out;
}

}  // namespace seqgrad::exercises
