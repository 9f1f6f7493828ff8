// `seqgrad exercises`: runs the exercise grader (seqgrad-exercises) or the capstone
// (seqgrad-exercises-train), two programs of their own built from the learner's files
// (apps/exercises/exercises.cmake), so that a file that does not compile never breaks this
// command. When the program is missing or older than an exercise file, it is built first with
// the build tree's own cmake; if that fails, the compiler's messages are what the learner sees.
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"

namespace seqgrad {
namespace {

namespace fs = std::filesystem;

const char* kHelp = R"(usage: seqgrad exercises list                 the exercises, in order
       seqgrad exercises check [N ...] [--seed S] [--timeout SEC] [--verbose]
                                               grade them (all, or the numbers given)
       seqgrad exercises hint N                where the library's answer is
       seqgrad exercises train-dates           train the date model with your parts
       [--no-build]                            do not build the grader when it is stale

The exercises are the files of exercises/ (or of the folder given to cmake with
-DSEQGRAD_EXERCISES_DIR=DIR). They are built into a grader of their own: when it is missing
or older than a file, this command builds it (cmake --build BUILD --target seqgrad-exercises).
docs/exercises.md explains the path.
)";

fs::path own_directory() {
    std::error_code error;
    fs::path exe = fs::read_symlink("/proc/self/exe", error);
    return error ? fs::current_path() : exe.parent_path();
}

fs::file_time_type newest_input(const fs::path& exercises_dir, const fs::path& build_dir) {
    fs::file_time_type newest = fs::file_time_type::min();
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(exercises_dir, error))
        if (entry.path().extension() == ".cpp") newest = std::max(newest, entry.last_write_time());
    // the exercises folder itself (a file added or removed) and the cmake cache (a new folder)
    newest = std::max(newest, fs::last_write_time(exercises_dir, error));
    newest = std::max(newest, fs::last_write_time(build_dir / "exercises-dir.txt", error));
    return newest;
}

int run(const std::vector<std::string>& argv) {
    std::vector<char*> raw;
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    std::fflush(stdout);
    pid_t pid = ::fork();
    if (pid < 0) throw Error("exercises: fork failed");
    if (pid == 0) {
        ::execv(raw[0], raw.data());
        fmt::print(stderr, "seqgrad exercises: cannot run {}: {}\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

}  // namespace

int cmd_exercises(const Argv& args_in) {
    Argv args = args_in;
    bool build = true;
    for (auto it = args.begin(); it != args.end();)
        if (*it == "--no-build")
            build = false, it = args.erase(it);
        else
            ++it;
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        fmt::print("{}", kHelp);
        return args.empty() ? 2 : 0;
    }
    const std::string& what = args[0];
    if (what != "list" && what != "check" && what != "hint" && what != "train-dates")
        throw Error(fmt::format(
            "exercises: unknown sub-command '{}' (list, check, hint, train-dates)", what));
    const fs::path build_dir = own_directory();
    const std::string target =
        what == "train-dates" ? "seqgrad-exercises-train" : "seqgrad-exercises";
    const fs::path program = build_dir / target;
    fs::path exercises_dir;
    if (std::ifstream in(build_dir / "exercises-dir.txt"); in) {
        std::string line;
        std::getline(in, line);
        exercises_dir = line;
    }
    std::error_code error;
    const bool missing = !fs::exists(program, error);
    const bool stale = !missing && !exercises_dir.empty() &&
                       fs::last_write_time(program, error) < newest_input(exercises_dir, build_dir);
    const std::string command =
        fmt::format("cmake --build {} --target {}", build_dir.string(), target);
    if (missing || stale) {
        if (!build || !fs::exists(build_dir / "CMakeCache.txt", error)) {
            fmt::print(stderr, "seqgrad exercises: {} is {}; build it with\n  {}\n", target,
                       missing ? "not built yet" : "older than your exercise files", command);
            return 2;
        }
        fmt::print(stderr, "seqgrad exercises: building {} ({})\n  {}\n", target,
                   missing ? "not built yet" : "an exercise file changed", command);
        if (run({"/bin/sh", "-c", command + " 2>&1"}) != 0) {
            fmt::print(stderr,
                       "\nseqgrad exercises: your exercise files do not compile (the messages are "
                       "above); the rest of seqgrad is not affected.\n");
            return 2;
        }
    }
    if (what == "train-dates") args.erase(args.begin());
    std::vector<std::string> argv{program.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

}  // namespace seqgrad
