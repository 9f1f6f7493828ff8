// Ops that move data without arithmetic: reshape (a view), transpose, concat, slice, stack,
// and the embedding gather. Their backward moves the gradient back the same way.
#include <fmt/format.h>

#include <cstring>
#include <utility>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {
namespace {

// Sizes of x around `dim`: outer = Π sizes before, inner = Π sizes after.
void split_at(const Shape& s, int d, int64_t* outer, int64_t* inner) {
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < d; ++i) *outer *= s[i];
    for (int i = d + 1; i < s.rank(); ++i) *inner *= s[i];
}

// Joins the inputs along a dim, seen as [outer, chunk_i] row blocks: out row o is the
// concatenation of every input's row o. Used by concat and stack.
Tensor join(const char* op, const std::vector<Tensor>& xs, const Shape& out_shape, int64_t outer) {
    Tensor out = make_result(out_shape);
    std::vector<int32_t> chunks;
    int64_t row = 0;
    for (const Tensor& x : xs) {
        chunks.push_back(int32_t(x.numel() / std::max<int64_t>(outer, 1)));
        row += chunks.back();
    }
    int64_t offset = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(out.data() + o * row + offset, xs[i].data() + o * chunks[i],
                        sizeof(real) * chunks[i]);
        offset += chunks[i];
    }
    if (record(out, op, xs, [outer, row](Node& out) {
            int64_t offset = 0;
            for (size_t i = 0; i < out.parents.size(); ++i) {
                int64_t chunk = out.saved_ints[i];
                if (real* gx = parent_grad(out, i))
                    for (int64_t o = 0; o < outer; ++o)
                        for (int64_t j = 0; j < chunk; ++j)
                            gx[o * chunk + j] += out.grad.data()[o * row + offset + j];
                offset += chunk;
            }
        }))
        out.node().saved_ints = std::move(chunks);
    return out;
}

}  // namespace

// y = x viewed with another shape;  dx += dy (same memory order)
Tensor reshape(const Tensor& x, const Shape& requested) {
    const Shape& shape = requested;
    if (shape.numel() != x.numel())
        throw Error(fmt::format("reshape: {} ({} elements) to {} ({} elements)", x.shape().str(),
                                x.numel(), requested.str(), shape.numel()));
    auto node = std::make_shared<Node>();
    node->shape = shape;
    node->view_of = x.node().view_of ? x.node().view_of : x.node_ptr();
    node->data = x.node().data;
    Tensor out(std::move(node));
    record(out, "reshape", {x}, [](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real* g = out.grad.data();
        const int64_t n = out.numel();  // not re-evaluated per element: gx may alias g
        for (int64_t i = 0; i < n; ++i) gx[i] += g[i];
    });
    return out;
}

Tensor reshape(const Tensor& x, std::initializer_list<int64_t> sizes) {
    Shape shape;
    int infer = -1, i = 0;
    int64_t known = 1;
    for (int64_t s : sizes) {
        if (s == -1) {
            if (infer >= 0) throw Error("reshape: at most one size may be -1");
            infer = i;
            shape.push_back(1);
        } else {
            shape.push_back(s);
            known *= s;
        }
        ++i;
    }
    if (infer >= 0) {
        if (known == 0 || x.numel() % known != 0)
            throw Error(fmt::format("reshape: cannot infer the -1 size for {} elements of {}",
                                    x.numel(), x.shape().str()));
        shape.at(infer) = x.numel() / known;
    }
    return reshape(x, shape);
}

// y[..., j, i] = x[..., i, j];  dx[..., i, j] += dy[..., j, i]
Tensor transpose(const Tensor& x) {
    if (x.rank() < 2)
        throw Error(fmt::format("transpose: needs at least 2 dims, got {}", x.shape().str()));
    const int64_t n = x.size(-2), m = x.size(-1), batch = x.numel() / std::max<int64_t>(n * m, 1);
    Shape out_shape = x.shape().with_dim(-2, m).with_dim(-1, n);
    Tensor out = make_result(out_shape);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < m; ++j)
                out.data()[b * n * m + j * n + i] = x.data()[b * n * m + i * m + j];
    record(out, "transpose", {x}, [batch, n, m](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real* g = out.grad.data();
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < m; ++j)
                    gx[b * n * m + i * m + j] += g[b * n * m + j * n + i];
    });
    return out;
}

namespace {

// The elements of a 4-D tensor [n0,n1,n2,n3] read through strides (a transposed view): calls
// f(o, source) for every output element o = (i0, i1, i2, i3) in order, source = Σ i_k stride_k.
// transpose recomputes these in its backward rather than keeping a table of them (8 bytes per
// element).
struct StridedWalk {
    int64_t n[4], stride[4];
    template <class F>
    void operator()(F f) const {
        int64_t o = 0;
        for (int64_t i0 = 0; i0 < n[0]; ++i0)
            for (int64_t i1 = 0; i1 < n[1]; ++i1)
                for (int64_t i2 = 0; i2 < n[2]; ++i2) {
                    const int64_t base = i0 * stride[0] + i1 * stride[1] + i2 * stride[2];
                    for (int64_t i3 = 0; i3 < n[3]; ++i3) f(o++, base + i3 * stride[3]);
                }
    }
};

}  // namespace

// y = x with dims d0 and d1 swapped (PyTorch's x.transpose(d0, d1); a copy);  dx = dy swapped back
Tensor transpose(const Tensor& x, int dim0, int dim1) {
    const int d0 = x.shape().normalize_dim(dim0), d1 = x.shape().normalize_dim(dim1);
    // x seen as 4-D [n0,n1,n2,n3] (leading 1s), with the input strides permuted for the output
    const int pad = Shape::kMaxRank - x.rank();
    int64_t n[4] = {1, 1, 1, 1}, stride[4] = {0, 0, 0, 0};
    for (int i = 0; i < x.rank(); ++i) n[pad + i] = x.size(i);
    int64_t step = 1;
    for (int i = 3; i >= 0; --i) stride[i] = step, step *= n[i];
    std::swap(n[pad + d0], n[pad + d1]);
    std::swap(stride[pad + d0], stride[pad + d1]);
    Shape out_shape = x.shape().with_dim(d0, x.size(d1)).with_dim(d1, x.size(d0));
    const StridedWalk walk{{n[0], n[1], n[2], n[3]}, {stride[0], stride[1], stride[2], stride[3]}};
    Tensor out = make_result(out_shape);
    real* y = out.data();
    const real* xd = x.data();
    walk([&](int64_t o, int64_t source) { y[o] = xd[source]; });
    record(out, "transpose_dims", {x}, [walk](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real* g = out.grad.data();
        walk([&](int64_t o, int64_t source) { gx[source] += g[o]; });
    });
    return out;
}

// y = [x_1, x_2, ...] along dim;  dx_i += the slice of dy that x_i filled
Tensor concat(const std::vector<Tensor>& xs, int dim) {
    if (xs.empty()) throw Error("concat: no tensors");
    const Shape& first = xs[0].shape();
    int d = first.normalize_dim(dim);
    int64_t total = 0;
    for (const Tensor& x : xs) {
        bool ok = x.rank() == first.rank();
        for (int i = 0; ok && i < first.rank(); ++i) ok = i == d || x.size(i) == first[i];
        if (!ok)
            throw Error(fmt::format("concat: {} and {} differ outside dim {}", first.str(),
                                    x.shape().str(), d));
        total += x.size(d);
    }
    int64_t outer, inner;
    split_at(first, d, &outer, &inner);
    return join("concat", xs, first.with_dim(d, total), outer);
}

// y = stack of equal-shaped x_i along a new dim;  dx_i += dy's slice i along that dim
Tensor stack(const std::vector<Tensor>& xs, int dim) {
    if (xs.empty()) throw Error("stack: no tensors");
    const Shape& first = xs[0].shape();
    for (const Tensor& x : xs)
        if (x.shape() != first)
            throw Error(
                fmt::format("stack: shapes {} and {} differ", first.str(), x.shape().str()));
    int rank = first.rank() + 1;
    int d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank) throw Error(fmt::format("stack: dim {} out of range", dim));
    Shape out_shape;
    int64_t outer = 1;
    for (int i = 0; i < d; ++i) {
        out_shape.push_back(first[i]);
        outer *= first[i];
    }
    out_shape.push_back(int64_t(xs.size()));
    for (int i = d; i < first.rank(); ++i) out_shape.push_back(first[i]);
    return join("stack", xs, out_shape, outer);
}

// y = x[..., start:end, ...] along dim;  dx[..., start:end, ...] += dy
Tensor slice(const Tensor& x, int dim, int64_t start, int64_t end) {
    int d = x.shape().normalize_dim(dim);
    const int64_t n = x.size(d);
    if (start < 0 || end > n || start > end)
        throw Error(fmt::format("slice: [{}, {}) out of range for dim {} of {}", start, end, d,
                                x.shape().str()));
    int64_t outer, inner;
    split_at(x.shape(), d, &outer, &inner);
    const int64_t len = end - start;
    Tensor out;
    if (outer == 1) {
        // One contiguous block (a slice of the leading dim, e.g. the first n rows of a batch):
        // a view of x's data, like reshape, with no copy.
        auto node = std::make_shared<Node>();
        node->shape = x.shape().with_dim(d, len);
        node->view_of = x.node().view_of ? x.node().view_of : x.node_ptr();
        node->data = x.node().data + start * inner;
        out = Tensor(std::move(node));
    } else {
        out = make_result(x.shape().with_dim(d, len));
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(out.data() + o * len * inner, x.data() + (o * n + start) * inner,
                        sizeof(real) * len * inner);
    }
    record(out, "slice", {x}, [outer, inner, n, start, len](Node& out) {
        real* gx = parent_grad(out, 0);
        if (!gx) return;
        const real* g = out.grad.data();
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < len * inner; ++j)
                gx[(o * n + start) * inner + j] += g[o * len * inner + j];
    });
    return out;
}

// y[i, :] = W[ids[i], :];  dW[ids[i], :] += dy[i, :]  (except the padding row)
Tensor embedding(const Tensor& weight, const std::vector<int32_t>& ids, const Shape& ids_shape,
                 int32_t padding_idx) {
    if (weight.rank() != 2)
        throw Error(fmt::format("embedding: weight must be [V, E], got {}", weight.shape().str()));
    if (int64_t(ids.size()) != ids_shape.numel())
        throw Error(fmt::format("embedding: {} ids for ids shape {}", ids.size(), ids_shape.str()));
    const int64_t V = weight.size(0), E = weight.size(1);
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= V)
            throw Error(fmt::format("embedding: id {} at position {} is out of range [0, {})",
                                    ids[i], i, V));
    Shape out_shape = ids_shape;
    out_shape.push_back(E);
    Tensor out = make_result(out_shape);
    for (size_t i = 0; i < ids.size(); ++i)
        std::memcpy(out.data() + i * E, weight.data() + int64_t(ids[i]) * E, sizeof(real) * E);
    if (record(out, "embedding", {weight}, [E, padding_idx](Node& out) {
            Node& table = out.parent(0);
            if (!table.requires_grad) return;
            const real* g = out.grad.data();
            const auto& ids = out.saved_ints;
            for (size_t i = 0; i < ids.size(); ++i) {
                if (ids[i] == padding_idx) continue;
                real* row = table.mutable_grad_row_data(ids[i]);  // row ids[i] of dweight
                for (int64_t j = 0; j < E; ++j) row[j] += g[i * E + j];
            }
        }))
        out.node().saved_ints = ids;
    return out;
}

// A row of x is a "word vector" of x viewed as [B, rest]: the embedding op's forward and
// backward are exactly the gather and its scatter-add.
Tensor gather_rows(const Tensor& x, const std::vector<int32_t>& rows) {
    if (x.rank() < 1)
        throw Error(fmt::format("gather_rows: x must have a row dim, got {}", x.shape().str()));
    const int64_t B = x.size(0), rest = B == 0 ? 0 : x.numel() / B;
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i] < 0 || rows[i] >= B)
            throw Error(
                fmt::format("gather_rows: row {} at position {} is out of range [0, {}) for {}",
                            rows[i], i, B, x.shape().str()));
    const Shape out_shape = x.shape().with_dim(0, int64_t(rows.size()));
    return reshape(embedding(reshape(x, {B, rest}), rows, {int64_t(rows.size())}), out_shape);
}

}  // namespace seqgrad
