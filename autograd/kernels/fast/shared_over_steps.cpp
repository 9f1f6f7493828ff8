// shared_over_steps and the products that know about it (see
// autograd/kernels/fast/shared_over_steps.h; why and what it bought: docs/performance.md, "one
// weight-gradient product over all steps" and "packed weights for thin products").
#include "seqgrad/autograd/kernels/fast/shared_over_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "seqgrad/autograd/kernel_hooks.h"
#include "seqgrad/autograd/kernels/fast/gemm.h"
#include "seqgrad/autograd/kernels/switches.h"

namespace seqgrad::kernels::fast {
namespace {

// A shared_over_steps view's state (its node's extension). The rows handed over so far: dY
// [rows, N], copied (a step's gradient is freed right after its backward), and X as references
// to the steps' inputs (X_t is the first rows of a node that the backward pass keeps alive; the
// reference keeps it alive too), gathered only for the product. Once about kFlushRows rows are
// handed over they are added into dW and the buffer starts again: that bounds the memory they
// take while each product stays wide (docs/performance.md has the measured GFLOP/s).
const char kSharedOverSteps[] = "shared_over_steps";

struct SharedOverSteps final : NodeExtension {
    SharedOverSteps() : NodeExtension(kSharedOverSteps) {}
    static constexpr int64_t kFlushRows = 128;
    struct Input {
        NodePtr node;
        int64_t rows;
    };
    int64_t N = 0, K = 0, rows = 0, capacity = 0;
    Buffer dy;
    std::vector<Input> inputs;
    // The weight packed for gemm_nt_packed, made at the first thin product: for x Wᵀ (forward;
    // released when the backward packs) and for dY W (backward).
    Buffer panels, panels_of_transpose;
    int pack = -1;  // -1: no product yet; 0 or 1: whether they are made (packed_weight_for)

    // dW += dyᵀ [X_1; X_2; ...] over the rows handed over, then none are
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
        if (rows > 0 && rows + n > capacity) flush(view.parent(0).mutable_grad_data());
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

SharedOverSteps* state_of(Node& weight) {
    NodeExtension* e = weight.extension.get();
    return e && e->kind == kSharedOverSteps ? static_cast<SharedOverSteps*>(e) : nullptr;
}

// Whether to pack is decided at the view's first product: a recurrence whose steps start with at
// most kPackedMaxRows rows packs, one that starts wider does not (OpenBLAS's own packing is paid
// over more rows there), even once its finished rows drop out. And only weights of up to 2 MB are
// packed. The forward copy (for x Wᵀ) lives until the first product of the backward (dY W) packs
// the other: one at a time, so the second takes the first's buffer back from the pool.
constexpr int64_t kPackedMaxRows = 16;
constexpr int64_t kPackedMaxBytes = int64_t(2) << 20;

// `weight` packed for gemm_nt_packed when it is a shared_over_steps view and a product of `rows`
// rows gains from it, else nullptr. transpose: packed for products by W itself (dY W).
const real* packed_weight_for(Node& weight, int64_t rows, bool transpose) {
    SharedOverSteps* held = state_of(weight);
    if (!held || !switches().packed) return nullptr;
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

// The views of this thread's open scopes, innermost last: (parameter, its view).
thread_local std::vector<std::pair<Node*, Tensor>> g_in_use;

}  // namespace

Tensor shared_over_steps(const Tensor& weight) {
    if (weight.rank() != 2)
        throw Error(
            fmt::format("shared_over_steps: weight {} must be [N, K]", weight.shape().str()));
    if (!grad_enabled() || !weight.requires_grad() || !switches().shared_steps) return weight;
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
        if (SharedOverSteps* held = state_of(out)) held->flush(dW);
    });
    auto state = std::make_shared<SharedOverSteps>();
    state->N = weight.size(0);
    state->K = weight.size(1);
    view.node().extension = std::move(state);
    return view;
}

size_t open_shared_over_steps(const std::vector<Tensor>& weights) {
    const size_t previous = g_in_use.size();
    // parameters only: a weight computed by an op (Luong concat's slice of W) is a new node at
    // every call, which no later op would find here
    for (const Tensor& w : weights)
        if (w.defined() && w.is_leaf())
            g_in_use.emplace_back(w.node_ptr().get(), shared_over_steps(w));
    return previous;
}
void close_shared_over_steps(size_t previous_size) {
    g_in_use.resize(previous_size);
}
const Tensor& weight_in_use(const Tensor& weight) {
    for (auto it = g_in_use.rbegin(); it != g_in_use.rend(); ++it)
        if (it->first == weight.node_ptr().get()) return it->second;
    return weight;
}

// y = x Wᵀ + beta y
void product_x_wt(Node& weight, int64_t rows, const real* x, real beta, real* y) {
    const int64_t N = weight.shape[0], K = weight.shape[1];
    if (const real* panels = packed_weight_for(weight, rows, false))
        gemm_nt_packed(rows, N, K, x, panels, beta, y);
    else
        gemm(false, true, rows, N, K, 1, x, weight.data, beta, y);
}
// dx += dy W
void product_dy_w(Node& weight, int64_t rows, const real* dy, real* dx) {
    const int64_t N = weight.shape[0], K = weight.shape[1];
    if (const real* panels = packed_weight_for(weight, rows, true))
        gemm_nt_packed(rows, K, N, dy, panels, 1, dx);
    else
        gemm(false, false, rows, K, N, 1, dy, weight.data, 1, dx);
}
// dW += dYᵀ X, or the rows handed to the view
void accumulate_weight_grad(Node& out, size_t w, size_t x, const real* dY, int64_t rows) {
    Node& weight = out.parent(w);
    if (!weight.requires_grad || rows == 0) return;
    const int64_t N = weight.shape[0], K = weight.shape[1];
    if (SharedOverSteps* held = state_of(weight))
        held->append(dY, out.parents[x], rows, weight);
    else
        gemm(true, false, N, K, rows, 1, dY, out.parent(x).data, 1, weight.mutable_grad_data());
}

}  // namespace seqgrad::kernels::fast
