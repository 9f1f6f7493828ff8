#include "seqgrad/data/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace seqgrad {

std::string read_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        throw FileError(path + ": no such file", ENOENT);
    }
    if (std::filesystem::is_directory(path, ec)) {
        throw FileError(path + ": is a directory, expected a file", EISDIR);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int error = errno;
        throw FileError(path + ": cannot open: " + std::strerror(error), error);
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        const int error = errno;
        throw FileError(path + ": read error: " + std::strerror(error), error);
    }
    return buffer.str();
}

std::string temporary_name(const std::string& path) {
    return path + ".tmp-" + std::to_string(::getpid());
}

AtomicFile::AtomicFile(const std::string& path) : path_(path), temporary_(temporary_name(path)) {
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot create the temporary file " + temporary_, errno);
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFile::fail(const std::string& what, int error) {
    throw FileError("cannot write " + path_ + ": " + what + ": " + std::strerror(error), error);
}

void AtomicFile::write(const void* bytes, size_t count) {
    const char* p = static_cast<const char*>(bytes);
    while (count > 0) {  // write() may write less than asked (large files, signals)
        const ssize_t n = ::write(fd_, p, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot write the temporary file " + temporary_, errno);
        }
        p += n;
        count -= size_t(n);
    }
}

void AtomicFile::commit() {
    // Without fsync, a crash just after the rename can leave the new name pointing at an empty
    // file on some file systems: the rename reached the disk before the data did.
    if (::fsync(fd_) != 0) fail("cannot flush the temporary file " + temporary_, errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot close the temporary file " + temporary_, errno);
    if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
        fail("cannot rename " + temporary_ + " into place", errno);
    committed_ = true;
    std::string folder = std::filesystem::path(path_).parent_path().string();
    sync_folder(folder.empty() ? "." : folder);
}

void write_file_atomically(const std::string& path, const std::string& contents) {
    AtomicFile file(path);
    file.write(contents);
    file.commit();
}

void sync_folder(const std::string& folder) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

std::vector<std::string> remove_stale_temporaries(const std::string& folder) {
    std::vector<std::string> removed;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
        const std::string name = entry.path().filename().string();
        const size_t mark = name.rfind(".tmp-");
        if (mark == std::string::npos || !entry.is_regular_file(ec)) continue;
        const char* first = name.data() + mark + 5;
        const char* last = name.data() + name.size();
        long pid = 0;
        auto [end, error] = std::from_chars(first, last, pid);
        if (error != std::errc() || end != last || first == last || pid <= 0) continue;
        // kill(pid, 0) sends nothing; ESRCH says no such process. (EPERM: alive, not ours.)
        if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;
        if (std::filesystem::remove(entry.path(), ec)) removed.push_back(entry.path().string());
    }
    return removed;
}

}  // namespace seqgrad
