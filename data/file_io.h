// Whole-file reading and crash-safe writing: the one place where seqgrad writes a file that
// must never be seen half-written (checkpoints, vocabularies, configs, plots).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace seqgrad {

/// What read_file() and AtomicFile throw: a std::runtime_error naming the file and the reason,
/// with the system's error number (ENOENT: the file does not exist), so that a caller can tell
/// a missing file from one that could not be read or written.
struct FileError : std::runtime_error {
    FileError(const std::string& message, int error_number)
        : std::runtime_error(message), error_number(error_number) {}
    int error_number;
};

/// The bytes of the file at `path`. Throws FileError naming the file and the reason ("no such
/// file", "is a directory", the system's message) if it cannot be read.
std::string read_file(const std::string& path);

/// A file written under a temporary name next to its destination, "PATH.tmp-<pid>", and
/// renamed over PATH by commit(): a crash or a full disk leaves either the complete old file or
/// the complete new one, never a mix. commit() flushes the data to the disk (fsync) before the
/// rename and syncs the folder after it, so the rename is durable too. Destroyed without
/// commit() (an exception on the way), it removes the temporary. The pid in the name keeps two
/// processes writing one PATH from colliding, and lets remove_stale_temporaries() tell a dead
/// writer's leftovers from a live writer's file. Every failure throws FileError
/// naming PATH and the system's reason; PATH is then left as it was.
class AtomicFile {
  public:
    explicit AtomicFile(const std::string& path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* bytes, size_t count);
    void write(const std::string& text) { write(text.data(), text.size()); }
    void commit();

    const std::string& temporary_path() const { return temporary_; }

  private:
    [[noreturn]] void fail(const std::string& what, int error);

    std::string path_, temporary_;
    int fd_ = -1;
    bool committed_ = false;
};

/// Writes `contents` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, const std::string& contents);

/// The temporary name AtomicFile uses for `path` in this process: "PATH.tmp-<pid>".
std::string temporary_name(const std::string& path);

/// Removes the temporaries "NAME.tmp-<pid>" in `folder` whose writer (process `pid`) is no
/// longer running: what a `kill -9` in the middle of a write leaves behind. Files of running
/// processes are kept. Returns the paths removed.
std::vector<std::string> remove_stale_temporaries(const std::string& folder);

/// fsync()s the folder, which makes a rename or a new file in it durable. Best effort: some file
/// systems cannot sync a folder, and the file is in place either way.
void sync_folder(const std::string& folder);

}  // namespace seqgrad
