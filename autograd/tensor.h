// Tensor: a cheap handle to a node of the computation graph.
//
// A node holds a shape (up to 4 dims), contiguous row-major data of type `real`, an optional
// gradient buffer of the same size, and — when it was produced by an op while grad mode was on —
// its parent nodes and the rule that pushes its gradient back to them (micrograd's `_backward`).
//
// `real` is chosen at build time (SEQGRAD_REAL): the library is compiled twice, as float for
// training and as double for finite-difference gradient checks (see README, "Double precision").
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "seqgrad/autograd/buffer_pool.h"
#include "seqgrad/autograd/error.h"
#include "seqgrad/autograd/real.h"
#include "seqgrad/autograd/shape.h"

namespace seqgrad {

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct NodeExtension;  // state a fast kernel keeps on a node (autograd/kernel_hooks.h)

// Pushes `out.grad` into the gradients of out's parents (accumulating, never overwriting).
using BackwardFn = std::function<void(Node& out)>;

struct Node : std::enable_shared_from_this<Node> {
    Shape shape;
    Buffer data_buffer;    // owned data (empty for a view)
    NodePtr view_of;       // a reshape or a contiguous slice shares the data of this node
    real* data = nullptr;  // points into data_buffer or into view_of's data
    Buffer grad;           // allocated (zeroed) on first accumulation
    bool requires_grad = false;
    bool is_leaf = true;  // false for results of ops that recorded a backward rule
    bool retains_grad = false;
    bool graph_freed = false;
    const char* op = nullptr;
    std::vector<NodePtr> parents;
    BackwardFn backward;
    // What a backward rule needs beyond inputs and output: a buffer (softmax probabilities,
    // dropout mask, GRU gates...) and integers (indices, dims).
    Buffer saved;
    std::vector<int32_t> saved_ints;
    // State that a fast kernel keeps on this node (NodeExtension, autograd/kernel_hooks.h; only a
    // shared_over_steps view's, autograd/kernels/fast/). Never set in the reference build. A node
    // whose extension is set runs its backward even without a .grad (the extension may hold
    // gradient handed to it), and the extension is dropped with the rest of the graph.
    std::shared_ptr<NodeExtension> extension;

    int64_t numel() const { return shape.numel(); }
    Node& parent(size_t i) { return *parents[i]; }
    // The gradient to accumulate into, allocated and zero-filled on first use: what backward
    // rules write to. (For a leaf, the calling thread's LeafGradientSink, if one is installed,
    // keeps it instead of .grad: autograd/kernel_hooks.h.) Tensor::grad_data, by contrast, never
    // allocates.
    real* mutable_grad_data();
    // Row `row` of it, the node seen as [shape[0], numel / shape[0]]: for a backward that adds
    // into a few rows of a large gradient (the embedding's scatter-add). The same as
    // mutable_grad_data() + row · width, except where a LeafGradientSink keeps a leaf's gradient
    // (then only the rows written may be kept). Valid until the next call for this node.
    real* mutable_grad_row_data(int64_t row);
};

class Tensor {
  public:
    Tensor() = default;
    explicit Tensor(NodePtr node) : node_(std::move(node)) {}

    // Uninitialised storage (from the buffer pool), zeros, a constant, or given values.
    static Tensor empty(const Shape& shape);
    static Tensor zeros(const Shape& shape, bool requires_grad = false);
    static Tensor full(const Shape& shape, real value, bool requires_grad = false);
    static Tensor from_vector(const Shape& shape, const std::vector<real>& values,
                              bool requires_grad = false);
    static Tensor scalar(real value, bool requires_grad = false);

    bool defined() const { return node_ != nullptr; }
    const Shape& shape() const { return node().shape; }
    int rank() const { return shape().rank(); }
    int64_t size(int dim) const { return shape()[dim]; }
    int64_t numel() const { return shape().numel(); }
    real* data() { return node().data; }
    const real* data() const { return node().data; }
    real item() const;  // the value of a one-element tensor
    std::vector<real> to_vector() const;

    bool requires_grad() const { return node().requires_grad; }
    // Only leaves (tensors not produced by a recorded op) can be switched.
    Tensor& set_requires_grad(bool on = true);
    bool is_leaf() const { return node().is_leaf; }
    // Keep the gradient of an intermediate result after backward (normally freed).
    void retain_grad();

    bool has_grad() const { return node().grad.size() > 0; }
    const real* grad_data() const;  // nullptr when no gradient yet; never allocates
    real* mutable_grad_data();      // allocates a zero gradient if needed (Node::mutable_grad_data)
    Tensor grad() const;            // a copy; zeros when no gradient yet
    void zero_grad();

    // Reverse-mode differentiation from this tensor. A one-element tensor is seeded with 1;
    // any other needs an explicit gradient of its own shape. Gradients accumulate into .grad
    // of every leaf that requires grad; the graph is freed afterwards.
    void backward();
    void backward(const Tensor& grad_output);

    // A new leaf sharing no graph: the same values, requires_grad = false.
    Tensor detach() const;
    const char* op_name() const { return node().op; }

    Node& node() const {
        if (!node_) throw Error("use of an undefined Tensor", ErrorKind::state);
        return *node_;
    }
    const NodePtr& node_ptr() const { return node_; }

  private:
    NodePtr node_;
};

// The nodes backward() visits from `root`: root and every node that requires grad reachable
// through parents, each once, inputs before the ops that read them (depth-first post-order).
// For inspecting a graph before backward frees it (the explorer's tape view).
std::vector<NodePtr> recorded_graph(const Tensor& root);

// How many backward passes (Tensor::backward calls) this process has begun, on any thread: an
// optimizer whose update zeroed the gradients knows from it that none was written since
// (Optimizer::zero_grad, optim/optimizer.h).
uint64_t backward_pass_count();

// Grad mode: ops record backward rules only while it is on (it is on by default).
bool grad_enabled();
class NoGradGuard {
  public:
    NoGradGuard();
    ~NoGradGuard();
    NoGradGuard(const NoGradGuard&) = delete;
    NoGradGuard& operator=(const NoGradGuard&) = delete;

  private:
    bool previous_;
};

// ---- used by op implementations ------------------------------------------------------------

// A fresh result node with uninitialised data.
Tensor make_result(const Shape& shape);
// If grad mode is on and any input requires grad, makes `out` a non-leaf that requires grad,
// remembers the inputs and the backward rule. Returns whether it recorded.
bool record(Tensor& out, const char* op, std::initializer_list<Tensor> inputs, BackwardFn fn);
bool record(Tensor& out, const char* op, const std::vector<Tensor>& inputs, BackwardFn fn);
// The gradient buffer of parent i when it requires grad, else nullptr.
inline real* parent_grad(Node& out, size_t i) {
    Node& p = out.parent(i);
    return p.requires_grad ? p.mutable_grad_data() : nullptr;
}

}  // namespace seqgrad
