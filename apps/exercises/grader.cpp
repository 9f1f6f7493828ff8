// seqgrad-exercises: grades the learner's exercise files (`seqgrad exercises check` runs it).
//
//   seqgrad-exercises list | check [N ...] [--seed S] [--timeout SEC] [--verbose] | hint N
//
// Each selected exercise runs in a child process (fork) with a time limit. The child writes one
// line per phase ("P\tbackward") and per check ("C\tname\tstatus\tdiagnosis") to a pipe; the
// parent prints a table (✓ pass, ✗ fail, · not done) and the diagnoses. A child that dies
// from a signal is reported with the phase it was in, one that runs past the limit is killed.
// Exit status 0 only when every selected exercise passes.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/exercises/grader.h"

namespace seqgrad::grading {

// ---- the child's side ------------------------------------------------------------------------

namespace {

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV:
            return "SIGSEGV";
        case SIGABRT:
            return "SIGABRT";
        case SIGFPE:
            return "SIGFPE";
        case SIGBUS:
            return "SIGBUS";
        case SIGILL:
            return "SIGILL";
        case SIGKILL:
            return "SIGKILL";
        default:
            return "a signal";
    }
}

// In a fork's child: ends it when `parent` ends (on Linux), so that no check outlives the
// process that waits for it (which a time limit, Ctrl-C or ctest's own limit may end).
void die_with(pid_t parent) {
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (::getppid() != parent) ::_exit(1);
}

}  // namespace

void Grader::send(const std::string& line) {
    std::string text = line + "\n";
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(fd_, p, left);
        if (n <= 0) return;
        p += n, left -= size_t(n);
    }
}

void Grader::phase(const std::string& name) {
    send("P\t" + name);
}

void Grader::check(const std::string& name, const std::function<std::string()>& fn) {
    std::string status = "pass", detail;
    try {
        detail = fn();
        if (!detail.empty()) status = "fail";
    } catch (const practice::NotImplemented&) {
        status = "todo";
    } catch (const std::exception& e) {
        status = "fail", detail = std::string("threw an exception: ") + e.what();
    }
    for (char& ch : detail)
        if (ch == '\n' || ch == '\t') ch = '\x1f';
    send("C\t" + name + "\t" + status + "\t" + detail);
}

void Grader::check_in_child(const std::string& name, const std::function<std::string()>& fn,
                            const std::string& crash_diagnosis) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::cout.flush();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // the check, reporting to this process instead of the grader
        die_with(parent);
        ::close(fds[0]);
        fd_ = fds[1];
        check(name, fn);
        ::_exit(0);
    }
    ::close(fds[1]);
    // forward the child's lines: its phases (a time limit then names the phase) and its result
    std::string buffer, phase = "setup";
    bool reported = false;
    char chunk[4096];
    for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        buffer.append(chunk, size_t(n));
        for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
            const std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            if (line.rfind("P\t", 0) == 0) phase = line.substr(2);
            if (line.rfind("C\t", 0) == 0) reported = true;
            send(line);
        }
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (reported) return;
    std::string detail =
        WIFSIGNALED(status)
            ? fmt::format("crashed ({}) in the {}", signal_name(WTERMSIG(status)), phase)
            : fmt::format("exited with status {} in the {}",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1, phase);
    if (phase.rfind("backward", 0) == 0 && !crash_diagnosis.empty())
        detail += ": " + crash_diagnosis;
    check(name, [&] { return detail; });
}

int64_t Grader::random_size(Rng& rng, int64_t lo, int64_t hi) const {
    return lo + int64_t(rng.below(uint64_t(hi - lo + 1)));
}

const std::vector<Exercise>& all_exercises() {
    static const std::vector<Exercise> list = [] {
        std::vector<Exercise> out;
        add_op_exercises(out);
        add_layer_exercises(out);
        add_optimizer_exercise(out);
        add_decoding_exercises(out);
        add_bleu_exercise(out);
        add_transformer_exercises(out);
        return out;
    }();
    return list;
}

namespace {

// ---- the parent's side -----------------------------------------------------------------------

struct CheckLine {
    std::string name, status, detail;
};
struct Outcome {
    std::vector<CheckLine> checks;
    std::string phase = "setup";
    std::string failure;  // crashed / timed out / exited
};

void parse_line(const std::string& line, Outcome& out) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string part; std::getline(ss, part, '\t');) f.push_back(part);
    if (f.size() >= 2 && f[0] == "P") out.phase = f[1];
    if (f.size() >= 3 && f[0] == "C") {
        std::string detail = f.size() > 3 ? f[3] : "";
        for (char& ch : detail)
            if (ch == '\x1f') ch = '\n';
        out.checks.push_back({f[1], f[2], detail});
    }
}

// In the child: grades the exercise, writing its lines to `out_fd`, and exits. Never returns.
[[noreturn]] void grade_in_child(const Exercise& ex, const ExerciseTable& table, uint64_t seed,
                                 pid_t parent, int out_fd) {
    die_with(parent);
    ::dup2(2, 1);  // the learner's prints go to stderr, the table stays readable
    Grader g(out_fd, seed, table);
    try {
        ex.grade(g);
    } catch (...) {
    }
    ::close(out_fd);
    ::_exit(0);
}

// Reads the child's lines from `fd` into `out` until it closes the pipe or the time is up;
// returns false when the time ran out first.
bool read_child_lines(int fd, double timeout_seconds, Outcome& out) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(int64_t(timeout_seconds * 1000));
    std::string buffer;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        int ready = ::poll(&p, 1, int(std::min<long long>(left, 1000)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        char chunk[4096];
        ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n <= 0) return true;
        buffer.append(chunk, size_t(n));
        for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
            parse_line(buffer.substr(0, nl), out);
            buffer.erase(0, nl + 1);
        }
    }
}

// How the child ended, when not normally: "" for a clean exit.
std::string child_failure(bool timed_out, int status, double timeout_seconds,
                          const std::string& phase) {
    if (timed_out)
        return fmt::format("timed out after {:g} s in the {} (an endless loop?)", timeout_seconds,
                           phase);
    if (WIFSIGNALED(status))
        return fmt::format("crashed ({}) in the {}", signal_name(WTERMSIG(status)), phase);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return fmt::format("exited with status {} in the {}", WEXITSTATUS(status), phase);
    return "";
}

Outcome run_in_child(const Exercise& ex, const ExerciseTable& table, uint64_t seed,
                     double timeout_seconds) {
    Outcome out;
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::cout.flush();
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        grade_in_child(ex, table, seed, parent, fds[1]);
    }
    ::close(fds[1]);
    const bool timed_out = !read_child_lines(fds[0], timeout_seconds, out);
    ::close(fds[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    out.failure = child_failure(timed_out, status, timeout_seconds, out.phase);
    return out;
}

std::string indent(const std::string& text, const std::string& prefix) {
    std::string out = prefix;
    for (char ch : text) {
        out += ch;
        if (ch == '\n') out += prefix;
    }
    return out;
}

// Prints one exercise's row and its diagnoses; returns whether it passed.
bool report(const Exercise& ex, const Outcome& out, bool verbose) {
    int pass = 0, fail = 0, todo = 0;
    std::string marks;
    for (const CheckLine& c : out.checks) {
        const char* mark = c.status == "pass" ? "✓" : c.status == "todo" ? "·" : "✗";
        marks += mark;
        (c.status == "pass" ? pass : c.status == "todo" ? todo : fail)++;
    }
    std::string verdict;
    if (!out.failure.empty())
        verdict = fmt::format("✗ {:02d} {}", ex.number, out.failure);
    else if (todo == int(out.checks.size()))
        verdict = "· not done";
    else if (fail == 0 && todo == 0)
        verdict = fmt::format("✓ passed ({} checks)", pass);
    else
        verdict = fmt::format("✗ {} of {} checks fail{}", fail + todo, out.checks.size(),
                              todo ? fmt::format(" ({} not done)", todo) : "");
    fmt::print("  {:<24} {:<30} {}\n", ex.name, marks, verdict);
    const bool passed = out.failure.empty() && fail == 0 && todo == 0 && pass > 0;
    for (const CheckLine& c : out.checks) {
        if (c.status == "fail")
            fmt::print("      ✗ {}\n{}\n", c.name, indent(c.detail, "          "));
        else if (verbose)
            fmt::print("      {} {}\n", c.status == "pass" ? "✓" : "·", c.name);
    }
    if (!passed && todo > 0 && todo < int(out.checks.size()) && !verbose)
        for (const CheckLine& c : out.checks)
            if (c.status == "todo") fmt::print("      · {} (not done)\n", c.name);
    return passed;
}

const Exercise* find(const std::string& key) {
    for (const Exercise& ex : all_exercises())
        if (key == ex.name || key == std::to_string(ex.number) ||
            key == fmt::format("{:02d}", ex.number))
            return &ex;
    return nullptr;
}

int list() {
    fmt::print("The exercises (files exercises/NN_name.cpp), in order:\n\n");
    for (const Exercise& ex : all_exercises())
        fmt::print("  {:<24} {:<62} {} min\n", ex.name, ex.title, ex.minutes);
    fmt::print("\nseqgrad exercises check [N ...]   grade them;   seqgrad exercises hint N\n");
    return 0;
}

int hint(const std::vector<std::string>& args) {
    if (args.empty()) throw std::runtime_error("hint: which exercise? e.g. `hint 7`");
    const Exercise* ex = find(args[0]);
    if (!ex) throw std::runtime_error("hint: no exercise " + args[0] + " (see `list`)");
    fmt::print("{}: {}\n\n{}\n", ex->name, ex->title, ex->hint);
    return 0;
}

int check(const std::vector<std::string>& args) {
    uint64_t seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 100000;
    double timeout = 10;
    bool verbose = false;
    std::vector<const Exercise*> selected;
    ExerciseTable table = learner_table();
    std::string replaced;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
            return args[++i];
        };
        if (a == "--seed")
            seed = std::stoull(value());
        else if (a == "--timeout")
            timeout = std::stod(value());
        else if (a == "--verbose" || a == "-v")
            verbose = true;
        else if (a == "--replace") {  // the test build: swap in a wrong answer
            std::string name = value();
            bool found = false;
            for (const Variant& v : variants())
                if (v.name == name) v.install(table), found = true;
            if (!found) throw std::runtime_error("--replace: no variant " + name);
            replaced += " " + name;
        } else if (const Exercise* ex = find(a))
            selected.push_back(ex);
        else
            throw std::runtime_error("check: no exercise '" + a + "' (see `list`)");
    }
    if (selected.empty())
        for (const Exercise& ex : all_exercises()) selected.push_back(&ex);
    fmt::print(
        "seqgrad exercises: {} exercise{}, random shapes from seed {} (repeat: --seed {}){}\n",
        selected.size(), selected.size() == 1 ? "" : "s", seed, seed,
        replaced.empty() ? "" : ", replaced:" + replaced);
    fmt::print("  ✓ pass  ✗ fail  · not done; one mark per check\n\n");
    int passed = 0;
    for (const Exercise* ex : selected) {
        Outcome out = run_in_child(*ex, table, seed, timeout);
        passed += report(*ex, out, verbose);
        std::cout.flush();
    }
    fmt::print("\n{} of {} passed.{}\n", passed, selected.size(),
               passed == int(selected.size()) ? ""
                                              : " `seqgrad exercises hint N` says where the "
                                                "library's answer is.");
    return passed == int(selected.size()) ? 0 : 1;
}

}  // namespace
}  // namespace seqgrad::grading

int main(int argc, char** argv) {
    using namespace seqgrad::grading;
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h") {
            fmt::print(
                "usage: seqgrad-exercises list | check [N ...] [--seed S] [--timeout SEC] "
                "[--verbose] | hint N\n");
            return args.empty() ? 2 : 0;
        }
        std::vector<std::string> rest(args.begin() + 1, args.end());
        if (args[0] == "list") return list();
        if (args[0] == "hint") return hint(rest);
        if (args[0] == "check") return check(rest);
        if (args[0] == "variants") {  // the test build's replacement answers
            for (const Variant& v : variants()) fmt::print("{} {}\n", v.name, v.exercise);
            return 0;
        }
        fmt::print(stderr, "seqgrad-exercises: unknown command '{}'\n", args[0]);
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "seqgrad-exercises: {}\n", e.what());
        return 2;
    }
}
