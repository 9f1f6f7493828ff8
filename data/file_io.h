// Whole-file reading and crash-safe writing.
#pragma once

#include <string>

namespace seqgrad {

/// The bytes of the file at `path`. Throws std::runtime_error naming the file and the reason
/// ("no such file", "is a directory", the system's message) if it cannot be read.
std::string read_file(const std::string& path);

/// Writes `contents` to `path` atomically: first to `path + ".tmp"`, then renamed over `path`.
/// A crash leaves either the old file or the new one, never half of one. Throws
/// std::runtime_error naming the file if writing or renaming fails.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace seqgrad
