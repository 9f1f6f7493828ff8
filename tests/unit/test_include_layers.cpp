// The includes of the library point only down, so the architecture drawn in the design card
// stays true of the code:
//   - between folders: apps -> models -> layers, optim, data -> autograd; data and autograd
//     include nothing of the others;
//   - inside autograd/, between its floors (lowest first):
//       base       real, error, shape, rng, broadcast, the buffer pool: sizes, errors and
//                  storage, no tensors
//       kernel     the switches, the thread pool, gemm, the reference row kernels, and the fast
//                  products and row kernels: loops over arrays, no graph
//       graph      tensor: the node, the graph, backward; kernel_hooks: the two hooks the
//                  kernels below the seam plug into (NodeExtension, LeafGradientSink);
//                  tape_scope: the scope labels record() gives the nodes it records
//       seam       the kernel interface (autograd/kernels/kernels.h), its reference and fast
//                  versions of the kernels that work on graph nodes
//       ops        the ops, the fused ops, gradcheck: call the interface, name no fast kernel
//     A file includes only files of its own floor or lower, and no file of the base and graph
//     floors includes anything of autograd/kernels/ (the graph reads like the textbook: Node and
//     Tensor, with nothing of the kernels under them);
//   - no file of the library outside autograd/kernels/ includes autograd/kernels/fast/ (the fast
//     kernels are reached through the interface only; tests and benchmarks may look inside);
//   - the rooms of models/ (model, formats, decoding, run, training, distributed) include each
//     other without a cycle, and so do the rooms of apps/ (cli, attention, studies, explore...);
//     models/model/ includes nothing of run/ or training/: the model knows nothing of runs and
//     training;
//   - what `seqgrad translate` compiles and loads (apps/cli/cmd_translate.cpp, load_run,
//     the translator) includes no file of models/training/: inference never passes through the
//     training room;
//   - the decoding interface includes beam search's observer, not the explorer's trace that
//     implements it (models/ includes nothing of apps/).
// The checker itself is tested on includes that break each rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Include {
    std::string from;  // repository path of the including file, e.g. autograd/tensor.cpp
    int line;
    std::string to;  // repository path of the included file, e.g. autograd/shape.h
};

// The #include "seqgrad/..." and "apps/..." lines of `text`, as repository paths.
std::vector<Include> includes_of(const std::string& from, const std::string& text) {
    static const std::regex include(R"(^\s*#\s*include\s*[<"](seqgrad/)?(apps/[^">]+|[^">]+)[">])");
    std::vector<Include> out;
    std::istringstream in(text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const bool ours = m[1].matched || m[2].str().rfind("apps/", 0) == 0;
        if (ours) out.push_back({from, n, m[2].str()});
    }
    return out;
}

std::string top_folder(const std::string& path) {
    return path.substr(0, path.find('/'));
}

// The floor of a file of autograd/ (higher includes lower); see the comment at the top.
int autograd_floor(const std::string& path) {
    const std::string name = fs::path(path).stem().string();
    const std::string file = fs::path(path).filename().string();
    const bool in_kernels = path.rfind("autograd/kernels/", 0) == 0;
    const bool in_fast = path.rfind("autograd/kernels/fast/", 0) == 0;
    if (!in_kernels) {
        if (name == "real" || name == "error" || name == "shape" || name == "rng" ||
            name == "broadcast" || name == "buffer_pool")
            return 0;
        if (name == "tensor" || name == "tape_scope" || name == "kernel_hooks") return 2;
        return 4;  // ops, fused ops, gradcheck, and whatever else is built on them
    }
    if (in_fast) {
        if (file == "simd.h" || file == "vector_kernels.h" || name == "gemm" ||
            file == "gemm_kernels.h")
            return 1;
        return 3;  // the fast kernels that work on graph nodes
    }
    if (name == "switches" || name == "parallel" || name == "gemm" || file == "kernels_reference.h")
        return 1;
    return 3;  // the interface and the reference kernels on nodes
}

const char* floor_name(int floor) {
    static const char* names[] = {"base", "kernel", "graph", "seam", "ops"};
    return names[floor];
}

// Every include that runs against the rules, one line each: "file:line: why".
std::vector<std::string> check_includes(const std::vector<Include>& includes) {
    // What each folder may include besides itself.
    auto allowed = [](const std::string& from, const std::string& to) {
        if (from == to || from == "apps") return true;
        if (from == "models")
            return to == "layers" || to == "optim" || to == "data" || to == "autograd";
        if (from == "layers" || from == "optim") return to == "autograd";
        return false;  // data, autograd
    };
    std::vector<std::string> problems;
    for (const Include& inc : includes) {
        const std::string where =
            inc.from + ":" + std::to_string(inc.line) + ": includes " + inc.to + ": ";
        const std::string from = top_folder(inc.from), to = top_folder(inc.to);
        if (!allowed(from, to)) {
            problems.push_back(where + from + "/ may not include " + to + "/ (arrows point down)");
            continue;
        }
        const bool to_fast = inc.to.rfind("autograd/kernels/fast/", 0) == 0;
        if (to_fast && inc.from.rfind("autograd/kernels/", 0) != 0) {
            problems.push_back(where +
                               "only autograd/kernels/ reaches the fast kernels; call the "
                               "interface, autograd/kernels/kernels.h");
            continue;
        }
        if (from == "autograd" && to == "autograd") {
            const int a = autograd_floor(inc.from), b = autograd_floor(inc.to);
            const bool from_kernels = inc.from.rfind("autograd/kernels/", 0) == 0;
            const bool to_kernels = inc.to.rfind("autograd/kernels/", 0) == 0;
            if (!from_kernels && a <= 2 && to_kernels) {
                problems.push_back(where + "the " + floor_name(a) +
                                   " floor includes nothing of autograd/kernels/");
                continue;
            }
            if (b > a)
                problems.push_back(where + "the " + floor_name(a) + " floor includes the " +
                                   floor_name(b) + " floor above it");
        }
    }
    return problems;
}

// The room of a file of models/ or apps/, two levels down ("models/run/config.h" -> "models/run",
// "apps/cli/args.h" -> "apps/cli"), or "" for any other file.
std::string room_of(const std::string& path) {
    const std::string top = top_folder(path);
    if (top != "models" && top != "apps") return "";
    const size_t slash = path.find('/', top.size() + 1);
    return slash == std::string::npos ? "" : path.substr(0, slash);
}

// A cycle among the rooms of models/ or of apps/, as "a -> b -> a" with one include for each
// arrow, or "" when there is none; and every include of models/model/ into run/ or training/.
std::vector<std::string> check_rooms(const std::vector<Include>& includes) {
    std::map<std::string, std::map<std::string, const Include*>> arrows;  // room -> room
    std::vector<std::string> problems;
    for (const Include& inc : includes) {
        const std::string a = room_of(inc.from), b = room_of(inc.to);
        if (a.empty() || b.empty() || a == b) continue;
        arrows[a].emplace(b, &inc);
        if (a == "models/model" && (b == "models/run" || b == "models/training"))
            problems.push_back(inc.from + ":" + std::to_string(inc.line) + ": includes " + inc.to +
                               ": models/model/ includes nothing of " + b + "/");
    }
    // Depth-first search; a room met again while on the path closes a cycle.
    std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
    std::vector<std::string> path;
    std::function<bool(const std::string&)> visit = [&](const std::string& room) {
        state[room] = 1;
        path.push_back(room);
        for (const auto& [next, inc] : arrows[room]) {
            if (state[next] == 1) {
                std::string cycle;
                auto from = std::find(path.begin(), path.end(), next);
                for (auto it = from; it != path.end(); ++it) {
                    const std::string to = it + 1 == path.end() ? next : *(it + 1);
                    const Include* why = arrows[*it][to];
                    cycle += *it + " -> " + to + " (" + why->from + ":" +
                             std::to_string(why->line) + ")  ";
                }
                problems.push_back("rooms include each other in a cycle: " + cycle);
                return true;
            }
            if (state[next] == 0 && visit(next)) return true;
        }
        path.pop_back();
        state[room] = 2;
        return false;
    };
    for (const auto& [room, to] : arrows)
        if (state[room] == 0 && visit(room)) break;
    return problems;
}

// The files reached from `roots` through their includes (the roots too).
std::set<std::string> include_closure(const std::vector<Include>& includes,
                                      const std::vector<std::string>& roots) {
    std::map<std::string, std::vector<std::string>> out;
    for (const Include& inc : includes) out[inc.from].push_back(inc.to);
    std::set<std::string> seen(roots.begin(), roots.end());
    std::vector<std::string> todo(roots.begin(), roots.end());
    while (!todo.empty()) {
        const std::string file = todo.back();
        todo.pop_back();
        for (const std::string& to : out[file])
            if (seen.insert(to).second) todo.push_back(to);
    }
    return seen;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

}  // namespace

TEST_CASE("the include checker finds each kind of include that runs up") {
    auto check = [](const std::string& from, const std::string& text) {
        return check_includes(includes_of(from, text));
    };
    CHECK(check("autograd/ops_matmul.cpp",
                "#include \"seqgrad/autograd/kernels/kernels.h\"\n#include <vector>\n")
              .empty());
    CHECK(check("models/run/config.cpp", "#include \"seqgrad/data/utf8.h\"\n").empty());
    SUBCASE("a core file that includes a fast kernel") {
        const auto problems = check("autograd/ops_matmul.cpp",
                                    "\n#include \"seqgrad/autograd/kernels/fast/gemm.h\"\n");
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].find("autograd/ops_matmul.cpp:2:") == 0);
        CHECK(problems[0].find("kernels/kernels.h") != std::string::npos);
    }
    SUBCASE("a layer that includes a fast kernel") {
        CHECK(check("layers/linear.cpp", "#include \"seqgrad/autograd/kernels/fast/kernels.h\"\n")
                  .size() == 1);
    }
    SUBCASE("the graph that includes the kernel interface") {
        const auto problems =
            check("autograd/tensor.cpp", "#include \"seqgrad/autograd/kernels/kernels.h\"\n");
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].find("the graph floor includes nothing of autograd/kernels/") !=
              std::string::npos);
    }
    SUBCASE("the tensor that includes a kernel utility") {
        const auto problems =
            check("autograd/tensor.h", "#include \"seqgrad/autograd/kernels/switches.h\"\n");
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].find("includes nothing of autograd/kernels/") != std::string::npos);
    }
    SUBCASE("a shape file that includes the graph") {
        CHECK(check("autograd/shape.cpp", "#include \"seqgrad/autograd/tensor.h\"\n").size() == 1);
    }
    SUBCASE("a kernel utility that includes the graph") {
        CHECK(check("autograd/kernels/switches.cpp", "#include \"seqgrad/autograd/tensor.h\"\n")
                  .size() == 1);
    }
    SUBCASE("a folder that includes one above it") {
        CHECK(check("autograd/tensor.h", "#include \"seqgrad/layers/linear.h\"\n").size() == 1);
        CHECK(check("data/vocab.cpp", "#include \"seqgrad/autograd/tensor.h\"\n").size() == 1);
        CHECK(check("layers/linear.cpp", "#include \"seqgrad/models/model/seq2seq.h\"\n").size() ==
              1);
        CHECK(check("models/model/seq2seq.cpp", "#include \"apps/plot/plot.h\"\n").size() == 1);
    }
}

TEST_CASE(
    "the room checker finds a cycle among the rooms of models/ or of apps/ and the model's "
    "upward includes") {
    const std::vector<Include> knot = {{"models/run/run.cpp", 3, "models/training/checkpoint.h"},
                                       {"models/training/trainer.h", 9, "models/run/config.h"},
                                       {"models/decoding/translator.h", 4, "models/run/task.h"}};
    const auto problems = check_rooms(knot);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].find("models/run -> models/training (models/run/run.cpp:3)") !=
          std::string::npos);
    CHECK(problems[0].find("models/training -> models/run (models/training/trainer.h:9)") !=
          std::string::npos);
    CHECK(check_rooms({knot[1], knot[2]}).empty());
    const auto apps_knot = check_rooms({{"apps/cli/cmd_gradflow.cpp", 9, "apps/studies/gradflow.h"},
                                        {"apps/studies/options.cpp", 7, "apps/cli/args.h"}});
    REQUIRE(apps_knot.size() == 1);
    CHECK(apps_knot[0].find("apps/studies -> apps/cli (apps/studies/options.cpp:7)") !=
          std::string::npos);
    CHECK(check_rooms({{"apps/cli/cmd_attention.cpp", 10, "apps/attention/attention_report.h"},
                       {"apps/explore/explore_data.cpp", 14, "apps/attention/attention_report.h"}})
              .empty());
    const auto upward = check_rooms({{"models/model/seq2seq.h", 41, "models/run/config.h"}});
    REQUIRE(upward.size() == 1);
    CHECK(upward[0].find("models/model/ includes nothing of models/run/") != std::string::npos);
    const auto closure = include_closure(knot, {"models/run/run.cpp"});
    CHECK(closure.count("models/training/checkpoint.h") == 1);
    CHECK(closure.count("models/run/config.h") == 0);
}

// Every include of the library and the command line.
static std::vector<Include> library_includes() {
    const fs::path root(SEQGRAD_SOURCE_DIR);
    std::vector<Include> includes;
    int files = 0;
    for (const char* folder : {"autograd", "layers", "optim", "models", "data", "apps"}) {
        for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
            const std::string ext = entry.path().extension().string();
            if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
            const std::string path = fs::relative(entry.path(), root).generic_string();
            const auto found = includes_of(path, read_file(entry.path()));
            includes.insert(includes.end(), found.begin(), found.end());
            ++files;
        }
    }
    CHECK(files > 100);
    CHECK(includes.size() > 300);
    return includes;
}

TEST_CASE("every include of the library points down") {
    const std::vector<Include> includes = library_includes();
    const auto problems = check_includes(includes);
    INFO(joined(problems));
    CHECK_MESSAGE(problems.empty(), problems.size(), " include(s) run up (listed above)");
}

TEST_CASE("the rooms of models/, and those of apps/, include each other without a cycle") {
    const auto problems = check_rooms(library_includes());
    INFO(joined(problems));
    CHECK(problems.empty());
}

TEST_CASE("translate compiles and loads nothing of the training room") {
    const auto closure = include_closure(
        library_includes(),
        {"apps/cli/cmd_translate.cpp", "models/run/run.cpp", "models/decoding/translator.cpp"});
    CHECK(closure.count("models/decoding/translator.h") == 1);
    CHECK(closure.count("models/formats/checkpoint.h") == 1);
    std::string training;
    for (const std::string& file : closure)
        if (file.rfind("models/training/", 0) == 0) training += " " + file;
    INFO("included by translate:", training);
    CHECK(training.empty());
}

TEST_CASE("the decoding interface knows the beam observer, not the explorer's trace") {
    const auto closure = include_closure(library_includes(), {"models/decoding/decoding.h"});
    CHECK(closure.count("models/decoding/beam_observer.h") == 1);
    CHECK(closure.count("apps/explore/beam_trace.h") == 0);
}
