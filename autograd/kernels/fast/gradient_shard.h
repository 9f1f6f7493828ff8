// GradientShard: gradients of leaves (the parameters) kept apart, for one thread of a
// data-parallel step (the fast version of kernels::run_gradient_shards,
// autograd/kernels/kernels.h).
//
// While a shard is installed on a thread (GradientShard::Scope), every gradient that ops on that
// thread accumulate into a leaf goes into the shard's own zero-initialised buffer for that leaf
// instead of the leaf's .grad (the shard is the thread's LeafGradientSink,
// autograd/kernel_hooks.h), so that several threads can run forward and backward over the same
// parameters at once without a lock; reduce_into_leaves then adds the shards into the leaves'
// .grad. Non-leaf gradients are per graph, hence per thread, anyway.
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad/autograd/kernel_hooks.h"
#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

class GradientShard : public LeafGradientSink {
  public:
    GradientShard();
    ~GradientShard();
    GradientShard(const GradientShard&) = delete;
    GradientShard& operator=(const GradientShard&) = delete;

    class Scope {  // installs `shard` on the calling thread for the scope's lifetime
      public:
        explicit Scope(GradientShard& shard);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

      private:
        LeafGradientSink* previous_;
    };

    // The shard's whole gradient of `leaf`, allocated and zero-filled on first use.
    real* leaf_grad(Node& leaf) override;
    // Row `row` of the shard's gradient of `leaf` (Node::mutable_grad_row_data): zero-filled on
    // first use, and only the rows written are kept, unless the whole gradient was asked for too.
    real* leaf_grad_row(Node& leaf, int64_t row) override;
    // .grad += shard for every leaf this shard holds a gradient for (allocating .grad if
    // needed); the shard is cleared for the next step.
    void reduce_into_leaves() { reduce_into_leaves({this}, 1); }
    // The same for several shards, added in the order given (so the result does not depend on
    // thread timing), on `threads` threads (parallel_run): the leaves are cut into parts of about
    // equal work, each element of a .grad in one part for every shard, so no two threads ever
    // add into the same place.
    static void reduce_into_leaves(const std::vector<GradientShard*>& shards, int threads);
    bool empty() const;
    // Memory the shard's buffers hold: whole gradients, plus the rows of the leaves kept by row
    // (for an embedding table, about the rows of the tokens a step saw, not the whole table).
    int64_t resident_bytes() const;

  private:
    struct Entry;
    Entry& entry(Node& leaf);
    // The steps of reduce_into_leaves: the leaves written, cut into parts, each cut added.
    struct LeafToReduce;
    struct Cut;
    static std::vector<LeafToReduce> leaves_written(const std::vector<GradientShard*>& shards);
    static std::vector<std::vector<Cut>> cut_into_parts(const std::vector<LeafToReduce>& leaves,
                                                        int parts);
    static void add_into_grad(const Cut& cut, const std::vector<GradientShard*>& shards);
    std::vector<Entry> entries_;
};

}  // namespace seqgrad
