// Stopping a run: what Ctrl-C (SIGINT) and SIGTERM do to `seqgrad train`.
//
// The first request asks the run to stop after the current step (or between chunks of the final
// test's decoding) and write its `last` checkpoint; a second one exits the process at once, or,
// while a checkpoint or metrics record is being written, right after that write, so that a file
// is never left half written.
#pragma once

#include <atomic>

namespace seqgrad {

// Set to stop after the current step, writing `last`.
std::atomic<bool>& stop_requested();

// What Ctrl-C calls (async-signal-safe). The first request sets stop_requested(); a second one
// exits the process at once with status 130, or, while a checkpoint or metrics record is being
// written (a WriteSection lives), right after that write.
void request_stop();

// Marks a file write that a second Ctrl-C lets finish before the process exits.
class WriteSection {
  public:
    WriteSection();
    ~WriteSection();
    WriteSection(const WriteSection&) = delete;
    WriteSection& operator=(const WriteSection&) = delete;
};

}  // namespace seqgrad
