// The run directory's guarantees (issue 17): one writer at a time (RunDirLock), metrics.jsonl
// holds only complete records and never a step twice (MetricsLog), and Ctrl-C twice exits
// right after the write in progress (request_stop, WriteSection).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "seqgrad/autograd/tensor.h"
#include "seqgrad/models/training/metrics_log.h"
#include "seqgrad/models/training/run_lock.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;
using seqgrad::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

TEST_CASE("a second writer of a run directory is refused at once, naming the directory and pid") {
    TempDir dir("run_dir");
    const std::string run = dir.path.string();
    {
        RunDirLock first(run);
        // flock locks belong to an open file, so a second lock in this process conflicts too
        CHECK_THROWS_WITH_AS(
            RunDirLock{run},
            doctest::Contains((run +
                               ": the run directory is in use by another `seqgrad train` "
                               "(pid " +
                               std::to_string(::getpid()) + ",")
                                  .c_str()),
            Error);
    }
    CHECK_NOTHROW(RunDirLock{run});  // released with its holder
    CHECK_THROWS_WITH_AS(RunDirLock(dir.file("missing")),
                         doctest::Contains("cannot open the run directory's lock file"), Error);
}

TEST_CASE("the lock of a process that died is free: the kernel drops it") {
    TempDir dir("run_dir");
    const std::string run = dir.path.string();
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    pid_t child = ::fork();
    if (child == 0) {
        RunDirLock held(run);
        char ready = 'r';
        (void)!::write(pipe_fds[1], &ready, 1);
        ::pause();  // until killed
        ::_exit(0);
    }
    char ready = 0;
    REQUIRE(::read(pipe_fds[0], &ready, 1) == 1);
    CHECK_THROWS_WITH_AS(RunDirLock{run},
                         doctest::Contains(("(pid " + std::to_string(child)).c_str()), Error);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK_NOTHROW(RunDirLock{run});
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
}

TEST_CASE("a metrics record that cannot be written is an error naming the file") {
    // /dev/full fails every write with ENOSPC, like a full disk.
    MetricsLog log = MetricsLog::create("/dev/full");
    CHECK_THROWS_WITH_AS(log.append({{"type", "train"}, {"step", 8}}),
                         "/dev/full: cannot write the train record of step 8: No space left on "
                         "device",
                         Error);
}

TEST_CASE("resuming cuts metrics.jsonl after the checkpoint's step: no record twice") {
    TempDir dir("run_dir");
    const std::string path = dir.file("metrics.jsonl");
    {
        MetricsLog log = MetricsLog::create(path);
        for (int step : {10, 20, 30}) log.append({{"type", "train"}, {"step", step}});
        log.append({{"type", "valid"}, {"step", 30}});
        log.append({{"type", "train"}, {"step", 40}});
        log.append({{"type", "test"}, {"step", 40}});
        log.sync();
    }
    CHECK(lines_of(path).size() == 6);
    SUBCASE("resume from step 30: the steps after it will run again") {
        MetricsLog log = MetricsLog::open_for_resume(path, 30);
        log.append({{"type", "train"}, {"step", 40}});
        const auto lines = lines_of(path);
        REQUIRE(lines.size() == 5);
        CHECK(lines[3] == R"({"step":30,"type":"valid"})");
        CHECK(lines[4] == R"({"step":40,"type":"train"})");
    }
    SUBCASE("resume of a finished run: the test record goes, the test runs again") {
        MetricsLog::open_for_resume(path, 40);
        CHECK(lines_of(path).size() == 5);
    }
    SUBCASE("a half-written last line (kill -9 mid-write) is dropped") {
        std::ofstream(path, std::ios::trunc) << R"({"step":10,"type":"train"})"
                                             << "\n"
                                             << R"({"step":20,"ty)";
        MetricsLog::open_for_resume(path, 100);
        CHECK(lines_of(path) == std::vector<std::string>{R"({"step":10,"type":"train"})"});
    }
    SUBCASE("no metrics file yet") {
        fs::remove(path);
        MetricsLog::open_for_resume(path, 5);
        CHECK(fs::file_size(path) == 0);
    }
}

TEST_CASE("a second Ctrl-C exits with status 130, after the write in progress") {
    TempDir dir("run_dir");
    const std::string marker = dir.file("written");
    pid_t child = ::fork();
    if (child == 0) {
        {
            WriteSection writing;
            request_stop();
            if (!stop_requested()) ::_exit(1);
            request_stop();                   // the second: exit once the write is done...
            std::ofstream(marker) << "done";  // ...so this still happens
        }
        ::_exit(0);  // not reached: the section's end exits with 130
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK(fs::exists(marker));

    child = ::fork();
    if (child == 0) {
        request_stop();
        request_stop();  // no write in progress: at once
        ::_exit(0);
    }
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
}
