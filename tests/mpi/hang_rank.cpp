// A rank that hangs: rank 1 sleeps instead of joining the barrier, and the others must stop with
// an error naming the operation within their timeout (2 s) instead of waiting forever. ctest
// passes when that message appears (tests/CMakeLists.txt).
#include <chrono>
#include <cstdio>
#include <thread>

#include "seqgrad/models/distributed/communicator.h"

int main() {
    auto comm = seqgrad::mpi_communicator(2);
    if (comm->rank() == 1) {
        std::this_thread::sleep_for(std::chrono::seconds(60));
        return 0;
    }
    comm->barrier();
    std::puts("the barrier completed without rank 1: the timeout did not work");
    return 1;
}
