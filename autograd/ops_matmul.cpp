// Matrix products. C = op(A) op(B) with op = identity or transpose; backward:
//   dop(A) = dC op(B)ᵀ,  dop(B) = op(A)ᵀ dC,
// and each is again one gemm with transpose flags (see the cases below).
#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"

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

// C = op(A) op(B);  d op(A) += dC op(B)ᵀ,  d op(B) += op(A)ᵀ dC   (op(X) = X or Xᵀ)
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
// The three products are kernels (autograd/kernels/kernels.h): each is one gemm in the reference build.
Tensor linear(const Tensor& x, const Tensor& weight_parameter, const Tensor& bias) {
    // the weight, or the view through which the steps of a recurrence share it
    const Tensor& weight = kernels::weight_in_use(weight_parameter);
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
    kernels::product_x_wt(weight.node(), rows, x.data(), bias.defined() ? 1 : 0, y);  // y += x Wᵀ
    std::vector<Tensor> inputs{x, weight};
    if (bias.defined()) inputs.push_back(bias);
    record(out, "linear", inputs, [rows, out_features](Node& out) {
        const real* dy = out.grad.data();
        if (real* dx = parent_grad(out, 0))  // dx += dy W
            kernels::product_dy_w(out.parent(1), rows, dy, dx);
        kernels::accumulate_weight_grad(out, 1, 0, dy, rows);  // dW += dyᵀ x
        if (out.parents.size() > 2)
            if (real* db = parent_grad(out, 2))
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t j = 0; j < out_features; ++j) db[j] += dy[r * out_features + j];
    });
    return out;
}

}  // namespace seqgrad
