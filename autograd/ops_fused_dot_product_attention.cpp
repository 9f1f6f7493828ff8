// Scaled dot-product attention over heads (see autograd/fused_dot_product_attention.h for shapes
// and maths). Every product is one gemm call per block (batch row or sentence, head) with transpose
// flags.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/autograd/kernels/gemm.h"

namespace seqgrad {

Packing Packing::of_lengths(const std::vector<int32_t>& lengths) {
    Packing p;
    p.starts.assign(1, 0);
    for (int32_t n : lengths) {
        if (n < 0) throw Error(fmt::format("Packing::of_lengths: a negative length {}", n));
        p.starts.push_back(p.starts.back() + n);
    }
    return p;
}

std::vector<int32_t> Packing::positions() const {
    std::vector<int32_t> positions;
    positions.reserve(size_t(total()));
    for (int64_t i = 0; i < sentences(); ++i)
        for (int64_t t = 0; t < length(i); ++t) positions.push_back(int32_t(t));
    return positions;
}

KeyMask KeyMask::packed(const Packing& queries, const Packing& keys) {
    if (queries.sentences() != keys.sentences())
        throw Error(fmt::format("KeyMask::packed: {} sentences of queries for {} of keys",
                                queries.sentences(), keys.sentences()));
    KeyMask mask;
    mask.queries = &queries;
    mask.keys = &keys;
    return mask;
}

Tensor packed_mask(const Packing& queries, const Packing& keys, bool causal) {
    const int64_t T = queries.total(), S = keys.total();
    Tensor mask = Tensor::full({T, S}, 1);
    for (int64_t i = 0; i < queries.sentences(); ++i) {
        const int64_t Ti = queries.length(i), Si = keys.length(i);
        for (int64_t r = 0; r < Ti; ++r) {
            const int64_t visible = causal ? std::min(Si, r + 1 + (Si - Ti)) : Si;
            real* row = mask.data() + (queries.starts[size_t(i)] + r) * S + keys.starts[size_t(i)];
            for (int64_t j = 0; j < visible; ++j) row[j] = 0;
        }
    }
    return mask;
}

namespace {

// One [T, S] score block: a batch row's (or a packed sentence's) queries against its keys, for
// one head. Offsets are in elements of q, k, v, the output and the kept weights.
struct Block {
    int64_t q, k, v, out, weights;
    int64_t T, S;
    const real* padding;  // [S], nonzero at padded keys, or nullptr
};

struct AttentionDims {
    int64_t B, H, T, S, d, dv;
};

AttentionDims check_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                              const KeyMask& mask, bool causal) {
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
    const Tensor& pad = mask.padding;
    if (pad.defined() && (pad.rank() != 2 || pad.size(0) != a.B || pad.size(1) != a.S))
        throw Error(
            fmt::format("scaled_dot_product_attention: key_padding_mask {} for k {}: "
                        "expected [{},{}]",
                        pad.shape().str(), sk.str(), a.B, a.S));
    if (mask.is_packed()) {
        if (a.B != 1 || pad.defined() || mask.queries->total() != a.T ||
            mask.keys->total() != a.S || mask.queries->sentences() != mask.keys->sentences())
            throw Error(fmt::format(
                "scaled_dot_product_attention: packed q {} and k {} for {} sentences of {} "
                "queries and {} of {} keys: expected B = 1, T = {} and S = {}, and no padding mask",
                sq.str(), sk.str(), mask.queries->sentences(), mask.queries->total(),
                mask.keys->sentences(), mask.keys->total(), mask.queries->total(),
                mask.keys->total()));
        for (int64_t i = 0; causal && i < mask.queries->sentences(); ++i)
            if (mask.queries->length(i) > mask.keys->length(i))
                throw Error(fmt::format(
                    "scaled_dot_product_attention: causal with sentence {} of {} queries and {} "
                    "keys: needs T_i <= S_i",
                    i, mask.queries->length(i), mask.keys->length(i)));
    } else if (causal && a.T > a.S) {
        throw Error(
            fmt::format("scaled_dot_product_attention: causal with q {} and k {}: "
                        "needs T <= S (the queries are the last T positions)",
                        sq.str(), sk.str()));
    }
    return a;
}

// Padded: one block per (batch row, head), all of [T, S]. Packed: one per (head, sentence).
std::vector<Block> blocks_of(const AttentionDims& a, const KeyMask& mask) {
    std::vector<Block> blocks;
    int64_t kept = 0;
    auto add = [&](int64_t q_row, int64_t k_row, int64_t T, int64_t S, const real* padding) {
        blocks.push_back(
            {q_row * a.d, k_row * a.d, k_row * a.dv, q_row * a.dv, kept, T, S, padding});
        kept += T * S;
    };
    if (mask.is_packed()) {
        const Packing &qs = *mask.queries, &ks = *mask.keys;
        for (int64_t h = 0; h < a.H; ++h)
            for (int64_t i = 0; i < qs.sentences(); ++i)
                add(h * a.T + qs.starts[size_t(i)], h * a.S + ks.starts[size_t(i)], qs.length(i),
                    ks.length(i), nullptr);
    } else {
        for (int64_t b = 0; b < a.B; ++b)
            for (int64_t h = 0; h < a.H; ++h)
                add((b * a.H + h) * a.T, (b * a.H + h) * a.S, a.T, a.S,
                    mask.padding.defined() ? mask.padding.data() + b * a.S : nullptr);
    }
    return blocks;
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

// The kept weights as the op's `weights`: [B,h,T,S] as they are, or the packed blocks (in the
// order of blocks_of) spread over a zero [1,h,T,S].
Tensor weights_tensor(const AttentionDims& a, const KeyMask& mask, const Buffer& kept) {
    Tensor weights = Tensor::zeros({a.B, a.H, a.T, a.S});
    if (!mask.is_packed()) {
        std::memcpy(weights.data(), kept.data(), sizeof(real) * kept.size());
        return weights;
    }
    const Packing &qs = *mask.queries, &ks = *mask.keys;
    const real* block = kept.data();
    for (int64_t h = 0; h < a.H; ++h)
        for (int64_t i = 0; i < qs.sentences(); ++i)
            for (int64_t r = 0; r < qs.length(i); ++r, block += ks.length(i))
                std::memcpy(weights.data() + (h * a.T + qs.starts[size_t(i)] + r) * a.S +
                                ks.starts[size_t(i)],
                            block, sizeof(real) * size_t(ks.length(i)));
    return weights;
}

}  // namespace

// s = q kᵀ/√d (masked to −∞), a = softmax(s), o = a v;
//   dv += aᵀ do,  ds = a ⊙ (do vᵀ − rowsum(a ⊙ do vᵀ)),  dq += ds k/√d,  dk += dsᵀ q/√d
DotProductAttention scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const KeyMask& mask, bool causal,
                                                 bool need_weights) {
    const AttentionDims a = check_attention(q, k, v, mask, causal);
    const real scale = real(1 / std::sqrt(double(a.d)));
    std::vector<Block> blocks = blocks_of(a, mask);
    Buffer weights(
        size_t(blocks.empty() ? 0 : blocks.back().weights + blocks.back().T * blocks.back().S));
    Tensor out = make_result({a.B, a.H, a.T, a.dv});
    if (mask.is_packed()) std::memset(out.data(), 0, sizeof(real) * size_t(out.numel()));
    for (const Block& blk : blocks) {
        if (blk.T == 0 || blk.S == 0) continue;  // no queries, or nothing to attend to: o = 0
        real* w = weights.data() + blk.weights;
        gemm(false, true, blk.T, blk.S, a.d, scale, q.data() + blk.q, k.data() + blk.k, 0, w);
        for (int64_t i = 0; i < blk.T; ++i)
            masked_softmax_row(w + i * blk.S, blk.padding, blk.S,
                               causal ? i + 1 + (blk.S - blk.T) : blk.S);
        gemm(false, false, blk.T, a.dv, blk.S, 1, w, v.data() + blk.v, 0, out.data() + blk.out);
    }
    DotProductAttention result;
    if (need_weights) result.weights = weights_tensor(a, mask, weights);
    if (record(
            out, "scaled_dot_product_attention", {q, k, v},
            [a, scale, blocks = std::move(blocks)](Node& out) {
                real* dq = parent_grad(out, 0);
                real* dk = parent_grad(out, 1);
                real* dv = parent_grad(out, 2);
                const real *q = out.parent(0).data, *k = out.parent(1).data;
                const real *v = out.parent(2).data, *dout = out.grad.data();
                int64_t largest = 0;
                for (const Block& blk : blocks) largest = std::max(largest, blk.T * blk.S);
                Buffer ds_buffer{static_cast<size_t>(largest)};
                real* ds = ds_buffer.data();
                for (const Block& blk : blocks) {
                    if (blk.T == 0 || blk.S == 0) continue;
                    const real* w = out.saved.data() + blk.weights;
                    const real* dob = dout + blk.out;
                    if (dv)  // dv [S,dv] += aᵀ do
                        gemm(true, false, blk.S, a.dv, blk.T, 1, w, dob, 1, dv + blk.v);
                    if (!dq && !dk) continue;
                    // da [T,S] = do vᵀ, then ds = a ⊙ (da − Σ_k a_k da_k) row by row
                    gemm(false, true, blk.T, blk.S, a.dv, 1, dob, v + blk.v, 0, ds);
                    for (int64_t i = 0; i < blk.T; ++i) {
                        const real* wi = w + i * blk.S;
                        real* dsi = ds + i * blk.S;
                        double dot = 0;
                        for (int64_t j = 0; j < blk.S; ++j) dot += double(wi[j]) * dsi[j];
                        for (int64_t j = 0; j < blk.S; ++j) dsi[j] = wi[j] * (dsi[j] - real(dot));
                    }
                    if (dq)  // dq [T,d] += ds k / √d
                        gemm(false, false, blk.T, a.d, blk.S, scale, ds, k + blk.k, 1, dq + blk.q);
                    if (dk)  // dk [S,d] += dsᵀ q / √d
                        gemm(true, false, blk.S, a.d, blk.T, scale, ds, q + blk.q, 1, dk + blk.k);
                }
            }))
        out.node().saved = std::move(weights);
    result.output = out;
    return result;
}

}  // namespace seqgrad
