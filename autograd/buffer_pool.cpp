#include "seqgrad/autograd/buffer_pool.h"

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

namespace seqgrad {
namespace {

constexpr size_t kAlignment = 64;  // one cache line, and room for AVX-512 loads
constexpr int kBuckets = 64;       // one per power of two
constexpr size_t kMaxCachedBytes = size_t(1) << 31;

// Bucket b holds capacity 2^b elements (at least 16); returns the smallest bucket that fits
// `size`, and its capacity.
//
// Why whole powers of two, when up to half of a buffer may go unused: what a buffer costs the
// process is the pages it has touched (resident memory), not its capacity. A buffer that serves
// requests of 0.6 and 0.9 × its capacity costs the larger one; the untouched tail is only address
// space. What does cost memory is a free list per size class: the same tensor changes shape from
// batch to batch (the logits are [tokens, V], and the tokens vary), and every class it falls into
// ends up keeping its own copy (docs/performance.md, "the buffer pool", has the measurement).
int bucket_for(size_t size, size_t* capacity) {
    if (size <= 16) {
        *capacity = 16;
        return 4;
    }
    const int exponent = 64 - __builtin_clzll(size - 1);  // 2^(exponent-1) < size <= 2^exponent
    *capacity = size_t(1) << exponent;
    return exponent;
}

// Whether the pools reuse buffers (buffer_pool_set_enabled).
std::atomic<bool> g_reuse{true};
bool reuse() {
    return g_reuse.load(std::memory_order_relaxed);
}

struct Pool {
    std::vector<real*> free_lists[kBuckets];
    BufferPoolStats stats;

    ~Pool() { clear(); }
    void clear() {
        for (auto& list : free_lists) {
            for (real* p : list) std::free(p);
            list.clear();
        }
        stats.cached_buffers = 0;
        stats.cached_bytes = 0;
    }
};

Pool& pool() {
    thread_local Pool instance;
    return instance;
}

real* system_alloc(size_t capacity) {
    size_t bytes = (capacity * sizeof(real) + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (!p) throw std::bad_alloc();
    return static_cast<real*>(p);
}

}  // namespace

Buffer::Buffer(size_t size) : size_(size) {
    if (size == 0) return;
    Pool& p = pool();
    int bucket = bucket_for(size, &capacity_);
    // Nothing cached of this size: a cached buffer of up to 8 times the capacity serves as well
    // (only the pages it touches cost memory, and those are already resident), and is cheaper
    // than a system allocation while it waits idle (docs/performance.md, "the buffer pool", has
    // what up to three classes larger saved).
    for (int larger = bucket + 1;
         larger <= bucket + 3 && larger < kBuckets && p.free_lists[bucket].empty(); ++larger)
        if (!p.free_lists[larger].empty()) {
            capacity_ <<= larger - bucket;
            bucket = larger;
        }
    auto& list = p.free_lists[bucket];
    if (reuse() && !list.empty()) {
        data_ = list.back();
        list.pop_back();
        p.stats.cached_buffers--;
        p.stats.cached_bytes -= capacity_ * sizeof(real);
        p.stats.pool_hits++;
    } else {
        data_ = system_alloc(capacity_);
        p.stats.system_allocations++;
    }
    p.stats.live_buffers++;
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        capacity_ = other.capacity_;
        other.data_ = nullptr;
        other.size_ = other.capacity_ = 0;
    }
    return *this;
}

void Buffer::release() {
    if (!data_) return;
    Pool& p = pool();
    p.stats.live_buffers--;
    size_t bytes = capacity_ * sizeof(real);
    if (reuse() && p.stats.cached_bytes + int64_t(bytes) <= int64_t(kMaxCachedBytes)) {
        size_t cap;
        p.free_lists[bucket_for(capacity_, &cap)].push_back(data_);
        p.stats.cached_buffers++;
        p.stats.cached_bytes += bytes;
    } else {
        std::free(data_);
    }
    data_ = nullptr;
    size_ = capacity_ = 0;
}

BufferPoolStats buffer_pool_stats() {
    return pool().stats;
}
void buffer_pool_clear() {
    pool().clear();
}
void buffer_pool_set_enabled(bool enabled) {
    g_reuse.store(enabled, std::memory_order_relaxed);
    if (!enabled) pool().clear();
}

}  // namespace seqgrad
