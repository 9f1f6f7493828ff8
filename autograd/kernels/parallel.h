// parallel: seqgrad's own threads, for loops over independent ranges and for DataParallel's shards.
//
// OpenBLAS keeps its own threads for large products. These are the others: the calling thread
// plus num_threads() - 1 workers, which wait on a condition variable between tasks. They block,
// never spin: on a 2-core machine a spinning idle thread takes the core the busy one needs.
//
// Who uses them: the optimizer's passes over all parameters (zero_grad, the gradient norm, Adam),
// which are memory-bound and run at the bandwidth of one core otherwise; DataParallel, which runs
// one shard of a batch per thread; decoding's small products, split by output column.
//
// A task that itself calls parallel_run or parallel_for_arrays runs them serially on its own
// thread, so nesting is safe (and a shard's loops do not compete with the other shards). Two
// unrelated threads calling at once are safe too: the second runs its tasks serially.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace seqgrad {

// Threads seqgrad's loops may use, the caller included (>= 1; 1 = everything on the caller).
// Starts or stops workers; not to be called from inside a task.
void set_num_threads(int threads);
int num_threads();

// Runs task(k) for k = 0 .. count - 1 and returns when all are done: k = 0 on the calling thread,
// the others on workers (count > num_threads(), a nested call or a busy pool: the rest run on the
// caller, in order). If tasks throw, the exception of the lowest k is rethrown after all stopped.
void parallel_run(int count, const std::function<void(int)>& task);

// fn(i, begin, end) over every element of arrays i = 0 .. sizes.size() - 1 (array i has sizes[i]
// elements) in one parallel_run: an array of >= grain elements is cut into num_threads() ranges
// (cuts at multiples of `align`), a smaller one goes whole to one thread, round robin. For the
// passes over all parameters: one wake-up of the workers per pass, not one per parameter.
void parallel_for_arrays(const std::vector<int64_t>& sizes, int64_t grain,
                         const std::function<void(size_t, int64_t, int64_t)>& fn,
                         int64_t align = 64);

}  // namespace seqgrad
