// Error: every error seqgrad raises on bad use (a shape mismatch, a freed graph, a bad index, a
// bad config key) is a seqgrad::Error, whose message names the op, file or key and what was
// expected. A header of its own, so that code below the graph (shapes, switches, threads) can
// throw without knowing about tensors.
//
// An Error also says what kind of mistake it reports, set where it is thrown, so that a caller
// can choose what to do without reading the message: the Python module raises the matching
// Python exception (apps/python/module.cpp), carrying the message unchanged.
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>

namespace seqgrad {

enum class ErrorKind {
    value,        // a bad value, shape, option or argument (the default)   Python: ValueError
    key,          // an unknown or missing name: a config key, a parameter   KeyError
    not_found,    // a file or folder that does not exist                    FileNotFoundError
    io,           // a file that exists but cannot be opened, read, written  OSError
    state,        // an object used out of order: a graph after backward freed it, backward of
                  // something that does not require grad, an undefined tensor  RuntimeError
    interrupted,  // stopped by the user (Ctrl-C) before it had a result     KeyboardInterrupt
};

struct Error : std::runtime_error {
    explicit Error(const std::string& message, ErrorKind kind = ErrorKind::value)
        : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

  private:
    ErrorKind kind_;
};

// The kind of a failed open, read or write, from the system's error number (errno): a file or
// folder that does not exist is not_found, anything else (permissions, a full disk) io.
inline ErrorKind file_error_kind(int error_number) {
    return error_number == ENOENT || error_number == ENOTDIR ? ErrorKind::not_found : ErrorKind::io;
}

}  // namespace seqgrad
