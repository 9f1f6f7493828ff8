#include "seqgrad/models/training/signals.h"

#include <cstdlib>

namespace seqgrad {

std::atomic<bool>& stop_requested() {
    static std::atomic<bool> flag{false};
    return flag;
}

namespace {
// While a WriteSection lives, a second Ctrl-C waits for it to end before exiting (request_stop).
std::atomic<int> stop_requests{0};
std::atomic<int> writes_in_progress{0};
}  // namespace

void request_stop() {
    stop_requested() = true;
    if (++stop_requests >= 2 && writes_in_progress == 0) std::_Exit(130);
}

WriteSection::WriteSection() {
    writes_in_progress++;
}

WriteSection::~WriteSection() {
    if (--writes_in_progress == 0 && stop_requests >= 2) std::_Exit(130);
}

}  // namespace seqgrad
