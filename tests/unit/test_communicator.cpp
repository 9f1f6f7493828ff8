// The communicator's single-process side and the fixed-order sum's plan (the MPI side runs
// under mpiexec: tests/mpi/test_communicator.cpp, in a build with -DSEQGRAD_MPI=ON).
#include <doctest/doctest.h>

#include <string>

#include "seqgrad/models/distributed/communicator.h"

using namespace seqgrad;

TEST_CASE("one process is a communicator of one rank whose sum changes nothing") {
    auto comm = single_process();
    CHECK(comm->rank() == 0);
    CHECK(comm->size() == 1);
    CHECK(comm->is_root());
    float f[3] = {1.5f, -2, 3};
    comm->sum(f, 3);
    CHECK(f[0] == 1.5f);
    CHECK(f[1] == -2);
    CHECK(comm->gather_all(42) == std::vector<uint64_t>{42});
    comm->barrier();
}

TEST_CASE("the sum's segments cover the vector once, the first count % parts one longer") {
    for (size_t count : {size_t(0), size_t(1), size_t(5), size_t(6), size_t(1001)}) {
        for (int parts : {1, 2, 3, 7}) {
            CAPTURE(count);
            CAPTURE(parts);
            const auto segments = split_into_segments(count, parts);
            REQUIRE(segments.size() == size_t(parts));
            size_t next = 0;
            for (size_t r = 0; r < segments.size(); ++r) {
                CHECK(segments[r].begin == next);
                CHECK(segments[r].count == count / parts + (r < count % parts ? 1 : 0));
                next += segments[r].count;
            }
            CHECK(next == count);
        }
    }
    CHECK_THROWS(split_into_segments(10, 0));
}

TEST_CASE("fingerprints tell different bytes apart") {
    const float a[2] = {1, 2}, b[2] = {1, 2.0000002f};
    CHECK(fingerprint(a, sizeof a) == fingerprint(a, sizeof a));
    CHECK(fingerprint(a, sizeof a) != fingerprint(b, sizeof b));
    CHECK(fingerprint(a, 0) != fingerprint(a, sizeof a));
}

TEST_CASE("without MPI in the build, asking for it says how to get it") {
    if (mpi_available()) return;
    try {
        mpi_communicator();
        FAIL("expected an error");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()).find("-DSEQGRAD_MPI=ON") != std::string::npos);
    }
}
