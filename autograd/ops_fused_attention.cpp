// Fused attention ops (see autograd/fused_attention.h for shapes and maths). Their row loops are
// kernels (autograd/kernels/kernels.h): plain loops with std::tanh in the reference build, 8 float lanes
// at a time in the fast one.
#include <fmt/format.h>

#include "seqgrad/autograd/fused_attention.h"
#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {

using kernels::add_scaled;
using kernels::dot;
using kernels::tanh_backward_row;
using kernels::tanh_row_dot;

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

    // t = tanh(qp + kp) is NOT kept for the backward, which computes it again row by row:
    // keeping it would hold [B, S, A] per decoder step until the backward, and computing it
    // again costs one tanh per element, little next to the step's products.
    Tensor out = make_result({B, S});
    const real *qp = query_projected.data(), *kp = keys_projected.data(), *pv = v.data();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
            out.data()[b * S + s] =
                tanh_row_dot(qp + b * A, kp + (b * S + s) * A, pv, static_cast<real*>(nullptr), A);

    record(out, "additive_attention_scores", {query_projected, keys_projected, v},
           [B, S, A](Node& out) {
               real* dqp = parent_grad(out, 0);
               real* dkp = parent_grad(out, 1);
               real* dv = parent_grad(out, 2);
               const real *qp = out.parent(0).data, *kp = out.parent(1).data;
               const real *pv = out.parent(2).data, *dscores = out.grad.data();
               Buffer t_row(static_cast<size_t>(A));
               real* t = t_row.data();
               for (int64_t b = 0; b < B; ++b)
                   for (int64_t s = 0; s < S; ++s) {
                       const real g = dscores[b * S + s];
                       if (g == 0) continue;  // e.g. a masked position: nothing to add
                       tanh_row_dot(qp + b * A, kp + (b * S + s) * A, pv, t, A);
                       if (dv) add_scaled(dv, g, t, A);
                       if (dqp || dkp)
                           tanh_backward_row(g, pv, t, dqp ? dqp + b * A : nullptr,
                                             dkp ? dkp + (b * S + s) * A : nullptr, A);
                   }
           });
    return out;
}

// context[b,:] = Σ_s weights[b,s] values[b,s,:]
//   dweights[b,s] += values[b,s,:] · dcontext[b,:],  dvalues[b,s,:] += weights[b,s] dcontext[b,:]
Tensor attention_context(const Tensor& weights, const Tensor& values) {
    const Shape &sw = weights.shape(), &sv = values.shape();
    if (sw.rank() != 2 || sv.rank() != 3 || sw[0] != sv[0] || sw[1] != sv[1])
        throw Error(
            fmt::format("attention_context: weights {} and values {}: expected [B,S] and "
                        "[B,S,D]",
                        sw.str(), sv.str()));
    const int64_t B = sv[0], S = sv[1], D = sv[2];
    Tensor out = Tensor::zeros({B, D});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
            const real w = weights.data()[b * S + s];
            if (w != 0)  // a masked position adds nothing, even if its value is not finite
                add_scaled(out.data() + b * D, w, values.data() + (b * S + s) * D, D);
        }
    record(out, "attention_context", {weights, values}, [B, S, D](Node& out) {
        real* dweights = parent_grad(out, 0);
        real* dvalues = parent_grad(out, 1);
        const real *w = out.parent(0).data, *v = out.parent(1).data, *dout = out.grad.data();
        for (int64_t b = 0; b < B; ++b)
            for (int64_t s = 0; s < S; ++s) {
                if (dweights) dweights[b * S + s] += dot(v + (b * S + s) * D, dout + b * D, D);
                if (dvalues && w[b * S + s] != 0)
                    add_scaled(dvalues + (b * S + s) * D, w[b * S + s], dout + b * D, D);
            }
    });
    return out;
}

// scores[b,s] = keys[b,s,:] · query[b,:]
//   dkeys[b,s,:] += dscores[b,s] query[b,:],  dquery[b,:] += Σ_s dscores[b,s] keys[b,s,:]
Tensor attention_dot_scores(const Tensor& keys, const Tensor& query) {
    const Shape &sk = keys.shape(), &sq = query.shape();
    if (sk.rank() != 3 || sq.rank() != 2 || sk[0] != sq[0] || sk[2] != sq[1])
        throw Error(
            fmt::format("attention_dot_scores: keys {} and query {}: expected [B,S,D] and "
                        "[B,D]",
                        sk.str(), sq.str()));
    const int64_t B = sk[0], S = sk[1], D = sk[2];
    Tensor out = make_result({B, S});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
            out.data()[b * S + s] = dot(keys.data() + (b * S + s) * D, query.data() + b * D, D);
    record(out, "attention_dot_scores", {keys, query}, [B, S, D](Node& out) {
        real* dkeys = parent_grad(out, 0);
        real* dquery = parent_grad(out, 1);
        const real *k = out.parent(0).data, *q = out.parent(1).data, *dscores = out.grad.data();
        for (int64_t b = 0; b < B; ++b)
            for (int64_t s = 0; s < S; ++s) {
                const real g = dscores[b * S + s];
                if (g == 0) continue;  // e.g. a masked position: nothing to add
                if (dkeys) add_scaled(dkeys + (b * S + s) * D, g, q + b * D, D);
                if (dquery) add_scaled(dquery + b * D, g, k + (b * S + s) * D, D);
            }
    });
    return out;
}

}  // namespace seqgrad
