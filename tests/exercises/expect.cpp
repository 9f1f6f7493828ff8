// exercises_expect STATUS PATTERN... -- COMMAND...
// Runs COMMAND; passes when it exits with STATUS and, for every PATTERN (a regular expression in
// std::regex's ECMAScript syntax, which reads the patterns here as grep -E does), some line of its
// output (stdout and stderr together) matches. Prints the output either way.
//
// Output and patterns are decoded from UTF-8 here, so that `·+` means one or more middle dots
// whatever the locale says (grep, without a UTF-8 locale, would read it as one byte followed by
// the other byte repeated).
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

namespace {

// UTF-8 to code points (wchar_t is 32 bits on Linux); a malformed byte becomes U+FFFD.
std::wstring decode_utf8(const std::string& text) {
    std::wstring out;
    for (size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const int extra = byte < 0x80         ? 0
                          : (byte >> 5) == 6  ? 1
                          : (byte >> 4) == 14 ? 2
                          : (byte >> 3) == 30 ? 3
                                              : -1;
        char32_t code = extra == 0   ? byte
                        : extra == 1 ? byte & 0x1F
                        : extra == 2 ? byte & 0x0F
                                     : byte & 0x07;
        bool valid = extra >= 0 && i + size_t(extra) < text.size();
        for (int k = 1; valid && k <= extra; ++k) {
            const auto next = static_cast<unsigned char>(text[i + size_t(k)]);
            valid = (next >> 6) == 2;
            code = (code << 6) | (next & 0x3F);
        }
        out.push_back(valid ? wchar_t(code) : wchar_t(0xFFFD));
        i += valid ? size_t(extra) + 1 : 1;
    }
    return out;
}

// Runs argv with stdout and stderr into one pipe; returns the exit status (128 + signal when
// killed) and the output.
int run(char** argv, std::string& output) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        ::close(fds[0]);
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        ::close(fds[1]);
        ::execvp(argv[0], argv);
        std::fprintf(stderr, "exercises_expect: cannot run %s: %s\n", argv[0],
                     std::strerror(errno));
        ::_exit(127);
    }
    ::close(fds[1]);
    char chunk[4096];
    for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        output.append(chunk, size_t(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
    int separator = 2;
    while (separator < argc && std::strcmp(argv[separator], "--") != 0) ++separator;
    if (argc < 3 || separator + 1 >= argc) {
        std::fprintf(stderr, "usage: exercises_expect STATUS PATTERN... -- COMMAND...\n");
        return 2;
    }
    const int want_status = std::atoi(argv[1]);
    std::string output;
    const int status = run(argv + separator + 1, output);
    std::fwrite(output.data(), 1, output.size(), stdout);
    if (!output.empty() && output.back() != '\n') std::fputc('\n', stdout);
    if (status != want_status) {
        std::printf("expect: exit status %d, expected %d\n", status, want_status);
        return 1;
    }
    std::vector<std::wstring> lines(1);
    for (wchar_t ch : decode_utf8(output)) {
        if (ch == L'\n')
            lines.emplace_back();
        else
            lines.back().push_back(ch);
    }
    for (int i = 2; i < separator; ++i) {
        std::wregex pattern;
        try {
            pattern = std::wregex(decode_utf8(argv[i]));
        } catch (const std::regex_error& e) {
            std::printf("expect: bad pattern %s: %s\n", argv[i], e.what());
            return 1;
        }
        bool found = false;
        for (const std::wstring& line : lines)
            if (std::regex_search(line, pattern)) {
                found = true;
                break;
            }
        if (!found) {
            std::printf("expect: no match for: %s\n", argv[i]);
            return 1;
        }
    }
    std::printf("expect: ok\n");
    return 0;
}
