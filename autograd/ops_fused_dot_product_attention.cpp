// Scaled dot-product attention over heads (see autograd/fused_dot_product_attention.h for shapes
// and maths). Every product is one gemm call per (batch row, head) with transpose flags.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/autograd/kernels/gemm.h"

namespace seqgrad {
namespace {

struct AttentionDims {
    int64_t B, H, T, S, d, dv;
};

AttentionDims check_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                              const Tensor& key_padding_mask, bool causal) {
    const Shape &sq = q.shape(), &sk = k.shape(), &sv = v.shape();
    const bool ok = sq.rank() == 4 && sk.rank() == 4 && sv.rank() == 4 && sq[0] == sk[0] &&
                    sq[0] == sv[0] && sq[1] == sk[1] && sq[1] == sv[1] && sq[3] == sk[3] &&
                    sk[2] == sv[2] && sk[2] >= 1 && sq[3] >= 1;
    if (!ok)
        throw Error(
            fmt::format("scaled_dot_product_attention: q {}, k {}, v {}: expected "
                        "[B,h,T,d], [B,h,S,d] and [B,h,S,dv] with S, d >= 1",
                        sq.str(), sk.str(), sv.str()));
    AttentionDims a{sq[0], sq[1], sq[2], sk[2], sq[3], sv[3]};
    if (key_padding_mask.defined() &&
        (key_padding_mask.rank() != 2 || key_padding_mask.size(0) != a.B ||
         key_padding_mask.size(1) != a.S))
        throw Error(
            fmt::format("scaled_dot_product_attention: key_padding_mask {} for k {}: "
                        "expected [{},{}]",
                        key_padding_mask.shape().str(), sk.str(), a.B, a.S));
    if (causal && a.T > a.S)
        throw Error(
            fmt::format("scaled_dot_product_attention: causal with q {} and k {}: "
                        "needs T <= S (the queries are the last T positions)",
                        sq.str(), sk.str()));
    return a;
}

// a = softmax over the row's unmasked entries (in place); masked entries and every entry of a
// fully masked row become exactly 0. `visible` is how many leading keys the causal mask leaves.
void masked_softmax_row(real* row, const real* pad, int64_t S, int64_t visible) {
    real m = -std::numeric_limits<real>::infinity();
    for (int64_t j = 0; j < visible; ++j)
        if (!(pad && pad[j] != 0) && row[j] > m) m = row[j];
    if (m == -std::numeric_limits<real>::infinity()) {  // nothing to attend to: all zero
        std::memset(row, 0, sizeof(real) * size_t(S));
        return;
    }
    double total = 0;
    for (int64_t j = 0; j < S; ++j) {
        const bool masked = j >= visible || (pad && pad[j] != 0);
        row[j] = masked ? 0 : std::exp(row[j] - m);
        total += row[j];
    }
    const real inv = real(1 / total);
    for (int64_t j = 0; j < S; ++j) row[j] *= inv;
}

}  // namespace

// s = q kᵀ/√d (masked to −∞), a = softmax(s), o = a v;
//   dv += aᵀ do,  ds = a ⊙ (do vᵀ − rowsum(a ⊙ do vᵀ)),  dq += ds k/√d,  dk += dsᵀ q/√d
DotProductAttention scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const Tensor& key_padding_mask, bool causal,
                                                 bool need_weights) {
    const AttentionDims a = check_attention(q, k, v, key_padding_mask, causal);
    const real scale = real(1 / std::sqrt(double(a.d)));
    const int64_t TS = a.T * a.S, Td = a.T * a.d, Sd = a.S * a.d, Sdv = a.S * a.dv,
                  Tdv = a.T * a.dv;
    Buffer weights(size_t(a.B * a.H * TS));
    Tensor out = make_result({a.B, a.H, a.T, a.dv});
    for (int64_t b = 0; b < a.B; ++b) {
        const real* pad = key_padding_mask.defined() ? key_padding_mask.data() + b * a.S : nullptr;
        for (int64_t h = 0; h < a.H; ++h) {
            const int64_t bh = b * a.H + h;
            real* w = weights.data() + bh * TS;
            gemm(false, true, a.T, a.S, a.d, scale, q.data() + bh * Td, k.data() + bh * Sd, 0, w);
            for (int64_t i = 0; i < a.T; ++i)
                masked_softmax_row(w + i * a.S, pad, a.S, causal ? i + 1 + (a.S - a.T) : a.S);
            gemm(false, false, a.T, a.dv, a.S, 1, w, v.data() + bh * Sdv, 0, out.data() + bh * Tdv);
        }
    }
    DotProductAttention result;
    if (need_weights) {
        result.weights = Tensor::empty({a.B, a.H, a.T, a.S});
        std::memcpy(result.weights.data(), weights.data(), sizeof(real) * weights.size());
    }
    if (record(
            out, "scaled_dot_product_attention", {q, k, v},
            [a, scale, TS, Td, Sd, Sdv, Tdv](Node& out) {
                real* dq = parent_grad(out, 0);
                real* dk = parent_grad(out, 1);
                real* dv = parent_grad(out, 2);
                const real *q = out.parent(0).data, *k = out.parent(1).data;
                const real *v = out.parent(2).data, *dout = out.grad.data();
                Buffer ds_buffer{static_cast<size_t>(TS)};
                real* ds = ds_buffer.data();
                for (int64_t bh = 0; bh < a.B * a.H; ++bh) {
                    const real* w = out.saved.data() + bh * TS;
                    const real* dob = dout + bh * Tdv;
                    if (dv)  // dv [S,dv] += aᵀ do
                        gemm(true, false, a.S, a.dv, a.T, 1, w, dob, 1, dv + bh * Sdv);
                    if (!dq && !dk) continue;
                    // da [T,S] = do vᵀ, then ds = a ⊙ (da − Σ_k a_k da_k) row by row
                    gemm(false, true, a.T, a.S, a.dv, 1, dob, v + bh * Sdv, 0, ds);
                    for (int64_t i = 0; i < a.T; ++i) {
                        const real* wi = w + i * a.S;
                        real* dsi = ds + i * a.S;
                        double dot = 0;
                        for (int64_t j = 0; j < a.S; ++j) dot += double(wi[j]) * dsi[j];
                        for (int64_t j = 0; j < a.S; ++j) dsi[j] = wi[j] * (dsi[j] - real(dot));
                    }
                    if (dq)  // dq [T,d] += ds k / √d
                        gemm(false, false, a.T, a.d, a.S, scale, ds, k + bh * Sd, 1, dq + bh * Td);
                    if (dk)  // dk [S,d] += dsᵀ q / √d
                        gemm(true, false, a.S, a.d, a.T, scale, ds, q + bh * Td, 1, dk + bh * Sd);
                }
            }))
        out.node().saved = std::move(weights);
    result.output = out;
    return result;
}

}  // namespace seqgrad
