// The MPI communicator's fixed-order sum, run under mpiexec with 2 and 3 ranks
// (tests/CMakeLists.txt). Every rank runs every test case in the same order, so the collectives
// match up.
//
// The data exposes summation order: values of magnitudes 1 .. 1e8 with both signs, so that in
// float ((v_0 + v_1) + v_2) and ((v_2 + v_1) + v_0) differ in many elements. Each rank can rebuild
// every rank's values from the seeds, which gives the expected bits without communication.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/models/distributed/communicator.h"

using namespace seqgrad;

namespace {

Communicator& world() {
    static std::unique_ptr<Communicator> comm = mpi_communicator(60);
    return *comm;
}

template <typename T>
std::vector<T> rank_values(int rank, size_t count) {
    Rng rng(1000 + uint64_t(rank));
    std::vector<T> v(count);
    for (auto& x : v) x = T(rng.uniform(-1, 1) * std::pow(10.0, double(rng.below(9))));
    return v;
}

// The sum in rank order, computed locally in T: what every rank must hold afterwards.
template <typename T>
std::vector<T> expected_sum(int ranks, size_t count) {
    std::vector<T> s = rank_values<T>(0, count);
    for (int r = 1; r < ranks; ++r) {
        const std::vector<T> v = rank_values<T>(r, count);
        for (size_t i = 0; i < count; ++i) s[i] += v[i];
    }
    return s;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename T>
void check_ordered_sum(Communicator& comm, size_t count) {
    const int N = comm.size();
    std::vector<T> values = rank_values<T>(comm.rank(), count);
    comm.sum(values.data(), values.size());
    CHECK(same_bits(values, expected_sum<T>(N, count)));

    // Against the sum in double precision: within the rounding of N - 1 additions.
    std::vector<std::vector<T>> all;
    for (int r = 0; r < N; ++r) all.push_back(rank_values<T>(r, count));
    for (size_t i = 0; i < count; ++i) {
        double exact = 0, magnitude = 0;
        for (int r = 0; r < N; ++r) {
            const double v = double(all[size_t(r)][i]);
            exact += v;
            magnitude += std::fabs(v);
        }
        const double bound = double(N) * double(std::numeric_limits<T>::epsilon()) * magnitude;
        if (std::fabs(double(values[i]) - exact) > bound) {
            FAIL("element " << i << ": " << double(values[i]) << " vs exact " << exact);
            break;
        }
    }
    // Every rank holds the same bits.
    const std::vector<uint64_t> prints =
        comm.gather_all(fingerprint(values.data(), values.size() * sizeof(T)));
    for (uint64_t p : prints) CHECK(p == prints[0]);
}

}  // namespace

TEST_CASE("MPI runs with more than one rank") {
    REQUIRE(mpi_available());
    CHECK(world().size() >= 2);
    CHECK(world().description().find("ranks") != std::string::npos);
}

TEST_CASE("the data exposes summation order (with 3 or more ranks)") {
    const int N = world().size();
    if (N < 3) return;  // two summands commute: a + b == b + a
    const size_t count = 4096;
    std::vector<float> reversed = rank_values<float>(N - 1, count);
    for (int r = N - 2; r >= 0; --r) {
        const std::vector<float> v = rank_values<float>(r, count);
        for (size_t i = 0; i < count; ++i) reversed[i] += v[i];
    }
    CHECK_FALSE(same_bits(reversed, expected_sum<float>(N, count)));
}

TEST_CASE("sum adds in rank order, in float and in double, for counts that do not split evenly") {
    for (size_t count : {size_t(1), size_t(2), size_t(7), size_t(4099)}) {
        CAPTURE(count);
        check_ordered_sum<float>(world(), count);
        check_ordered_sum<double>(world(), count);
    }
}

TEST_CASE("transfers cut into chunks give the same bits") {
    auto chunked = mpi_communicator_with_chunk(60, 7);
    check_ordered_sum<float>(*chunked, 1003);
    std::vector<int64_t> tokens(29, int64_t(world().rank() + 1) << 33);
    chunked->sum(tokens.data(), tokens.size());
    const int64_t N = world().size();
    for (int64_t t : tokens) CHECK(t == (N * (N + 1) / 2) << 33);

    std::vector<char> bytes(100, char(world().rank()));
    if (world().is_root())
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char('a' + i % 26);
    chunked->broadcast(bytes.data(), bytes.size(), 0);
    for (size_t i = 0; i < bytes.size(); ++i) CHECK(bytes[i] == char('a' + i % 26));
    chunked->barrier();
}
