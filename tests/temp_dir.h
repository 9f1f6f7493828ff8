// A fresh folder under the system's temporary directory, removed with the object. The pid in
// its name keeps test suites of several checkouts, running at once, apart.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace seqgrad::testing {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& name) {
        path = std::filesystem::temp_directory_path() /
               ("seqgrad_test_" + name + "_" + std::to_string(::getpid()));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace seqgrad::testing
