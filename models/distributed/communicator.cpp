#include "seqgrad/models/distributed/communicator.h"

#include <cstdlib>
#include <stdexcept>

namespace seqgrad {
namespace {

class SingleProcess final : public Communicator {
  public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::string description() const override { return "single process"; }
    void sum(float*, size_t) override {}
    void sum(double*, size_t) override {}
    void sum(int64_t*, size_t) override {}
    void broadcast(void*, size_t, int) override {}
    std::vector<uint64_t> gather_all(uint64_t value) override { return {value}; }
    void barrier() override {}
    [[noreturn]] void abort(int exit_code) override { std::exit(exit_code); }
};

}  // namespace

std::unique_ptr<Communicator> single_process() {
    return std::make_unique<SingleProcess>();
}

#ifndef SEQGRAD_MPI
bool mpi_available() {
    return false;
}
std::unique_ptr<Communicator> mpi_communicator_with_chunk(double, size_t) {
    throw std::runtime_error(
        "this seqgrad was built without MPI: rebuild with cmake -DSEQGRAD_MPI=ON "
        "(Debian: apt-get install libopenmpi-dev openmpi-bin)");
}
std::unique_ptr<Communicator> mpi_communicator(double timeout_seconds) {
    return mpi_communicator_with_chunk(timeout_seconds, 1);
}
#endif

bool launched_by_mpi() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
        if (std::getenv(name)) return true;
    return false;
}

std::vector<Segment> split_into_segments(size_t count, int parts) {
    if (parts < 1) throw std::invalid_argument("split_into_segments: parts must be >= 1");
    std::vector<Segment> segments(static_cast<size_t>(parts));
    const size_t base = count / size_t(parts), longer = count % size_t(parts);
    size_t begin = 0;
    for (size_t r = 0; r < segments.size(); ++r) {
        segments[r] = {begin, base + (r < longer ? 1 : 0)};
        begin += segments[r].count;
    }
    return segments;
}

uint64_t fingerprint(const void* data, size_t bytes, uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = seed;
    for (size_t i = 0; i < bytes; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace seqgrad
