// Matrix products. C = op(A) op(B) with op = identity or transpose; backward:
//   dop(A) = dC op(B)ᵀ,  dop(B) = op(A)ᵀ dC,
// and each is again one gemm with transpose flags (see the cases below).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "autograd/gemm.h"
#include "autograd/ops.h"

namespace seqgrad {
namespace {

struct MatmulDims {
    int64_t batch;  // number of independent products (1 for 2-D)
    int64_t M, N, K;
    bool shared_b;  // [B,n,m] x [m,p]: the same B for every batch entry
};

MatmulDims check_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
    auto fail = [&](const std::string& why) {
        return Error(fmt::format("matmul: {}{} x {}{}: {}", a.shape().str(), ta ? "ᵀ" : "",
                                 b.shape().str(), tb ? "ᵀ" : "", why));
    };
    MatmulDims d{};
    const Shape &sa = a.shape(), &sb = b.shape();
    if (sa.rank() == 2 && sb.rank() == 2) {
        d.batch = 1;
    } else if (sa.rank() == 3 && sb.rank() == 3) {
        if (sa[0] != sb[0]) throw fail(fmt::format("batch sizes {} != {}", sa[0], sb[0]));
        d.batch = sa[0];
    } else if (sa.rank() == 3 && sb.rank() == 2) {
        if (ta) throw fail("a 3-D left operand cannot be transposed against a 2-D one");
        d.batch = 1;
        d.shared_b = true;
    } else {
        throw fail("expected 2-D x 2-D, 3-D x 3-D or 3-D x 2-D");
    }
    int64_t a_rows = sa[-2], a_cols = sa[-1];
    if (d.shared_b) a_rows *= sa[0];
    d.M = ta ? a_cols : a_rows;
    d.K = ta ? a_rows : a_cols;
    int64_t kb = tb ? sb[-1] : sb[-2];
    d.N = tb ? sb[-2] : sb[-1];
    if (d.K != kb) throw fail(fmt::format("inner dims {} != {}", d.K, kb));
    return d;
}

}  // namespace

// C = op(A) op(B)
Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
    MatmulDims d = check_matmul(a, b, ta, tb);
    Shape out_shape = a.rank() == 2 ? Shape{d.M, d.N}
                      : d.shared_b  ? Shape{a.size(0), a.size(1), d.N}
                                    : Shape{d.batch, d.M, d.N};
    Tensor out = make_result(out_shape);
    const int64_t sa = d.M * d.K, sb = d.K * d.N, sc = d.M * d.N;  // per-batch strides
    for (int64_t i = 0; i < d.batch; ++i)
        gemm(ta, tb, d.M, d.N, d.K, 1, a.data() + i * sa, b.data() + i * sb, 0,
             out.data() + i * sc);
    record(out, "matmul", {a, b}, [d, ta, tb](Node& out) {
        const real *A = out.parent(0).data, *B = out.parent(1).data, *dC = out.grad.data();
        const int64_t sa = d.M * d.K, sb = d.K * d.N, sc = d.M * d.N;
        real* dA = parent_grad(out, 0);
        real* dB = parent_grad(out, 1);
        for (int64_t i = 0; i < d.batch; ++i) {
            const real *Ai = A + i * sa, *Bi = B + i * sb, *dCi = dC + i * sc;
            if (dA) {
                if (!ta)  // dA [M,K] = dC op(B)ᵀ
                    gemm(false, !tb, d.M, d.K, d.N, 1, dCi, Bi, 1, dA + i * sa);
                else  // dA [K,M] = op(B) dCᵀ
                    gemm(tb, true, d.K, d.M, d.N, 1, Bi, dCi, 1, dA + i * sa);
            }
            if (dB) {
                if (!tb)  // dB [K,N] = op(A)ᵀ dC
                    gemm(!ta, false, d.K, d.N, d.M, 1, Ai, dCi, 1, dB + i * sb);
                else  // dB [N,K] = dCᵀ op(A)
                    gemm(true, ta, d.N, d.K, d.M, 1, dCi, Ai, 1, dB + i * sb);
            }
        }
    });
    return out;
}

// y = x Wᵀ + b, with x [..., in] seen as [rows, in], W [out, in], b [out].
//   dx += dy W,  dW += dyᵀ x,  db += Σ_rows dy
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    if (weight.rank() != 2 || x.rank() < 1 || x.size(-1) != weight.size(1))
        throw Error(fmt::format("linear: x {} x weight {}ᵀ: expected weight [out, {}]",
                                x.shape().str(), weight.shape().str(), x.rank() ? x.size(-1) : 0));
    const int64_t in = weight.size(1), out_features = weight.size(0), rows = x.numel() / in;
    if (bias.defined() && (bias.rank() != 1 || bias.size(0) != out_features))
        throw Error(fmt::format("linear: bias {} for weight {}: expected [{}]", bias.shape().str(),
                                weight.shape().str(), out_features));
    Tensor out = make_result(x.shape().with_dim(-1, out_features));
    real* y = out.data();
    if (bias.defined())
        for (int64_t r = 0; r < rows; ++r)
            std::copy(bias.data(), bias.data() + out_features, y + r * out_features);
    if (const real* panels = packed_weight_for(weight.node(), rows, false))
        gemm_nt_packed(rows, out_features, in, x.data(), panels, bias.defined() ? 1 : 0, y);
    else
        gemm(false, true, rows, out_features, in, 1, x.data(), weight.data(),
             bias.defined() ? 1 : 0, y);
    std::vector<Tensor> inputs{x, weight};
    if (bias.defined()) inputs.push_back(bias);
    record(out, "linear", inputs, [rows, in, out_features](Node& out) {
        const real *dy = out.grad.data(), *W = out.parent(1).data;
        if (real* dx = parent_grad(out, 0)) {  // dx += dy W
            if (const real* panels = packed_weight_for(out.parent(1), rows, true))
                gemm_nt_packed(rows, in, out_features, dy, panels, 1, dx);
            else
                gemm(false, false, rows, in, out_features, 1, dy, W, 1, dx);
        }
        accumulate_weight_grad(out, 1, 0, dy, rows);  // dW += dyᵀ x
        if (out.parents.size() > 2)
            if (real* db = parent_grad(out, 2))
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t j = 0; j < out_features; ++j) db[j] += dy[r * out_features + j];
    });
    return out;
}

// ---- a weight shared by the steps of a recurrence ---------------------------------------------
//
// Why: at n_t = 16 rows (config (a) of bench/train_throughput on two threads), OpenBLAS adds
// dY_tᵀ X_t into a [768, 512] dW at ~20 GFLOP/s, against ~35 GFLOP/s for one product of ~140
// rows; a step's product is too thin to pay for reading and writing dW.

// A shared_over_steps view's state. The rows handed over so far: dY [rows, N], copied (a step's
// gradient is freed right after its backward), and X as references to the steps' inputs (X_t is the
// first rows of a node that the backward pass keeps alive; the reference keeps it alive too),
// gathered only for the product. Once about kFlushRows rows are held they are added into dW and the
// buffer starts again: that bounds the memory held (config (c): ~1 MB per weight, not all of a
// sequence's rows) while each product stays wide (OpenBLAS, [768, 512] += [K, 768]ᵀ [K, 512] on one
// core of the 2-core machine: 20 GFLOP/s at K = 16, 30 at 64, 33 at 128, 36 at 192).
struct SharedWeightState {
    static constexpr int64_t kFlushRows = 128;
    struct Input {
        NodePtr node;
        int64_t rows;
    };
    int64_t N = 0, K = 0, rows = 0, capacity = 0;
    Buffer dy;
    std::vector<Input> inputs;
    // The weight packed for gemm_nt_packed (autograd/gemm.h), made at the first thin product:
    // for x Wᵀ (forward; released when the backward packs) and for dY W (backward).
    Buffer panels, panels_of_transpose;
    int pack = -1;  // -1: no product yet; 0 or 1: whether they are made (packed_weight_for)

    // dW += dyᵀ [X_1; X_2; ...] over the rows held, then none are held
    void flush(real* dW) {
        if (rows > 0) {
            Buffer x(size_t(rows * K));
            int64_t row = 0;
            for (const Input& in : inputs) {
                std::memcpy(x.data() + row * K, in.node->data, sizeof(real) * size_t(in.rows * K));
                row += in.rows;
            }
            gemm(true, false, N, K, rows, 1, dy.data(), x.data(), 1, dW);
        }
        rows = 0;
        inputs.clear();
    }
    void append(const real* dY, const NodePtr& x, int64_t n, Node& view) {
        if (rows > 0 && rows + n > capacity) flush(view.parent(0).grad_data());
        if (n > capacity) {
            // kFlushRows rows, rounded up to fill the buffer pool's power-of-two size class
            size_t size = 1;
            while (size < size_t(std::max(n, kFlushRows) * N)) size *= 2;
            capacity = int64_t(size) / N;
            dy = Buffer(size_t(capacity * N));
        }
        std::memcpy(dy.data() + rows * N, dY, sizeof(real) * size_t(n * N));
        inputs.push_back({x, n});
        rows += n;
    }
};

Tensor shared_over_steps(const Tensor& weight) {
    if (weight.rank() != 2)
        throw Error(
            fmt::format("shared_over_steps: weight {} must be [N, K]", weight.shape().str()));
    if (!grad_enabled() || !weight.requires_grad()) return weight;
    auto node = std::make_shared<Node>();
    node->shape = weight.shape();
    node->view_of = weight.node_ptr();
    node->data = weight.node().data;
    Tensor view(std::move(node));
    // backward: dW += .grad (from ops that do not know the view) + the rows handed over
    record(view, "shared_over_steps", {weight}, [](Node& out) {
        real* dW = parent_grad(out, 0);
        if (out.grad.size() > 0)
            for (int64_t i = 0, n = out.numel(); i < n; ++i) dW[i] += out.grad.data()[i];
        if (out.shared_weight) out.shared_weight->flush(dW);
    });
    view.node().shared_weight = std::make_shared<SharedWeightState>();
    view.node().shared_weight->N = weight.size(0);
    view.node().shared_weight->K = weight.size(1);
    return view;
}

// Whether to pack is decided at the view's first product: a recurrence whose steps start with at
// most kPackedMaxRows rows (16 per thread on config (a) with 2 threads) packs, one that starts
// wider does not (OpenBLAS's own packing is paid over more rows there), even once its finished
// rows drop out. And only weights of up to 2 MB are packed. The forward copy (for x Wᵀ) lives
// until the first product of the backward (dY W) packs the other: one at a time, so the second
// takes the first's buffer back from the pool ((a) with 2 threads: 133.3 -> 129.0 MB).
// Measured on (a) with 2 threads (train_throughput, alternated): 94.5 -> 90.7 ms/step.
// A limit of 32 rows also sped up (a) with 1 thread (166 -> 161.5 ms) and (b) with 2 (~4%), but
// packed config (c)'s attention query weight with 2 threads for no measurable gain and put its
// peak RSS at 49.85% of PyTorch's (bench/compare.sh, session 5): the 50% target comes first.
// SEQGRAD_NO_PACKED=1 in the environment turns packing off (to measure what it gains).
constexpr int64_t kPackedMaxRows = 16;
constexpr int64_t kPackedMaxBytes = int64_t(2) << 20;

const real* packed_weight_for(Node& weight, int64_t rows, bool transpose) {
    static const bool off = std::getenv("SEQGRAD_NO_PACKED") != nullptr;
    SharedWeightState* held = weight.shared_weight.get();
    if (off || !held) return nullptr;
    if (held->pack < 0)  // the first product decides
        held->pack =
            rows <= kPackedMaxRows && weight.numel() * int64_t(sizeof(real)) <= kPackedMaxBytes;
    if (!held->pack || rows > 2 * kPackedMaxRows) return nullptr;
    if (transpose) {
        if (held->panels_of_transpose.size() == 0) {
            held->panels = Buffer();  // the forward is over: its copy goes back to the pool
            held->panels_of_transpose = Buffer(size_t(packed_weight_size(held->K, held->N)));
            pack_weight_panels_of_transpose(weight.data, held->N, held->K,
                                            held->panels_of_transpose.data());
        }
        return held->panels_of_transpose.data();
    }
    if (held->panels.size() == 0) {
        held->panels = Buffer(size_t(packed_weight_size(held->N, held->K)));
        pack_weight_panels(weight.data, held->N, held->K, held->panels.data());
    }
    return held->panels.data();
}

void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows) {
    Node& weight = out.parent(w);
    if (!weight.requires_grad || rows == 0) return;
    const int64_t N = weight.shape[0], K = weight.shape[1];
    if (weight.shared_weight)
        weight.shared_weight->append(dY, out.parents[x], rows, weight);
    else
        gemm(true, false, N, K, rows, 1, dY, out.parent(x).data, 1, weight.grad_data());
}

}  // namespace seqgrad
