// RunDirLock: makes one `seqgrad train` the only writer of a run directory.
//
// An advisory lock (flock) on RUN_DIR/train.lock, held from before the run writes anything
// until it ends; the kernel drops it when the process dies, even by kill -9, so a crashed run
// never leaves the directory locked. The file holds the holder's pid, for the message a second
// writer gets. Readers (`translate`, `eval`, `attention`) take no lock: every file they read is
// replaced by an atomic rename, so they see the old file or the new one.
#pragma once

#include <memory>
#include <string>

namespace seqgrad {

class RunDirLock {
  public:
    // Locks `run_dir` (which must exist). Throws Error naming the run directory and the holder's
    // pid when another process holds the lock; never waits.
    explicit RunDirLock(const std::string& run_dir);
    ~RunDirLock();
    RunDirLock(const RunDirLock&) = delete;
    RunDirLock& operator=(const RunDirLock&) = delete;

    static constexpr const char* kFileName = "train.lock";

  private:
    int fd_ = -1;
};

// The run directory made ready for one writer: created if missing, locked (held until the
// returned lock is destroyed), and the temporaries a dead writer left behind removed (each named
// on stderr unless quiet).
std::unique_ptr<RunDirLock> claim_run_dir(const std::string& run_dir, bool quiet);

}  // namespace seqgrad
