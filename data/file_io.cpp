#include "data/file_io.h"

#include <cerrno>
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
        throw std::runtime_error(path + ": no such file");
    }
    if (std::filesystem::is_directory(path, ec)) {
        throw std::runtime_error(path + ": is a directory, expected a file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
    return buffer.str();
}

void write_file_atomically(const std::string& path, const std::string& contents) {
    const std::string temp = path + ".tmp";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) {
            throw std::runtime_error(temp + ": cannot open for writing: " + std::strerror(errno));
        }
        out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        out.flush();
        if (!out) {
            const std::string reason = std::strerror(errno);
            out.close();
            std::error_code ignored;
            std::filesystem::remove(temp, ignored);
            throw std::runtime_error(temp + ": write failed: " + reason);
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(temp, ignored);
        throw std::runtime_error(path + ": cannot rename " + temp + " into place: " + ec.message());
    }
}

}  // namespace seqgrad
