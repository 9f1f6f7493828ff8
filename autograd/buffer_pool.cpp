#include "autograd/buffer_pool.h"

#include <cstdlib>
#include <new>
#include <vector>

namespace seqgrad {
namespace {

constexpr size_t kAlignment = 64;  // one cache line, and room for AVX-512 loads
constexpr int kBuckets = 4 * 64;   // 4 sub-buckets for every power of two
constexpr size_t kMaxCachedBytes = size_t(1) << 31;

// Bucket b holds capacities 2^(b/4) * (1 + (b%4)/4) elements; returns the smallest bucket that
// fits `size`, and its capacity.
int bucket_for(size_t size, size_t* capacity) {
    if (size <= 16) {
        *capacity = 16;
        return 16;  // 2^4 * 1
    }
    int exponent = 63 - __builtin_clzll(size);  // 2^exponent <= size < 2^(exponent+1)
    size_t base = size_t(1) << exponent;
    for (int quarter = 0; quarter < 4; ++quarter) {
        size_t cap = base + quarter * (base / 4);
        if (cap >= size) {
            *capacity = cap;
            return exponent * 4 + quarter;
        }
    }
    *capacity = base * 2;
    return (exponent + 1) * 4;
}

struct Pool {
    std::vector<real*> free_lists[kBuckets];
    BufferPoolStats stats;
    bool enabled = true;

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
    auto& list = p.free_lists[bucket];
    if (p.enabled && !list.empty()) {
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
    if (p.enabled && p.stats.cached_bytes + int64_t(bytes) <= int64_t(kMaxCachedBytes)) {
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
    pool().enabled = enabled;
    if (!enabled) pool().clear();
}

}  // namespace seqgrad
