// GradientShard (declared in autograd/tensor.h): per-thread gradient buffers of the leaves, for
// data-parallel steps (models/data_parallel.h).
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "autograd/tensor.h"

namespace seqgrad {

// ---- gradient shards (data parallelism) ------------------------------------------------------
namespace {
thread_local GradientShard* g_shard = nullptr;  // installed on this thread by a Scope

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

    // grad += this, then this = 0: in one pass, each value cleared as it is read.
    void add_into_and_clear(real* grad) {
        if (!mapped_bytes_) {
            for (size_t i = 0; i < count_; ++i) {
                grad[i] += data_[i];
                data_[i] = 0;
            }
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
            // cleared now, while the page is in L1 (only a written page: clearing an unwritten
            // one would make it resident)
            if (nonzero) std::memset(data_ + begin, 0, sizeof(real) * (end - begin));
            written += nonzero;
        }
        // mostly untouched (an embedding's rows): the written pages are handed back too
        if (2 * written < pages) madvise(data_, mapped_bytes_, MADV_DONTNEED);
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

void GradientShard::reduce_into_leaves(const std::vector<GradientShard*>& shards, size_t part,
                                       size_t parts) {
    GradientShard* installed = g_shard;  // the leaves' own .grad, even on a shard's thread
    g_shard = nullptr;
    // Every leaf of any shard, in order of first appearance. Cutting each shard's own list into
    // parts (as this once did) could give one leaf to two threads: shards that met their leaves
    // in different orders would cut at different leaves, and two threads added into one .grad
    // at once (seen as a rare wrong sum with 8 shards on 2 cores).
    std::vector<Node*> leaves;
    int64_t total = 0;
    for (const GradientShard* shard : shards)
        for (const Entry& e : shard->entries_)
            if (std::find(leaves.begin(), leaves.end(), e.leaf.get()) == leaves.end()) {
                leaves.push_back(e.leaf.get());
                total += e.leaf->numel();
            }
    // leaf i belongs to the part in which its first element falls
    const double per_part = double(total) / double(std::max<size_t>(parts, 1));
    int64_t offset = 0;
    for (Node* leaf : leaves) {
        const size_t owner = std::min(parts - 1, size_t(double(offset) / per_part));
        offset += leaf->numel();
        if (owner != part) continue;
        for (GradientShard* shard : shards)
            for (Entry& e : shard->entries_)
                if (e.leaf.get() == leaf && e.dirty) {
                    e.gradient->add_into_and_clear(leaf->grad_data());
                    e.dirty = false;
                }
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

GradientShard* GradientShard::installed() {
    return g_shard;
}

}  // namespace seqgrad
