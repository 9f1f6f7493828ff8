// Buffer: an owned array of `real`, taken from and returned to a size-bucketed free list.
//
// Training a recurrent model allocates the same shapes at every step. Instead of going back to
// malloc for each op result, freed buffers wait in a per-thread pool, bucketed by capacity
// (sizes are rounded up to a power of two: the untouched tail of a buffer costs address space,
// not memory; see bucket_for), and the next request of the same bucket reuses one.
// bench/buffer_pool measures what this saves.
#pragma once

#include <cstddef>
#include <cstdint>

#include "seqgrad/autograd/real.h"

namespace seqgrad {

class Buffer {
  public:
    Buffer() = default;
    explicit Buffer(size_t size);  // uninitialised contents
    ~Buffer() { release(); }
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    real* data() const { return data_; }
    size_t size() const { return size_; }
    void release();  // back to the pool; size() becomes 0

  private:
    real* data_ = nullptr;
    size_t size_ = 0;
    size_t capacity_ = 0;
};

struct BufferPoolStats {
    int64_t live_buffers = 0;    // handed out and not yet returned
    int64_t cached_buffers = 0;  // waiting in the free lists
    int64_t cached_bytes = 0;
    int64_t system_allocations = 0;  // calls that had to go to the system allocator
    int64_t pool_hits = 0;           // requests served from a free list
};

// Statistics of the calling thread's pool.
BufferPoolStats buffer_pool_stats();
// Frees every cached buffer of the calling thread's pool.
void buffer_pool_clear();
// Turns reuse on or off, for the pools of every thread (on until told otherwise; off: every
// request goes to the system allocator, and the calling thread's cached buffers are freed). The
// pool reads no setting of its own: whoever configures the process gives it this one — the
// switches, when they are read (SEQGRAD_DISABLE=buffer_pool, autograd/kernels/switches.h), and
// the benchmark that measures what the pool saves.
void buffer_pool_set_enabled(bool enabled);

}  // namespace seqgrad
