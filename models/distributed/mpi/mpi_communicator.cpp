// The Communicator over MPI_COMM_WORLD (built only with -DSEQGRAD_MPI=ON).
//
// sum(): a reduce-scatter then an all-gather, like a ring allreduce, but with the order of the
// additions fixed. The vector is cut into N segments; rank r receives segment r of every rank
// (MPI_Alltoallv), adds the N copies in rank order, ((v_0 + v_1) + v_2) + ..., and every rank then
// receives every summed segment (MPI_Allgatherv). Each rank sends and receives 2 (N-1)/N of the
// vector, as in a ring, and each element is added by exactly one rank, so every rank ends with the
// same bits. Counts beyond what an MPI `int` holds are cut into chunks.
//
// Every collective runs under a watchdog: a rank that died or hangs makes the others print which
// operation timed out and exit, and mpirun then stops the whole job, instead of waiting forever.
// (The collectives are the blocking ones: Open MPI's non-blocking collectives progress only
// inside MPI calls and took 2-4x as long for a 21 MB sum here.)
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "seqgrad/models/distributed/communicator.h"

namespace seqgrad {
namespace {

void check(int code, const char* operation) {
    if (code == MPI_SUCCESS) return;
    char message[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, message, &length);
    throw std::runtime_error(std::string("MPI ") + operation +
                             " failed: " + std::string(message, size_t(length)));
}

void initialise_once() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) return;
    int provided = 0;
    // Only the main thread calls MPI; the shards' worker threads never do.
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    std::atexit([] {
        int finalised = 0;
        MPI_Finalized(&finalised);
        if (!finalised) MPI_Finalize();
    });
}

template <typename T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() {
    return MPI_FLOAT;
}
template <>
MPI_Datatype mpi_type<double>() {
    return MPI_DOUBLE;
}

// Exits the process when an armed operation outlives its deadline. Exiting (rather than calling
// MPI_Abort, which only the main thread may call under MPI_THREAD_FUNNELED) is enough: mpirun
// stops every other rank when one exits without finalising.
class Watchdog {
  public:
    Watchdog(int rank, int size, double timeout_seconds)
        : rank_(rank), size_(size), timeout_(timeout_seconds) {
        if (timeout_ > 0) thread_ = std::thread([this] { watch(); });
    }
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        if (thread_.joinable()) thread_.join();
    }
    void arm(const char* operation) {
        if (timeout_ <= 0) return;
        std::lock_guard<std::mutex> lock(mutex_);
        operation_ = operation;
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(timeout_));
        wake_.notify_one();
    }
    void disarm() {
        if (timeout_ <= 0) return;
        std::lock_guard<std::mutex> lock(mutex_);
        operation_ = nullptr;
    }

  private:
    void watch() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stop_) {
            if (!operation_) {
                wake_.wait(lock);
                continue;
            }
            if (std::chrono::steady_clock::now() < deadline_) {
                wake_.wait_until(lock, deadline_);
                continue;
            }
            std::fprintf(stderr,
                         "seqgrad: rank %d of %d: %s did not complete within %g s: another rank "
                         "has died or hangs; stopping every rank\n",
                         rank_, size_, operation_, timeout_);
            std::fflush(stderr);
            std::_Exit(3);
        }
    }
    int rank_, size_;
    double timeout_;
    std::mutex mutex_;
    std::condition_variable wake_;
    const char* operation_ = nullptr;
    std::chrono::steady_clock::time_point deadline_;
    bool stop_ = false;
    std::thread thread_;
};

class MpiCommunicator final : public Communicator {
  public:
    MpiCommunicator(double timeout_seconds, size_t max_chunk)
        : timeout_seconds_(timeout_seconds), max_chunk_(max_chunk) {
        initialise_once();
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        watchdog_ = std::make_unique<Watchdog>(rank_, size_, timeout_seconds_);
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int length = 0;
        MPI_Get_library_version(version, &length);
        library_ = std::string(version, size_t(length));
        library_ = library_.substr(0, library_.find_first_of(",\n"));
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string description() const override {
        return "MPI (" + library_ + "), " + std::to_string(size_) + " ranks";
    }

    void sum(float* values, size_t count) override { ordered_sum(values, count); }
    void sum(double* values, size_t count) override { ordered_sum(values, count); }

    void sum(int64_t* values, size_t count) override {
        for (size_t done = 0; done < count;) {
            const int n = int(std::min(count - done, max_chunk_));
            guarded("the sum of integers (MPI_Allreduce)", "MPI_Allreduce", [&] {
                return MPI_Allreduce(MPI_IN_PLACE, values + done, n, MPI_INT64_T, MPI_SUM,
                                     MPI_COMM_WORLD);
            });
            done += size_t(n);
        }
    }

    void broadcast(void* data, size_t bytes, int root) override {
        auto* p = static_cast<char*>(data);
        for (size_t done = 0; done < bytes;) {
            const int n = int(std::min(bytes - done, max_chunk_));
            guarded("a broadcast (MPI_Bcast)", "MPI_Bcast",
                    [&] { return MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD); });
            done += size_t(n);
        }
    }

    std::vector<uint64_t> gather_all(uint64_t value) override {
        std::vector<uint64_t> all(size_t(size_), 0);
        guarded("gathering a value from every rank (MPI_Allgather)", "MPI_Allgather", [&] {
            return MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T,
                                 MPI_COMM_WORLD);
        });
        return all;
    }

    void barrier() override {
        guarded("a barrier (MPI_Barrier)", "MPI_Barrier",
                [&] { return MPI_Barrier(MPI_COMM_WORLD); });
    }

    [[noreturn]] void abort(int exit_code) override {
        std::fflush(stdout);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, exit_code);
        std::exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
    }

  private:
    template <typename T>
    void ordered_sum(T* values, size_t count) {
        if (size_ == 1) return;
        for (size_t done = 0; done < count;) {
            const size_t n = std::min(count - done, max_chunk_);
            ordered_sum_chunk(values + done, n);
            done += n;
        }
    }

    // One chunk (n <= INT_MAX): reduce-scatter in rank order, then all-gather.
    template <typename T>
    void ordered_sum_chunk(T* values, size_t n) {
        const std::vector<Segment> segments = split_into_segments(n, size_);
        const size_t mine = segments[size_t(rank_)].count;
        const auto N = static_cast<size_t>(size_);
        std::vector<int> send_counts(N), send_displs(N), receive_counts(N, int(mine)),
            receive_displs(N);
        for (int r = 0; r < size_; ++r) {
            send_counts[size_t(r)] = int(segments[size_t(r)].count);
            send_displs[size_t(r)] = int(segments[size_t(r)].begin);
            receive_displs[size_t(r)] = int(size_t(r) * mine);
        }
        std::vector<T>& copies = scratch(values);
        copies.resize(size_t(size_) * mine);
        guarded("the sum's exchange of segments (MPI_Alltoallv)", "MPI_Alltoallv", [&] {
            return MPI_Alltoallv(values, send_counts.data(), send_displs.data(), mpi_type<T>(),
                                 copies.data(), receive_counts.data(), receive_displs.data(),
                                 mpi_type<T>(), MPI_COMM_WORLD);
        });

        // s = ((v_0 + v_1) + v_2) + ...: rank 0's copy first, whichever rank adds.
        T* out = values + segments[size_t(rank_)].begin;
        for (size_t i = 0; i < mine; ++i) out[i] = copies[i];
        for (int r = 1; r < size_; ++r) {
            const T* v = copies.data() + size_t(r) * mine;
            for (size_t i = 0; i < mine; ++i) out[i] += v[i];
        }

        guarded("the sum's gathering of segments (MPI_Allgatherv)", "MPI_Allgatherv", [&] {
            return MPI_Allgatherv(MPI_IN_PLACE, 0, mpi_type<T>(), values, send_counts.data(),
                                  send_displs.data(), mpi_type<T>(), MPI_COMM_WORLD);
        });
    }

    std::vector<float>& scratch(float*) { return scratch_float_; }
    std::vector<double>& scratch(double*) { return scratch_double_; }

    // Runs one blocking collective under the watchdog.
    template <typename Call>
    void guarded(const char* operation, const char* mpi_name, Call call) {
        watchdog_->arm(operation);
        const int code = call();
        watchdog_->disarm();
        check(code, mpi_name);
    }

    int rank_ = 0, size_ = 1;
    std::string library_;
    double timeout_seconds_;
    size_t max_chunk_;
    std::unique_ptr<Watchdog> watchdog_;
    std::vector<float> scratch_float_;
    std::vector<double> scratch_double_;
};

}  // namespace

bool mpi_available() {
    return true;
}

std::unique_ptr<Communicator> mpi_communicator(double timeout_seconds) {
    return mpi_communicator_with_chunk(timeout_seconds, size_t(INT_MAX));
}

std::unique_ptr<Communicator> mpi_communicator_with_chunk(double timeout_seconds,
                                                          size_t max_chunk_elements) {
    if (max_chunk_elements == 0 || max_chunk_elements > size_t(INT_MAX))
        throw std::invalid_argument("mpi_communicator: the chunk must hold 1 to INT_MAX elements");
    return std::make_unique<MpiCommunicator>(timeout_seconds, max_chunk_elements);
}

}  // namespace seqgrad
