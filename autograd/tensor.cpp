#include "autograd/tensor.h"

#include <fmt/format.h>

#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace seqgrad {
namespace {
thread_local bool g_grad_enabled = true;
}  // namespace

bool grad_enabled() {
    return g_grad_enabled;
}
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) {
    g_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() {
    g_grad_enabled = previous_;
}

// ---- gradient shards (data parallelism) ------------------------------------------------------
namespace {
thread_local GradientShard* g_shard = nullptr;

// A shard's buffer for a large leaf lives in pages of its own (mmap), and the pages that a step
// never wrote are never materialised: untouched anonymous pages read as zero and cost no memory.
// That is what makes the shard of an embedding table cheap without the embedding op knowing about
// shards: a step's backward scatter-adds into the rows of the tokens it saw (a few hundred of
// 4000–6000 in the benchmark), so only their pages become resident, and after the reduce those
// pages are handed back to the kernel (MADV_DONTNEED: they read as zero again). A dense leaf
// (every page written every step) is zeroed with memset instead and keeps its pages, which costs
// no page faults. Which pages to visit is read from the page tables (mincore): that is exact only
// without swap (a written page could be swapped out and look untouched), so with swap configured
// every page is visited (an unwritten one reads as zeros, which costs no memory), and a visited
// page counts as written when it holds a value other than zero. Measured on config (c) with two
// threads (bench/train_throughput): the worker's shard holds ~32 MB instead of ~50 MB, for the
// same step time.
constexpr size_t kPagedShardBytes = size_t(256) << 10;  // smaller leaves: a pool buffer

size_t page_size() {
    static const size_t size = size_t(sysconf(_SC_PAGESIZE));
    return size;
}

bool system_has_swap() {
    static const bool has = [] {
        struct sysinfo info {};
        return sysinfo(&info) != 0 || info.totalswap > 0;  // unknown counts as "has swap"
    }();
    return has;
}

class ShardStorage {
  public:
    explicit ShardStorage(size_t count) : count_(count) {
        const size_t bytes = count * sizeof(real);
        if (bytes < kPagedShardBytes) {
            buffer_ = Buffer(count);
            std::memset(buffer_.data(), 0, bytes);
            data_ = buffer_.data();
            return;
        }
        mapped_bytes_ = (bytes + page_size() - 1) / page_size() * page_size();
        void* p = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        // 2 MB pages would make one written row cost 2 MB.
        madvise(p, mapped_bytes_, MADV_NOHUGEPAGE);
        data_ = static_cast<real*>(p);
    }
    ~ShardStorage() {
        if (mapped_bytes_) munmap(data_, mapped_bytes_);
    }
    ShardStorage(const ShardStorage&) = delete;
    ShardStorage& operator=(const ShardStorage&) = delete;

    real* data() const { return data_; }

    // grad += this, then this = 0.
    void add_into_and_clear(real* grad) {
        if (!mapped_bytes_) {
            for (size_t i = 0; i < count_; ++i) grad[i] += data_[i];
            std::memset(data_, 0, count_ * sizeof(real));
            return;
        }
        const size_t page = page_size(), pages = mapped_bytes_ / page;
        const size_t per_page = page / sizeof(real);
        resident_.assign(pages, 1);
        if (!system_has_swap() && mincore(data_, mapped_bytes_, resident_.data()) != 0)
            resident_.assign(pages, 1);  // cannot tell: visit every page
        // A page counts as written when it holds a value other than zero (so an unwritten page
        // that had to be visited, which reads as zeros, counts as untouched).
        size_t written = 0;
        for (size_t k = 0; k < pages; ++k) {
            if (!(resident_[k] & 1)) continue;
            const size_t begin = k * per_page, end = std::min(count_, begin + per_page);
            bool nonzero = false;
            for (size_t i = begin; i < end; ++i) {
                grad[i] += data_[i];
                nonzero |= data_[i] != 0;
            }
            resident_[k] = nonzero;
            written += nonzero;
        }
        if (2 * written < pages) {  // mostly untouched: give the written pages back
            madvise(data_, mapped_bytes_, MADV_DONTNEED);
        } else {
            for (size_t k = 0; k < pages; ++k)
                if (resident_[k]) std::memset(data_ + k * per_page, 0, page);
        }
    }

    // Memory the storage holds now (the resident pages of a mapped one).
    size_t resident_bytes() {
        if (!mapped_bytes_) return count_ * sizeof(real);
        const size_t pages = mapped_bytes_ / page_size();
        resident_.assign(pages, 0);
        if (mincore(data_, mapped_bytes_, resident_.data()) != 0) return mapped_bytes_;
        size_t n = 0;
        for (unsigned char r : resident_) n += r & 1;
        return n * page_size();
    }

  private:
    size_t count_ = 0;
    real* data_ = nullptr;
    size_t mapped_bytes_ = 0;  // 0: the storage is buffer_
    Buffer buffer_;
    std::vector<unsigned char> resident_;  // mincore's answer, one byte per page
};

}  // namespace

struct GradientShard::Entry {
    NodePtr leaf;  // kept alive while the shard holds a gradient for it
    std::unique_ptr<ShardStorage> gradient;
    bool dirty = false;  // written since the last reduce
};

GradientShard::GradientShard() = default;
GradientShard::~GradientShard() = default;

GradientShard::Scope::Scope(GradientShard& shard) : previous_(g_shard) {
    g_shard = &shard;
}
GradientShard::Scope::~Scope() {
    g_shard = previous_;
}

real* GradientShard::buffer(Node& leaf) {
    // A model has tens of parameters: a linear search beats hashing, and keeps the order of
    // first use, which is the same on every step.
    for (Entry& e : entries_)
        if (e.leaf.get() == &leaf) {
            e.dirty = true;
            return e.gradient->data();
        }
    Entry e;
    e.leaf = leaf.shared_from_this();
    e.gradient = std::make_unique<ShardStorage>(size_t(leaf.numel()));
    e.dirty = true;
    entries_.push_back(std::move(e));
    return entries_.back().gradient->data();
}

void GradientShard::reduce_into_leaves(size_t part, size_t parts) {
    GradientShard* installed = g_shard;  // the leaves' own .grad, even on a shard's thread
    g_shard = nullptr;
    int64_t total = 0;
    for (const Entry& e : entries_) total += e.leaf->numel();
    // entry i belongs to the part in which its first element falls
    const double per_part = double(total) / double(std::max<size_t>(parts, 1));
    int64_t offset = 0;
    for (Entry& e : entries_) {
        const size_t owner = std::min(parts - 1, size_t(double(offset) / per_part));
        offset += e.leaf->numel();
        if (owner != part || !e.dirty) continue;
        e.gradient->add_into_and_clear(e.leaf->grad_data());
        e.dirty = false;
    }
    g_shard = installed;
}

bool GradientShard::empty() const {
    for (const Entry& e : entries_)
        if (e.dirty) return false;
    return true;
}

int64_t GradientShard::resident_bytes() const {
    int64_t bytes = 0;
    for (const Entry& e : entries_) bytes += int64_t(e.gradient->resident_bytes());
    return bytes;
}

real* Node::grad_data() {
    if (is_leaf && g_shard) return g_shard->buffer(*this);
    if (grad.size() == 0) {
        grad = Buffer(numel());
        std::memset(grad.data(), 0, sizeof(real) * numel());
    }
    return grad.data();
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
    return node().grad_data();
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
        throw Error(fmt::format(
            "backward: the graph through '{}' (shape {}) was already freed by an earlier "
            "backward; run the forward pass again to build a new graph",
            node.op ? node.op : "?", node.shape.str()));
}

void Tensor::backward() {
    if (numel() != 1)
        throw Error(
            fmt::format("backward: tensor of shape {} is not a scalar; pass a gradient "
                        "of the same shape",
                        shape().str()));
    backward(Tensor::full(shape(), real(1)));
}

void Tensor::backward(const Tensor& grad_output) {
    Node& root = node();
    if (!root.requires_grad)
        throw Error(
            "backward: tensor does not require grad (no input required grad, or it was "
            "computed under NoGradGuard)");
    if (grad_output.shape() != root.shape)
        throw Error(fmt::format("backward: gradient of shape {} for a tensor of shape {}",
                                grad_output.shape().str(), root.shape.str()));
    throw_if_freed(root);

    // Order the graph: iterative depth-first post-order (a decoder unrolled over 50 steps makes
    // graphs thousands of ops deep, too deep for recursion). Only nodes that require grad.
    // `order` holds owning pointers: freeing a node's inputs below must not destroy an input
    // whose own backward has not run yet.
    std::vector<NodePtr> order;
    std::unordered_set<Node*> visited;
    std::vector<std::pair<NodePtr, size_t>> stack;  // node, index of next parent to visit
    stack.emplace_back(node_, 0);
    visited.insert(&root);
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

    real* seed = root.grad_data();
    for (int64_t i = 0; i < root.numel(); ++i) seed[i] += grad_output.data()[i];

    // Reverse post-order: every node runs after all the nodes that use it.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node* node = it->get();
        if (node->is_leaf) continue;
        if (node->backward && node->grad.size() > 0) node->backward(*node);
        // Free the graph behind this node: its inputs, its rule, what the rule saved, and (unless
        // asked to keep it) its gradient. Its data stays valid.
        node->parents.clear();
        node->backward = nullptr;
        node->saved.release();
        node->saved_ints.clear();
        node->saved_ints.shrink_to_fit();
        node->graph_freed = true;
        if (!node->retains_grad) node->grad.release();
    }
}

}  // namespace seqgrad
