// The two hooks of the kernels below the seam.
//
// The engine core names no kernel. Where the fast kernels (autograd/kernels/fast/) need something
// of their own on the graph, they plug into one of these two hooks, declared here and implemented
// there; the graph (autograd/tensor.h) only holds them. The reference build never uses either.
#pragma once

#include <cstdint>

#include "seqgrad/autograd/real.h"

namespace seqgrad {

struct Node;

// State a fast kernel keeps on one node (Node::extension; a shared_over_steps view's); opaque to
// the engine. `kind` tells the fast kernels' kinds of state apart (the address of a name of their
// own).
struct NodeExtension {
    explicit NodeExtension(const char* kind) : kind(kind) {}
    virtual ~NodeExtension() = default;
    const char* const kind;
};

// Where the ops of one thread accumulate the gradients of leaves (the parameters), when not into
// the leaves' own .grad (Node::mutable_grad_data asks the sink installed on the calling thread
// first). The data-parallel gradient shards (autograd/kernels/fast/gradient_shard.h) install one
// on each worker thread, so that several threads run backward over the same parameters at once,
// without a lock; no sink installed: .grad. Non-leaf gradients belong to one graph, hence to one
// thread, anyway.
class LeafGradientSink {
  public:
    virtual ~LeafGradientSink() = default;
    // The whole gradient of `leaf`, zero-filled on first use.
    virtual real* leaf_grad(Node& leaf) = 0;
    // Row `row` of it, `leaf` seen as [shape[0], numel / shape[0]], zero-filled on first use.
    virtual real* leaf_grad_row(Node& leaf, int64_t row) = 0;
};
// The sink installed on the calling thread, or nullptr.
LeafGradientSink* leaf_gradient_sink();
// Installs `sink` (nullptr: none) on the calling thread; returns the one it replaces.
LeafGradientSink* install_leaf_gradient_sink(LeafGradientSink* sink);

}  // namespace seqgrad
