#include "seqgrad/models/training/metrics_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"

namespace seqgrad {
namespace {

int open_or_throw(const std::string& path, int flags) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
    if (fd < 0) {
        const int error = errno;
        throw Error(fmt::format("{}: cannot open the metrics file for writing: {}", path,
                                std::strerror(error)),
                    file_error_kind(error));
    }
    return fd;
}

// The length of the prefix of `text` that open_for_resume keeps.
size_t kept_prefix(const std::string& text, int64_t step) {
    size_t kept = 0;
    while (kept < text.size()) {
        const size_t end = text.find('\n', kept);
        if (end == std::string::npos) break;  // a last line without its '\n' is incomplete
        nlohmann::json record = nlohmann::json::parse(text.begin() + kept, text.begin() + end,
                                                      nullptr, /*allow_exceptions=*/false);
        if (record.is_discarded() || !record.is_object()) break;
        if (record.value("type", "") == "test") break;
        const auto s = record.find("step");
        if (s == record.end() || !s->is_number_integer() || s->get<int64_t>() > step) break;
        kept = end + 1;
    }
    return kept;
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path, int fd, int64_t size)
    : path_(path), fd_(fd), size_(size) {}

MetricsLog MetricsLog::create(const std::string& path) {
    return MetricsLog(path, open_or_throw(path, O_TRUNC), 0);
}

MetricsLog MetricsLog::open_for_resume(const std::string& path, int64_t step) {
    std::string text;
    if (::access(path.c_str(), F_OK) == 0) {
        try {
            text = read_file(path);
        } catch (const FileError& e) {
            throw Error(e.what(), file_error_kind(e.error_number));
        }
    }
    const int64_t kept = int64_t(kept_prefix(text, step));
    MetricsLog log(path, open_or_throw(path, 0), kept);
    if (::ftruncate(log.fd_, kept) != 0)
        throw Error(fmt::format("{}: cannot cut the metrics file after step {}: {}", path, step,
                                std::strerror(errno)),
                    ErrorKind::io);
    return log;
}

MetricsLog::MetricsLog(MetricsLog&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

MetricsLog& MetricsLog::operator=(MetricsLog&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        size_ = other.size_;
    }
    return *this;
}

MetricsLog::~MetricsLog() {
    if (fd_ >= 0) ::close(fd_);
}

void MetricsLog::append(const nlohmann::json& record) {
    const std::string line = record.dump() + "\n";
    size_t written = 0;
    while (written < line.size()) {
        // pwrite at the end of the complete records: a failed write leaves no half line before
        // the next record, and the ftruncate below removes it from the file.
        const ssize_t n =
            ::pwrite(fd_, line.data() + written, line.size() - written, size_ + int64_t(written));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : ENOSPC;
            if (::ftruncate(fd_, size_) != 0) {  // best effort: the disk may still be full
            }
            throw Error(fmt::format("{}: cannot write the {} record of step {}: {}", path_,
                                    record.value("type", "metrics"), record.value("step", -1),
                                    std::strerror(error)),
                        ErrorKind::io);
        }
        written += size_t(n);
    }
    size_ += int64_t(line.size());
}

void MetricsLog::sync() {
    if (::fsync(fd_) != 0)
        throw Error(fmt::format("{}: cannot flush the metrics file to disk: {}", path_,
                                std::strerror(errno)),
                    ErrorKind::io);
}

}  // namespace seqgrad
