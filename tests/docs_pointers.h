// Checks the code pointers of the documentation: every file path a page names exists, and every
// function or type name it gives with a path occurs in that file. A page that says "`gru_cell`
// (`autograd/ops_fused_gru.cpp`)" after gru_cell moved elsewhere fails the test that uses this.
//
// What counts as a pointer, in the prose and tables of a Markdown page (fenced code blocks are
// commands and output, not pointers, and are skipped):
//   - a code span that is a repository path: `autograd/tensor.h`, `bench/`, `CMakeLists.txt`
//     (its first folder exists at the root of the repository; a trailing :LINE must be a line of
//     it);
//   - a relative Markdown link target: [gradient flow](gradient-flow.md), resolved against the
//   page;
//   - a code span that is a C++ name — `Seq2Seq::forward_loss`, `gru_cell_step`, `StepModel` —
//   which
//     must occur somewhere in the code; and in the file when the page gives it with a path:
//     "`name` (`path`)", "`name` (`path` / `other/path`)", "`name` in `path`" or "`path`'s `name`";
//   - a test executable, `unit_test_gemm`: built from tests/unit/test_gemm.cpp;
//   - a config key of the README's table, `model.hidden_size`: its last part is a key that
//     models/run/config.cpp reads, or a field of a config table (models/run/config.h,
//     models/model/*_config.h: `FIELD(int, hidden_size, ...`) (`train.lock`, a file name, is
//     not a key).
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace seqgrad::testing {

struct DocProblem {
    std::string page;  // e.g. docs/attention.md
    int line = 0;
    std::string message;
};

inline std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The code a pointer may land in: every source, script and build file of the repository.
class CodeIndex {
  public:
    explicit CodeIndex(std::filesystem::path root) : root_(std::move(root)) {
        namespace fs = std::filesystem;
        static const std::set<std::string> folders = {"autograd", "layers", "optim",   "models",
                                                      "data",     "apps",   "tests",   "bench",
                                                      "scripts",  "cmake",  "examples"};
        static const std::set<std::string> extensions = {".h",  ".cpp", ".py",  ".sh",   ".cmake",
                                                         ".in", ".js",  ".css", ".html", ".txt"};
        for (const auto& folder : folders) {
            if (!fs::is_directory(root_ / folder)) continue;
            for (const auto& entry : fs::recursive_directory_iterator(root_ / folder)) {
                if (!entry.is_regular_file()) continue;
                const auto ext = entry.path().extension().string();
                if (extensions.count(ext) || entry.path().filename() == "run")
                    sources_.push_back(read_text_file(entry.path()));
            }
        }
        if (fs::exists(root_ / "CMakeLists.txt"))
            sources_.push_back(read_text_file(root_ / "CMakeLists.txt"));
    }

    const std::filesystem::path& root() const { return root_; }

    // Whether `word` occurs in `text` with no identifier character on either side.
    static bool has_word(const std::string& text, const std::string& word) {
        auto is_ident = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        };
        for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
            const bool left_ok = at == 0 || !is_ident(text[at - 1]);
            const size_t end = at + word.size();
            const bool right_ok = end >= text.size() || !is_ident(text[end]);
            if (left_ok && right_ok) return true;
        }
        return false;
    }

    // `A::b` occurs in a text that has both A and b; a plain name where it occurs as a word.
    static bool text_has_name(const std::string& text, const std::string& name) {
        size_t from = 0;
        for (size_t sep = name.find("::"); sep != std::string::npos; sep = name.find("::", from)) {
            if (!has_word(text, strip_tilde(name.substr(from, sep - from)))) return false;
            from = sep + 2;
        }
        return has_word(text, strip_tilde(name.substr(from)));
    }

    bool code_has_name(const std::string& name) const {
        return std::any_of(sources_.begin(), sources_.end(),
                           [&](const std::string& s) { return text_has_name(s, name); });
    }

  private:
    static std::string strip_tilde(const std::string& s) {
        return !s.empty() && s[0] == '~' ? s.substr(1) : s;
    }
    std::filesystem::path root_;
    std::vector<std::string> sources_;
};

namespace docs_detail {

struct Span {
    std::string text;
    size_t begin = 0;  // offset of the opening backtick in the line
    size_t end = 0;    // offset just past the closing backtick
};

inline std::vector<Span> code_spans(const std::string& line) {
    std::vector<Span> spans;
    for (size_t at = line.find('`'); at != std::string::npos;) {
        const size_t close = line.find('`', at + 1);
        if (close == std::string::npos) break;
        spans.push_back({line.substr(at + 1, close - at - 1), at, close + 1});
        at = line.find('`', close + 1);
    }
    return spans;
}

// A path into the repository: its first part is a top-level folder (or it is a top-level file).
inline bool is_repo_path(const std::string& s, const std::filesystem::path& root) {
    static const std::regex path_re(R"(^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*/?(:[0-9]+)?$)");
    if (!std::regex_match(s, path_re)) return false;
    const size_t slash = s.find('/');
    if (slash == std::string::npos)
        return s == "CMakeLists.txt" || s == "README.md" || s == "LICENSE";
    const std::string first = s.substr(0, slash);
    return first != "." && first != ".." && std::filesystem::is_directory(root / first) &&
           first != "build" && first != "runs";
}

inline bool is_cpp_name(const std::string& s) {
    static const std::regex name_re(
        R"(^~?[A-Za-z_][A-Za-z0-9_]*(::~?[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$)");
    return std::regex_match(s, name_re);
}

// Whether a name is code-like enough to be looked up in the code when the page gives it alone:
// qualified, snake_case, called, or a CamelCase type. Single lower-case words (`matmul`, `none`)
// are checked only when the page pairs them with a path.
inline bool is_distinctive_name(const std::string& s) {
    if (s.find("::") != std::string::npos || s.find('_') != std::string::npos ||
        s.find("()") != std::string::npos)
        return true;
    const bool upper_first = std::isupper(static_cast<unsigned char>(s[0]));
    const bool has_lower =
        std::any_of(s.begin(), s.end(), [](char c) { return std::islower((unsigned char)c); });
    return upper_first && has_lower;
}

inline std::string strip_call(std::string s) {
    if (s.size() > 2 && s.compare(s.size() - 2, 2, "()") == 0) s.resize(s.size() - 2);
    return s;
}

inline std::string strip_line_suffix(const std::string& path) {
    const size_t colon = path.find(':');
    return colon == std::string::npos ? path : path.substr(0, colon);
}

inline bool is_space_only(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isspace((unsigned char)c); });
}

}  // namespace docs_detail

// Checks one page's text; `page` is its path relative to the root (for the messages and links).
inline std::vector<DocProblem> check_doc_pointers(const std::string& page, const std::string& text,
                                                  const CodeIndex& code) {
    namespace fs = std::filesystem;
    using namespace docs_detail;
    std::vector<DocProblem> problems;
    const fs::path root = code.root();
    const fs::path page_dir = fs::path(page).parent_path();
    static const std::regex link_re(R"(\]\(([^)\s]+)\))");
    static const std::regex config_key_re(R"(^(data|model|train|decode|output)\.([a-z_0-9]+)$)");
    std::string config_source;
    for (const char* file : {"models/run/config.cpp", "models/run/config.h",
                             "models/model/model_config.h", "models/model/model_config.cpp",
                             "models/model/seq2seq_config.h", "models/model/transformer_config.h"})
        if (fs::exists(root / file)) config_source += read_text_file(root / file);

    std::istringstream lines(text);
    std::string line;
    bool in_fence = false;
    for (int number = 1; std::getline(lines, line); ++number) {
        auto problem = [&](const std::string& message) {
            problems.push_back({page, number, message});
        };
        if (line.rfind("```", line.find_first_not_of(' ')) == line.find_first_not_of(' ') &&
            line.find("```") != std::string::npos) {
            in_fence = !in_fence;
            continue;
        }
        if (in_fence) continue;

        for (auto it = std::sregex_iterator(line.begin(), line.end(), link_re);
             it != std::sregex_iterator(); ++it) {
            std::string target = (*it)[1].str();
            if (target.find("://") != std::string::npos || target[0] == '#' ||
                target.rfind("mailto:", 0) == 0)
                continue;
            target = target.substr(0, target.find('#'));
            if (!fs::exists(root / page_dir / target))
                problem("link to " + target + ", which does not exist");
        }

        const std::vector<Span> spans = code_spans(line);
        std::vector<bool> is_path(spans.size());
        for (size_t i = 0; i < spans.size(); ++i) {
            const std::string& s = spans[i].text;
            if (!is_repo_path(s, root)) continue;
            is_path[i] = true;
            const std::string file = strip_line_suffix(s);
            // `bench/buffer_pool` names the program built from bench/buffer_pool.cpp.
            if (!fs::exists(root / file) && !fs::exists(root / (file + ".cpp"))) {
                problem("`" + s + "` does not exist");
                continue;
            }
            if (file.size() != s.size()) {
                const int wanted = std::stoi(s.substr(file.size() + 1));
                const std::string body = read_text_file(root / file);
                const int count = int(std::count(body.begin(), body.end(), '\n'));
                if (wanted < 1 || wanted > count)
                    problem("`" + s + "`: the file has " + std::to_string(count) + " lines");
            }
        }

        // The paths a name at span i is given with.
        auto paired_paths = [&](size_t i) {
            std::vector<std::string> paths;
            if (i + 1 < spans.size()) {
                const std::string gap =
                    line.substr(spans[i].end, spans[i + 1].begin - spans[i].end);
                const bool opens = gap.find('(') != std::string::npos &&
                                   is_space_only(gap.substr(0, gap.find('('))) &&
                                   is_space_only(gap.substr(gap.find('(') + 1));
                if ((opens || gap == " in ") && is_path[i + 1]) {
                    for (size_t j = i + 1; j < spans.size() && is_path[j]; ++j) {
                        paths.push_back(strip_line_suffix(spans[j].text));
                        if (j + 1 >= spans.size()) break;
                        const std::string sep =
                            line.substr(spans[j].end, spans[j + 1].begin - spans[j].end);
                        if (sep != " / " && sep != ", ") break;
                    }
                }
            }
            if (i > 0 && is_path[i - 1] &&
                line.substr(spans[i - 1].end, spans[i].begin - spans[i - 1].end) == "'s ")
                paths.push_back(strip_line_suffix(spans[i - 1].text));
            return paths;
        };

        for (size_t i = 0; i < spans.size(); ++i) {
            if (is_path[i]) continue;
            const std::string& s = spans[i].text;
            std::smatch key;
            static const std::set<std::string> file_suffixes = {
                "lock", "json", "jsonl",       "svg",   "html",
                "tsv",  "txt",  "safetensors", "codes", "log"};
            if (std::regex_match(s, key, config_key_re) && !file_suffixes.count(key[2].str())) {
                if (!config_source.empty() &&
                    config_source.find("\"" + key[2].str() + "\"") == std::string::npos &&
                    config_source.find(", " + key[2].str() + ", ") == std::string::npos)
                    problem("config key `" + s + "` is not read by models/run/config.cpp");
                continue;
            }
            if (!is_cpp_name(s) || s[0] == '_') continue;  // `_valid`: a suffix of the key before
            const std::string name = strip_call(s);
            std::smatch test_target;
            static const std::regex test_target_re(R"(^(unit|train)_(test_[a-z0-9_]+)$)");
            if (std::regex_match(name, test_target, test_target_re)) {  // a ctest executable
                const std::string source =
                    "tests/" + test_target[1].str() + "/" + test_target[2].str() + ".cpp";
                if (!fs::exists(root / source))
                    problem("`" + s + "`: there is no " + source + " to build it from");
                continue;
            }
            const std::vector<std::string> paths = paired_paths(i);
            if (!paths.empty()) {
                const bool found = std::any_of(paths.begin(), paths.end(), [&](const auto& p) {
                    const fs::path file = root / p;
                    return fs::is_regular_file(file) &&
                           CodeIndex::text_has_name(read_text_file(file), name);
                });
                if (!found) {
                    std::string where;
                    for (const auto& p : paths) where += (where.empty() ? "" : " / ") + p;
                    problem("`" + s + "` does not occur in " + where);
                }
            } else if (is_distinctive_name(s) && !code.code_has_name(name)) {
                problem("`" + s + "` occurs nowhere in the code");
            }
        }
    }
    return problems;
}

// Absolute paths of some machine — a developer's worktree, a temporary folder, a home folder —
// in a page of the project (code blocks included): they are true on one machine only. A page
// names paths relative to the repository, or a placeholder (RUN_DIR, BUILD_DIR). System paths
// such as /usr/include are not looked for. One problem per path, naming it.
inline std::vector<DocProblem> find_machine_paths(const std::string& page,
                                                  const std::string& text) {
    static const std::vector<std::string> roots = {"/work",  "/tmp", "/home",    "/root",
                                                   "/Users", "/mnt", "/scratch", "/var/tmp"};
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::vector<DocProblem> problems;
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
        std::vector<size_t> starts;  // where a path of some machine starts on this line
        for (const std::string& root : roots)
            for (size_t at = line.find(root); at != std::string::npos;
                 at = line.find(root, at + 1)) {
                const char before = at == 0 ? ' ' : line[at - 1];
                const size_t end = at + root.size();
                const char after = end < line.size() ? line[end] : ' ';
                // not the tail of a longer path or word (configs/tmp, https://x.org/home/,
                // ~/work), and not a longer name (/tmpfs, /workspace)
                if (is_word(before) || std::string("./~-:").find(before) != std::string::npos)
                    continue;
                if (is_word(after) || after == '-' || after == '.') continue;
                starts.push_back(at);
            }
        std::sort(starts.begin(), starts.end());
        starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
        for (size_t at : starts) {
            const size_t end = line.find_first_of(" \t`'\"()[]<>,;|", at);
            const std::string path = line.substr(at, end == std::string::npos ? end : end - at);
            problems.push_back({page, number,
                                "absolute path of a machine `" + path +
                                    "`: name it relative to the repository, or by a placeholder"});
        }
    }
    return problems;
}

}  // namespace seqgrad::testing
