// Shared by the fuzz harnesses: the input as a file (the readers under test take paths), and
// the property every reader must keep — bad input is a std::runtime_error (seqgrad::Error or
// the data layer's) naming the file, never a crash, a raw nlohmann exception or an anonymous
// message. A broken property calls abort(), which libFuzzer reports as a crash.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace seqgrad::fuzz {

// A file of this process holding `size` bytes of `data`, rewritten on every call; in memory
// (/dev/shm) where there is one, since a disk would cap the executions per second.
inline std::string input_file(const uint8_t* data, size_t size, const char* suffix) {
    static const std::string folder = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : P_tmpdir;
    static const std::string path = folder + "/seqgrad_fuzz_" + std::to_string(::getpid()) + suffix;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    return path;
}

[[noreturn]] inline void broken(const char* property, const std::string& detail) {
    std::fprintf(stderr, "fuzz: broken property: %s: %s\n", property, detail.c_str());
    std::abort();
}

// Runs `read`, which reads `name`; any exception but a runtime_error naming `name` is a finding.
template <class Read>
void expect_clean_error(const std::string& name, Read&& read) {
    try {
        read();
    } catch (const nlohmann::json::exception& e) {
        broken("no raw nlohmann exception escapes", e.what());
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find(name) == std::string::npos)
            broken("the error names the input", e.what());
    }
}

}  // namespace seqgrad::fuzz
