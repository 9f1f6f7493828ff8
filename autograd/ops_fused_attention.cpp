// Fused additive attention scores (see autograd/fused_attention.h for shapes and maths).
#include <fmt/format.h>

#include <cmath>

#include "autograd/fused_attention.h"

namespace seqgrad {

// scores[b,s] = Σ_a v[a] tanh(qp[b,a] + kp[b,s,a])
//   dqp[b,a] += Σ_s g v[a] (1 − t²),  dkp[b,s,a] += g v[a] (1 − t²),  dv[a] += Σ g t
Tensor additive_attention_scores(const Tensor& query_projected, const Tensor& keys_projected,
                                 const Tensor& v) {
    const Shape &sq = query_projected.shape(), &sk = keys_projected.shape();
    const bool v_ok = (v.rank() == 1 || (v.rank() == 2 && v.size(0) == 1)) && sk.rank() == 3 &&
                      v.size(-1) == sk[2];
    if (sq.rank() != 2 || sk.rank() != 3 || sq[0] != sk[0] || sq[1] != sk[2] || !v_ok)
        throw Error(fmt::format(
            "additive_attention_scores: query_projected {}, keys_projected {}, v {}: expected "
            "[B,A], [B,S,A] and [1,A]",
            sq.str(), sk.str(), v.shape().str()));
    const int64_t B = sk[0], S = sk[1], A = sk[2];

    const bool need_grad = grad_enabled() && (query_projected.requires_grad() ||
                                              keys_projected.requires_grad() || v.requires_grad());
    Buffer saved_tanh;  // t [B, S, A], kept for the backward
    if (need_grad) saved_tanh = Buffer(size_t(B * S * A));

    Tensor out = make_result({B, S});
    const real *qp = query_projected.data(), *kp = keys_projected.data(), *pv = v.data();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
            const real* q_row = qp + b * A;
            const real* k_row = kp + (b * S + s) * A;
            real score = 0;
            if (need_grad) {
                real* t = saved_tanh.data() + (b * S + s) * A;
                for (int64_t a = 0; a < A; ++a) {
                    t[a] = std::tanh(q_row[a] + k_row[a]);
                    score += pv[a] * t[a];
                }
            } else {
                for (int64_t a = 0; a < A; ++a) score += pv[a] * std::tanh(q_row[a] + k_row[a]);
            }
            out.data()[b * S + s] = score;
        }

    if (record(out, "additive_attention_scores", {query_projected, keys_projected, v},
               [B, S, A](Node& out) {
                   real* dqp = parent_grad(out, 0);
                   real* dkp = parent_grad(out, 1);
                   real* dv = parent_grad(out, 2);
                   const real *pv = out.parent(2).data, *dscores = out.grad.data();
                   for (int64_t b = 0; b < B; ++b)
                       for (int64_t s = 0; s < S; ++s) {
                           const real g = dscores[b * S + s];
                           if (g == 0) continue;  // e.g. a masked position: nothing to add
                           const real* t = out.saved.data() + (b * S + s) * A;
                           if (dv)
                               for (int64_t a = 0; a < A; ++a) dv[a] += g * t[a];
                           if (!dqp && !dkp) continue;
                           real* dq_row = dqp ? dqp + b * A : nullptr;
                           real* dk_row = dkp ? dkp + (b * S + s) * A : nullptr;
                           for (int64_t a = 0; a < A; ++a) {
                               const real dpre = g * pv[a] * (1 - t[a] * t[a]);
                               if (dq_row) dq_row[a] += dpre;
                               if (dk_row) dk_row[a] += dpre;
                           }
                       }
               }))
        out.node().saved = std::move(saved_tanh);
    return out;
}

}  // namespace seqgrad
