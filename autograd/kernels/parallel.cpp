#include "seqgrad/autograd/kernels/parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "seqgrad/autograd/error.h"

namespace seqgrad {
namespace {

thread_local bool in_task = false;  // this thread is running a task: nested calls go serial

// Raised for the duration of a task: also by exceptions.
struct InTask {
    bool was = in_task;
    InTask() { in_task = true; }
    ~InTask() { in_task = was; }
};

// Workers 1 .. n-1 wait for a new generation; a run hands out tasks 1 .. count-1 to the workers
// of those numbers and waits until `pending` falls to 0.
class ThreadPool {
  public:
    ~ThreadPool() { resize(1); }

    int threads() const { return int(workers_.size()) + 1; }

    void resize(int threads) {
        std::lock_guard<std::mutex> busy(run_mutex_);  // waits for a run of another thread
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : workers_) t.join();
        workers_.clear();
        stopping_ = false;
        for (int k = 1; k < threads; ++k)
            workers_.emplace_back([this, k, seen = generation_] { loop(k, seen); });
    }

    // false if another thread is running tasks on the pool (the caller then runs them itself)
    bool run(int count, const std::function<void(int)>& task) {
        std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
        if (!busy) return false;
        const int used = std::min(count, threads());
        errors_.assign(size_t(count), nullptr);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            task_ = &task;
            count_ = used;
            pending_ = used - 1;
            ++generation_;
        }
        wake_.notify_all();
        {
            InTask scope;
            // k = 0, and the tasks beyond the threads, on the caller
            for (int k = 0; k < count; k = k == 0 ? used : k + 1) {
                try {
                    task(k);
                } catch (...) {
                    errors_[size_t(k)] = std::current_exception();
                }
            }
        }
        {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [&] { return pending_ == 0; });
            task_ = nullptr;
        }
        for (const std::exception_ptr& e : errors_)
            if (e) std::rethrow_exception(e);
        return true;
    }

  private:
    // seen: the last generation before this worker started (only new runs are its business)
    void loop(int k, uint64_t seen) {
        for (;;) {
            const std::function<void(int)>* task;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
                if (stopping_) return;
                seen = generation_;
                if (k >= count_) continue;  // this run needs fewer threads
                task = task_;
            }
            {
                InTask scope;
                try {
                    (*task)(k);
                } catch (...) {
                    errors_[size_t(k)] = std::current_exception();
                }
            }
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0) done_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex run_mutex_;  // one run at a time
    std::mutex mutex_;      // guards what follows
    std::condition_variable wake_, done_;
    bool stopping_ = false;
    uint64_t generation_ = 0;
    const std::function<void(int)>* task_ = nullptr;
    int count_ = 0, pending_ = 0;
    std::vector<std::exception_ptr> errors_;
};

ThreadPool& thread_pool() {
    static ThreadPool instance;
    return instance;
}

void run_serially(int count, const std::function<void(int)>& task) {
    InTask scope;
    std::exception_ptr first;
    for (int k = 0; k < count; ++k) {
        try {
            task(k);
        } catch (...) {
            if (!first) first = std::current_exception();
        }
    }
    if (first) std::rethrow_exception(first);
}

}  // namespace

void set_num_threads(int threads) {
    if (threads < 1)
        throw Error(fmt::format("set_num_threads: threads must be >= 1, got {}", threads));
    if (in_task) throw Error("set_num_threads: called from inside a parallel task");
    if (threads != thread_pool().threads()) thread_pool().resize(threads);
}

int num_threads() {
    return thread_pool().threads();
}

void parallel_run(int count, const std::function<void(int)>& task) {
    if (count <= 0) return;
    if (count == 1 || in_task || thread_pool().threads() == 1 || !thread_pool().run(count, task))
        run_serially(count, task);
}

void parallel_for_arrays(const std::vector<int64_t>& sizes, int64_t grain,
                         const std::function<void(size_t, int64_t, int64_t)>& fn, int64_t align) {
    const int threads = in_task ? 1 : num_threads();
    align = std::max<int64_t>(align, 1);
    auto cut = [&](int64_t n, int k) {  // start of range k of an array of n elements
        return k == threads ? n : (n * k / threads) / align * align;
    };
    auto part = [&](int k) {
        size_t small = 0;  // arrays below the grain, dealt round robin
        for (size_t i = 0; i < sizes.size(); ++i) {
            const int64_t n = sizes[i];
            if (n <= 0) continue;
            if (n < grain || threads == 1) {
                if (int(small++ % size_t(threads)) == k) fn(i, 0, n);
                continue;
            }
            const int64_t begin = cut(n, k), end = cut(n, k + 1);
            if (begin < end) fn(i, begin, end);
        }
    };
    if (threads == 1)
        part(0);
    else
        parallel_run(threads, part);
}

}  // namespace seqgrad
