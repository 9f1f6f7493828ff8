// Crash-safe writing (data/file_io.h): one AtomicFile for every file seqgrad must never leave
// half-written, with temporaries unique per process and stale ones cleaned up (issue 17).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "seqgrad/data/file_io.h"
#include "temp_dir.h"

using namespace seqgrad;
using seqgrad::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The pid of a process that has exited and been reaped: no process runs under it (until the
// kernel reuses it, which takes a full cycle of pids).
pid_t dead_pid() {
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

}  // namespace

TEST_CASE("write_file_atomically writes, replaces, leaves no temporary, and reports failures") {
    TempDir dir("file_io");
    const std::string path = dir.file("plot.svg");
    write_file_atomically(path, "first");
    CHECK(slurp(path) == "first");
    const std::string big(3 << 20, 'x');  // large enough that write() may need several calls
    write_file_atomically(path, big);
    CHECK(slurp(path) == big);
    int entries = 0;
    for (const auto& e : fs::directory_iterator(dir.path)) entries += e.path() == path ? 1 : 100;
    CHECK(entries == 1);  // no temporary left behind

    const std::string missing = dir.file("no_such_dir/plot.svg");
    CHECK_THROWS_WITH_AS(write_file_atomically(missing, "x"),
                         doctest::Contains(("cannot write " + missing).c_str()),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(write_file_atomically(missing, "x"),
                         doctest::Contains("No such file or directory"), std::runtime_error);
}

TEST_CASE("the temporary name carries the pid; an uncommitted AtomicFile leaves nothing") {
    TempDir dir("file_io");
    const std::string path = dir.file("config.json");
    CHECK(temporary_name(path) == path + ".tmp-" + std::to_string(::getpid()));
    write_file_atomically(path, "old");
    {
        AtomicFile file(path);
        CHECK(file.temporary_path() == temporary_name(path));
        file.write("new, never committed");
        CHECK(fs::exists(file.temporary_path()));
    }
    CHECK_FALSE(fs::exists(temporary_name(path)));
    CHECK(slurp(path) == "old");
}

TEST_CASE("remove_stale_temporaries removes a dead writer's temporaries and keeps the rest") {
    TempDir dir("file_io");
    const std::string dead = dir.file("last.safetensors.tmp-" + std::to_string(dead_pid()));
    const std::string alive = dir.file("best.safetensors.tmp-" + std::to_string(::getpid()));
    const std::string other = dir.file("notes.tmp-abc");
    for (const auto& p : {dead, alive, other}) std::ofstream(p) << "x";
    const std::vector<std::string> removed = remove_stale_temporaries(dir.path.string());
    CHECK(removed == std::vector<std::string>{dead});
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(alive));
    CHECK(fs::exists(other));
    CHECK(remove_stale_temporaries(dir.file("no_such_folder")).empty());
}
