// Communicator: what data-parallel training needs from the processes it runs in.
//
// One process is one rank. Training over N ranks gives every rank the same parameters and the
// same share rule of each global batch; after its backward each rank holds the gradient of its
// own rows, and `sum` makes every rank hold the sum of all N, so all ranks take the same
// optimizer step. The trainer is written against this interface only; `single_process()` is
// the implementation for one rank (every call is a no-op), `mpi_communicator()` the one for
// `mpirun` (only in a build with -DSEQGRAD_MPI=ON).
//
// The sum is done in a fixed order, rank 0 first: s = ((v_0 + v_1) + v_2) + ... + v_{N-1},
// element by element, in the element's own precision. Floating-point addition is not
// associative, and MPI's own MPI_Allreduce may add the ranks' values in any order (and
// implementations have shipped algorithms whose order differs between ranks), so its result can
// change with the implementation, the rank count and the message size. A fixed order gives
// every rank the same bits, and gives N ranks the same bits as N in-process shards added in
// shard order (models/training/data_parallel.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace seqgrad {

class Communicator {
  public:
    virtual ~Communicator() = default;

    virtual int rank() const = 0;
    virtual int size() const = 0;
    // "single process", or "MPI (Open MPI v4.1.4), 2 ranks" — for the progress line and errors.
    virtual std::string description() const = 0;

    // values[i] <- Σ_r values_r[i] over all ranks, added in rank order, the same on every rank.
    // Every rank must call it with the same count; counts beyond MPI's int limit are chunked.
    virtual void sum(float* values, size_t count) = 0;
    virtual void sum(double* values, size_t count) = 0;
    // Integers add exactly in any order.
    virtual void sum(int64_t* values, size_t count) = 0;

    // Copies `bytes` bytes at `data` from rank `root` to every other rank.
    virtual void broadcast(void* data, size_t bytes, int root) = 0;

    // Every rank's value, indexed by rank (e.g. a parameter fingerprint, to check agreement).
    virtual std::vector<uint64_t> gather_all(uint64_t value) = 0;

    virtual void barrier() = 0;

    // Stops every rank at once (after one rank hit an error the others would wait forever for).
    [[noreturn]] virtual void abort(int exit_code) = 0;

    bool is_root() const { return rank() == 0; }
};

// The one-rank communicator: sum, broadcast and barrier do nothing.
std::unique_ptr<Communicator> single_process();

// Whether this build has MPI (-DSEQGRAD_MPI=ON).
bool mpi_available();

// The MPI communicator over MPI_COMM_WORLD; initialises MPI on first use and finalises it at
// exit. `timeout_seconds` bounds every collective: a rank that died or hangs makes the others
// stop with an error naming the operation instead of waiting forever (0 = wait forever).
// Throws in a build without MPI.
std::unique_ptr<Communicator> mpi_communicator(double timeout_seconds = 600);
// The same with every transfer cut into chunks of at most `max_chunk_elements` (MPI counts are
// `int`; tests use a small chunk to exercise the cutting).
std::unique_ptr<Communicator> mpi_communicator_with_chunk(double timeout_seconds,
                                                          size_t max_chunk_elements);

// Whether this process was started by mpirun / mpiexec (their environment variables), so that
// `seqgrad train` can pick the MPI communicator without a flag.
bool launched_by_mpi();

// The fixed-order sum's plan, shared by the MPI implementation and its tests: the count is cut
// into `parts` contiguous segments of nearly equal size (the first count % parts one longer),
// segment r owned (summed) by rank r.
struct Segment {
    size_t begin = 0, count = 0;
};
std::vector<Segment> split_into_segments(size_t count, int parts);

// 64-bit FNV-1a of the bytes: equal parameters give equal fingerprints on every rank.
uint64_t fingerprint(const void* data, size_t bytes, uint64_t seed = 14695981039346656037ull);

}  // namespace seqgrad
