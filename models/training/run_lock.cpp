#include "seqgrad/models/training/run_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"

namespace seqgrad {
namespace {

// The pid the holder wrote into the lock file, or "unknown" (it may not have written it yet).
std::string holder_pid(int fd) {
    char text[32] = {};
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    std::string pid = n > 0 ? std::string(text, size_t(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return pid.empty() ? "unknown" : pid;
}

}  // namespace

RunDirLock::RunDirLock(const std::string& run_dir) {
    const std::string path = run_dir + "/" + kFileName;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        const int error = errno;
        throw Error(fmt::format("{}: cannot open the run directory's lock file {}: {}", run_dir,
                                path, std::strerror(error)),
                    file_error_kind(error));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        const std::string pid = error == EWOULDBLOCK ? holder_pid(fd_) : "";
        ::close(fd_);
        fd_ = -1;
        if (error == EWOULDBLOCK)
            throw Error(
                fmt::format(
                    "{}: the run directory is in use by another `seqgrad train` (pid {}, lock "
                    "file {}); wait for it to end, stop it, or set another output.run_dir",
                    run_dir, pid, path),
                ErrorKind::io);
        throw Error(fmt::format("{}: cannot lock {}: {}", run_dir, path, std::strerror(error)),
                    ErrorKind::io);
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 ||
        ::pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
        const int error = errno;
        ::close(fd_);
        fd_ = -1;
        throw Error(fmt::format("{}: cannot write the lock file {}: {}", run_dir, path,
                                std::strerror(error)),
                    ErrorKind::io);
    }
}

RunDirLock::~RunDirLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

std::unique_ptr<RunDirLock> claim_run_dir(const std::string& run_dir, bool quiet) {
    std::filesystem::create_directories(run_dir);
    auto lock = std::make_unique<RunDirLock>(run_dir);
    for (const std::string& stale : remove_stale_temporaries(run_dir))
        if (!quiet) fmt::print(stderr, "removed {} (left by a process that died)\n", stale);
    return lock;
}

}  // namespace seqgrad
