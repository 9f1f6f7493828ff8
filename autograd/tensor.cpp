#include "seqgrad/autograd/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <unordered_set>

#include "seqgrad/autograd/kernel_hooks.h"
#include "seqgrad/autograd/tape_scope.h"

namespace seqgrad {
namespace {
thread_local bool g_grad_enabled = true;
std::atomic<uint64_t> g_backward_passes{0};
thread_local LeafGradientSink* g_leaf_gradient_sink = nullptr;
}  // namespace

uint64_t backward_pass_count() {
    return g_backward_passes.load(std::memory_order_relaxed);
}

bool grad_enabled() {
    return g_grad_enabled;
}
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) {
    g_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() {
    g_grad_enabled = previous_;
}

LeafGradientSink* leaf_gradient_sink() {
    return g_leaf_gradient_sink;
}
LeafGradientSink* install_leaf_gradient_sink(LeafGradientSink* sink) {
    LeafGradientSink* previous = g_leaf_gradient_sink;
    g_leaf_gradient_sink = sink;
    return previous;
}

real* Node::mutable_grad_data() {
    if (is_leaf && g_leaf_gradient_sink) return g_leaf_gradient_sink->leaf_grad(*this);
    if (grad.size() == 0) {
        grad = Buffer(numel());
        std::memset(grad.data(), 0, sizeof(real) * numel());
    }
    return grad.data();
}

real* Node::mutable_grad_row_data(int64_t row) {
    if (is_leaf && g_leaf_gradient_sink) return g_leaf_gradient_sink->leaf_grad_row(*this, row);
    const int64_t rows = shape.rank() == 0 ? 1 : shape[0];
    return mutable_grad_data() + row * (rows == 0 ? 0 : numel() / rows);
}

// ---- construction ----------------------------------------------------------------------------

Tensor make_result(const Shape& shape) {
    auto node = std::make_shared<Node>();
    node->shape = shape;
    node->data_buffer = Buffer(shape.numel());
    node->data = node->data_buffer.data();
    return Tensor(std::move(node));
}

Tensor Tensor::empty(const Shape& shape) {
    return make_result(shape);
}

Tensor Tensor::zeros(const Shape& shape, bool requires_grad) {
    return full(shape, real(0), requires_grad);
}

Tensor Tensor::full(const Shape& shape, real value, bool requires_grad) {
    Tensor t = make_result(shape);
    std::fill(t.data(), t.data() + t.numel(), value);
    t.node().requires_grad = requires_grad;
    return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<real>& values,
                           bool requires_grad) {
    if (int64_t(values.size()) != shape.numel())
        throw Error(fmt::format("from_vector: shape {} needs {} values, got {}", shape.str(),
                                shape.numel(), values.size()));
    Tensor t = make_result(shape);
    std::copy(values.begin(), values.end(), t.data());
    t.node().requires_grad = requires_grad;
    return t;
}

Tensor Tensor::scalar(real value, bool requires_grad) {
    return full(Shape{}, value, requires_grad);
}

real Tensor::item() const {
    if (numel() != 1)
        throw Error(fmt::format("item: tensor of shape {} has {} elements, expected 1",
                                shape().str(), numel()));
    return data()[0];
}

std::vector<real> Tensor::to_vector() const {
    return std::vector<real>(data(), data() + numel());
}

Tensor& Tensor::set_requires_grad(bool on) {
    if (!is_leaf())
        throw Error(
            fmt::format("set_requires_grad: only leaf tensors can be switched (this one "
                        "is the result of '{}')",
                        op_name() ? op_name() : "?"));
    node().requires_grad = on;
    return *this;
}

void Tensor::retain_grad() {
    node().retains_grad = true;
}

const real* Tensor::grad_data() const {
    return has_grad() ? node().grad.data() : nullptr;
}
real* Tensor::mutable_grad_data() {
    return node().mutable_grad_data();
}

Tensor Tensor::grad() const {
    Tensor g = zeros(shape());
    if (has_grad()) std::copy(node().grad.data(), node().grad.data() + numel(), g.data());
    return g;
}

void Tensor::zero_grad() {
    if (has_grad()) std::memset(node().grad.data(), 0, sizeof(real) * numel());
}

Tensor Tensor::detach() const {
    Tensor t = make_result(shape());
    std::copy(data(), data() + numel(), t.data());
    return t;
}

// ---- recording -------------------------------------------------------------------------------

template <class Range>
static bool record_impl(Tensor& out, const char* op, const Range& inputs, BackwardFn fn) {
    Node& node = out.node();
    node.op = op;
    if (!g_grad_enabled) return false;
    bool any = false;
    for (const Tensor& t : inputs) any = any || t.requires_grad();
    if (!any) return false;
    node.requires_grad = true;
    node.is_leaf = false;
    node.parents.reserve(inputs.size());
    for (const Tensor& t : inputs) node.parents.push_back(t.node_ptr());
    node.backward = std::move(fn);
    TapeRecording::note(node);  // its scope label, when a recording is on (autograd/tape_scope.h)
    return true;
}

bool record(Tensor& out, const char* op, std::initializer_list<Tensor> inputs, BackwardFn fn) {
    return record_impl(out, op, inputs, std::move(fn));
}
bool record(Tensor& out, const char* op, const std::vector<Tensor>& inputs, BackwardFn fn) {
    return record_impl(out, op, inputs, std::move(fn));
}

// ---- backward --------------------------------------------------------------------------------

static void throw_if_freed(const Node& node) {
    if (!node.is_leaf && node.graph_freed)
        throw Error(
            fmt::format(
                "backward: the graph through '{}' (shape {}) was already freed by an earlier "
                "backward; run the forward pass again to build a new graph",
                node.op ? node.op : "?", node.shape.str()),
            ErrorKind::state);
}

// Orders the graph: iterative depth-first post-order (a decoder unrolled over 50 steps makes
// graphs thousands of ops deep, too deep for recursion). Only nodes that require grad. The result
// holds owning pointers: backward, freeing a node's inputs, must not destroy an input whose own
// backward has not run yet.
static std::vector<NodePtr> post_order(const NodePtr& root) {
    std::vector<NodePtr> order;
    std::unordered_set<Node*> visited;
    std::vector<std::pair<NodePtr, size_t>> stack;  // node, index of next parent to visit
    stack.emplace_back(root, 0);
    visited.insert(root.get());
    while (!stack.empty()) {
        NodePtr node = stack.back().first;
        size_t next = stack.back().second++;
        if (next < node->parents.size()) {
            const NodePtr& parent = node->parents[next];
            if (parent->requires_grad && visited.insert(parent.get()).second) {
                throw_if_freed(*parent);
                stack.emplace_back(parent, 0);
            }
        } else {
            order.push_back(std::move(node));
            stack.pop_back();
        }
    }
    return order;
}

std::vector<NodePtr> recorded_graph(const Tensor& root) {
    throw_if_freed(root.node());
    return post_order(root.node_ptr());
}

void Tensor::backward() {
    if (numel() != 1)
        throw Error(fmt::format("backward: tensor of shape {} is not a scalar; pass a gradient "
                                "of the same shape",
                                shape().str()),
                    ErrorKind::state);
    backward(Tensor::full(shape(), real(1)));
}

void Tensor::backward(const Tensor& grad_output) {
    g_backward_passes.fetch_add(1, std::memory_order_relaxed);
    Node& root = node();
    if (!root.requires_grad)
        throw Error(
            "backward: tensor does not require grad (no input required grad, or it was "
            "computed under NoGradGuard)",
            ErrorKind::state);
    if (grad_output.shape() != root.shape)
        throw Error(fmt::format("backward: gradient of shape {} for a tensor of shape {}",
                                grad_output.shape().str(), root.shape.str()));
    throw_if_freed(root);

    std::vector<NodePtr> order = post_order(node_);

    real* seed = root.mutable_grad_data();
    for (int64_t i = 0; i < root.numel(); ++i) seed[i] += grad_output.data()[i];

    // An extension may hold references to nodes of this graph until its node's backward (a
    // shared_over_steps view holds the inputs of the steps that use it): a cycle, should a
    // backward rule throw before then. (Non-leaves only: a leaf, a parameter, may be read by
    // other threads' graphs at the same time, and is not written.)
    struct ReleaseExtensions {
        std::vector<NodePtr>& order;
        ~ReleaseExtensions() {
            for (const NodePtr& node : order)
                if (!node->is_leaf) node->extension.reset();
        }
    } release_extensions{order};

    // Reverse post-order: every node runs after all the nodes that use it.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node* node = it->get();
        if (node->is_leaf) continue;
        // (a node's extension may hold its gradient instead of .grad, see Node::extension)
        if (node->backward && (node->grad.size() > 0 || node->extension)) node->backward(*node);
        // Free the graph behind this node: its inputs, its rule, what the rule saved, and (unless
        // asked to keep it) its gradient. Its data stays valid.
        node->parents.clear();
        node->backward = nullptr;
        node->saved.release();
        node->saved_ints.clear();
        node->saved_ints.shrink_to_fit();
        node->extension.reset();
        node->graph_freed = true;
        if (!node->retains_grad) node->grad.release();
    }
}

}  // namespace seqgrad
