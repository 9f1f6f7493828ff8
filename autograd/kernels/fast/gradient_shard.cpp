// GradientShard (autograd/kernels/fast/gradient_shard.h): per-thread gradient buffers of the
// leaves, for data-parallel steps (models/training/data_parallel.h), and the fast kernels that use
// them.
//
// A shard holds a leaf's gradient in one of two forms:
// - dense: the whole gradient, zero-filled, once an op asks for it (Node::mutable_grad_data), as
// every
//   product's dW does;
// - rows: only the rows written one at a time (Node::mutable_grad_row_data), as the embedding's
//   scatter-add does: a step writes a few hundred rows of a target embedding table of
//   thousands, so the shard holds those, not the table.
// A leaf asked for both in one step becomes dense (its rows are added into the dense buffer).
// Why rows and not memory pages: docs/performance.md, rung 14.
#include "seqgrad/autograd/kernels/fast/gradient_shard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <memory>
#include <optional>

#include "seqgrad/autograd/kernels/fast/kernels.h"
#include "seqgrad/autograd/kernels/parallel.h"

namespace seqgrad {

struct GradientShard::Entry {
    NodePtr leaf;             // kept alive while the shard holds a gradient for it
    int64_t width = 1;        // elements per row: numel / size(0)
    std::vector<real> dense;  // the whole gradient once an op asked for it, else empty
    // Rows written one at a time while there is no dense buffer: row r's values are at
    // row_values[slot_of_row[r] · width], and written_rows lists them in order of first write.
    std::vector<int32_t> slot_of_row;  // -1: not written since the last reduce
    std::vector<int32_t> written_rows;
    std::vector<real> row_values;
    bool dirty = false;  // written since the last reduce

    // dense += the rows kept, which are then dropped
    void fold_rows_into_dense() {
        for (size_t s = 0; s < written_rows.size(); ++s) {
            real* row = dense.data() + int64_t(written_rows[s]) * width;
            const real* values = row_values.data() + int64_t(s) * width;
            for (int64_t j = 0; j < width; ++j) row[j] += values[j];
        }
        clear_rows();
    }
    void clear_rows() {
        for (int32_t r : written_rows) slot_of_row[size_t(r)] = -1;
        written_rows.clear();
        row_values.clear();  // keeps its capacity: no allocation on the next step
    }
};

GradientShard::GradientShard() = default;
GradientShard::~GradientShard() = default;

GradientShard::Scope::Scope(GradientShard& shard) : previous_(install_leaf_gradient_sink(&shard)) {}
GradientShard::Scope::~Scope() {
    install_leaf_gradient_sink(previous_);
}

GradientShard::Entry& GradientShard::entry(Node& leaf) {
    // A model has tens of parameters: a linear search beats hashing, and keeps the order of
    // first use, which is the same on every step.
    for (Entry& e : entries_)
        if (e.leaf.get() == &leaf) return e;
    Entry e;
    e.leaf = leaf.shared_from_this();
    const int64_t rows = leaf.shape.rank() == 0 ? 1 : leaf.shape[0];
    e.width = rows == 0 ? 1 : std::max<int64_t>(1, leaf.numel() / rows);
    entries_.push_back(std::move(e));
    return entries_.back();
}

real* GradientShard::leaf_grad(Node& leaf) {
    Entry& e = entry(leaf);
    e.dirty = true;
    if (e.dense.empty()) {
        e.dense.assign(size_t(leaf.numel()), real(0));
        e.fold_rows_into_dense();
    }
    return e.dense.data();
}

real* GradientShard::leaf_grad_row(Node& leaf, int64_t row) {
    Entry& e = entry(leaf);
    e.dirty = true;
    if (!e.dense.empty()) return e.dense.data() + row * e.width;
    if (e.slot_of_row.empty()) e.slot_of_row.assign(size_t(leaf.numel() / e.width), -1);
    int32_t& slot = e.slot_of_row[size_t(row)];
    if (slot < 0) {
        slot = int32_t(e.written_rows.size());
        e.written_rows.push_back(int32_t(row));
        e.row_values.resize(e.written_rows.size() * size_t(e.width), real(0));
    }
    return e.row_values.data() + int64_t(slot) * e.width;
}

// A leaf some shard wrote since the last reduce, and the cost of adding it into .grad: every
// element when it is dense in any shard, else the rows written.
struct GradientShard::LeafToReduce {
    Node* node;
    int64_t width, rows;
    bool dense;
    int64_t cost;
};
// Rows [row_begin, row_end) of one leaf: a piece of one thread's part of the work.
struct GradientShard::Cut {
    const LeafToReduce* leaf;
    int64_t row_begin, row_end;
};

std::vector<GradientShard::LeafToReduce> GradientShard::leaves_written(
    const std::vector<GradientShard*>& shards) {
    std::vector<LeafToReduce> leaves;
    for (const GradientShard* shard : shards)
        for (const Entry& e : shard->entries_) {
            if (!e.dirty) continue;
            auto it = std::find_if(leaves.begin(), leaves.end(),
                                   [&](const LeafToReduce& l) { return l.node == e.leaf.get(); });
            if (it == leaves.end()) {
                leaves.push_back({e.leaf.get(), e.width, e.leaf->numel() / e.width, false, 0});
                it = leaves.end() - 1;
            }
            it->dense |= !e.dense.empty();
            it->cost =
                it->dense ? e.leaf->numel() : it->cost + int64_t(e.written_rows.size()) * e.width;
        }
    return leaves;
}

std::vector<std::vector<GradientShard::Cut>> GradientShard::cut_into_parts(
    const std::vector<LeafToReduce>& leaves, int parts) {
    int64_t total = 0;
    for (const LeafToReduce& leaf : leaves) total += leaf.cost;
    std::vector<std::vector<Cut>> cuts(static_cast<size_t>(parts));
    const double per_part = double(total) / double(parts);
    double filled = 0;  // cost given to parts so far
    int part = 0;
    auto boundary = [&] { return per_part * double(part + 1); };
    for (const LeafToReduce& leaf : leaves) {
        if (!leaf.dense) {
            cuts[size_t(part)].push_back({&leaf, 0, leaf.rows});
            filled += double(leaf.cost);
        } else {
            for (int64_t row = 0; row < leaf.rows;) {
                int64_t take = leaf.rows - row;
                if (part + 1 < parts) {
                    const double room = std::max(0.0, boundary() - filled);
                    take = std::min(take, int64_t(std::ceil(room / double(leaf.width))));
                }
                if (take > 0) cuts[size_t(part)].push_back({&leaf, row, row + take});
                filled += double(take * leaf.width);
                row += take;
                if (row < leaf.rows) ++part;  // this part is full
            }
        }
        while (part + 1 < parts && filled >= boundary()) ++part;
    }
    return cuts;
}

void GradientShard::add_into_grad(const Cut& cut, const std::vector<GradientShard*>& shards) {
    const int64_t width = cut.leaf->width;
    real* grad = cut.leaf->node->grad.data();
    for (GradientShard* shard : shards)
        for (Entry& e : shard->entries_) {
            if (e.leaf.get() != cut.leaf->node || !e.dirty) continue;
            if (!e.dense.empty()) {  // grad += dense, which is cleared as it is read
                real* values = e.dense.data();
                for (int64_t i = cut.row_begin * width; i < cut.row_end * width; ++i) {
                    grad[i] += values[i];
                    values[i] = 0;
                }
                continue;
            }
            for (size_t s = 0; s < e.written_rows.size(); ++s) {
                const int64_t r = e.written_rows[s];
                if (r < cut.row_begin || r >= cut.row_end) continue;
                real* row = grad + r * width;
                const real* values = e.row_values.data() + int64_t(s) * width;
                for (int64_t j = 0; j < width; ++j) row[j] += values[j];
            }
        }
}

void GradientShard::reduce_into_leaves(const std::vector<GradientShard*>& shards, int threads) {
    // The plan, made once before any thread starts: every leaf a shard wrote, in order of first
    // appearance, with its cost (a leaf dense in any shard: every element; else its rows), cut
    // into `threads` parts of about equal cost. A leaf dense anywhere may be cut between rows (a
    // 6 MB output projection is a third of config (a)'s parameters and would otherwise leave one
    // thread with most of the work); a leaf held only as rows goes whole to one part. Each
    // element of each .grad is then in exactly one part, for every shard, so no two threads
    // ever add into the same place, and each element sums the shards in the order given (the
    // result does not depend on thread timing).
    const std::vector<LeafToReduce> leaves = leaves_written(shards);
    const int parts = std::max(1, threads);
    const std::vector<std::vector<Cut>> cuts = cut_into_parts(leaves, parts);

    // the leaves' own .grad, even on a shard's thread: allocated here, not in a race
    LeafGradientSink* installed = install_leaf_gradient_sink(nullptr);
    for (const LeafToReduce& leaf : leaves) leaf.node->mutable_grad_data();
    install_leaf_gradient_sink(installed);

    parallel_run(parts, [&](int k) {
        for (const Cut& cut : cuts[size_t(k)]) add_into_grad(cut, shards);
    });
    for (GradientShard* shard : shards)
        for (Entry& e : shard->entries_) {
            e.clear_rows();
            e.dirty = false;
        }
}

bool GradientShard::empty() const {
    for (const Entry& e : entries_)
        if (e.dirty) return false;
    return true;
}

int64_t GradientShard::resident_bytes() const {
    size_t values = 0;
    for (const Entry& e : entries_) values += e.dense.capacity() + e.row_values.capacity();
    return int64_t(values * sizeof(real));
}

// ---- the fast kernel (autograd/kernels/kernels.h) -----------------------------------------------

// Shard k > 0 accumulates its leaves' gradients into shards[k - 1]; shard 0 into .grad.
struct kernels::ParallelGradients::State {
    std::vector<std::unique_ptr<GradientShard>> shards;
};

kernels::ParallelGradients::ParallelGradients() : state_(std::make_unique<State>()) {}
kernels::ParallelGradients::~ParallelGradients() = default;

void kernels::ParallelGradients::run(int count, const std::function<void(int)>& task) {
    auto& shards = state_->shards;
    while (int(shards.size()) < count - 1) shards.push_back(std::make_unique<GradientShard>());
    parallel_run(count, [&](int k) {
        std::optional<GradientShard::Scope> scope;
        if (k > 0) scope.emplace(*shards[size_t(k - 1)]);
        task(k);
    });
    std::vector<GradientShard*> used;
    for (int k = 1; k < count; ++k) used.push_back(shards[size_t(k - 1)].get());
    GradientShard::reduce_into_leaves(used, num_threads());
}

}  // namespace seqgrad
