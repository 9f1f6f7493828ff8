// The documentation's code pointers cannot go stale: every path README.md and docs/*.md name
// exists, and every function or type they name occurs in the code (in the very file, when the
// page gives the file). And no page — README.md, docs/*.md, bench/RESULTS.md — names an absolute
// path of some machine. The checkers themselves are tested on pages with known problems.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "docs_pointers.h"

using seqgrad::testing::check_doc_pointers;
using seqgrad::testing::CodeIndex;
using seqgrad::testing::DocProblem;
using seqgrad::testing::find_machine_paths;

namespace {

const CodeIndex& code_index() {
    static const CodeIndex index(SEQGRAD_SOURCE_DIR);
    return index;
}

std::string describe(const std::vector<DocProblem>& problems) {
    std::string out;
    for (const auto& p : problems)
        out += p.page + ":" + std::to_string(p.line) + ": " + p.message + "\n";
    return out;
}

std::vector<DocProblem> check(const std::string& text) {
    return check_doc_pointers("docs/example.md", text, code_index());
}

}  // namespace

TEST_CASE("the pointer checker accepts pointers that are true") {
    const auto problems = check(
        "| mask | `masked_fill` (`autograd/ops_elementwise.cpp`) |\n"
        "`Seq2Seq::forward_loss` in `models/model/seq2seq.cpp`, the folder `autograd/`,\n"
        "`models/model/seq2seq.cpp`'s `Encoder`, `Tensor` alone, [other page](attention.md),\n"
        "`make_result` (`autograd/tensor.h` / `autograd/tensor.cpp`), key `model.hidden_size`.\n"
        "```sh\n`not/a/path.cpp` inside a fence is a command, not a pointer\n```\n");
    INFO(describe(problems));
    CHECK(problems.empty());
}

TEST_CASE("the pointer checker finds each kind of stale pointer") {
    SUBCASE("a path that does not exist") {
        const auto problems = check("see `autograd/ops_gone.cpp`\n");
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].line == 1);
        CHECK(problems[0].message.find("autograd/ops_gone.cpp") != std::string::npos);
    }
    SUBCASE("a name that is not in the file it is given with") {
        const auto problems = check("x\n`masked_fill` (`autograd/ops_matmul.cpp`)\n");
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].line == 2);
        CHECK(problems[0].message.find("does not occur in autograd/ops_matmul.cpp") !=
              std::string::npos);
    }
    SUBCASE("a qualified name whose member is missing") {
        CHECK(check("`Seq2Seq::no_such_member_anywhere` in `models/model/seq2seq.cpp`\n").size() ==
              1);
    }
    SUBCASE("a name that occurs nowhere in the code") {
        // Built from two pieces, so that this file does not contain the name it looks for.
        CHECK(check("the op `no_such_" + std::string("function` does it\n")).size() == 1);
    }
    SUBCASE("a test executable with no source") {
        CHECK(check("`unit_test_" + std::string("nothing`\n")).size() == 1);
    }
    SUBCASE("a line number past the end of the file") {
        CHECK(check("`autograd/ops.h:99999`\n").size() == 1);
    }
    SUBCASE("a relative link to a missing page") {
        CHECK(check("[missing](no-such-page.md)\n").size() == 1);
    }
    SUBCASE("a config key the config reader does not read") {
        CHECK(check("`model.no_such_key`\n").size() == 1);
    }
}

TEST_CASE("README.md and every page of docs/ point only at code that exists") {
    namespace fs = std::filesystem;
    const fs::path root(SEQGRAD_SOURCE_DIR);
    std::vector<std::string> pages = {"README.md"};
    for (const auto& entry : fs::directory_iterator(root / "docs"))
        if (entry.path().extension() == ".md")
            pages.push_back("docs/" + entry.path().filename().string());
    CHECK(pages.size() >= 3);
    for (const auto& page : pages) {
        const auto problems =
            check_doc_pointers(page, seqgrad::testing::read_text_file(root / page), code_index());
        INFO(describe(problems));
        CHECK_MESSAGE(problems.empty(), page);
    }
}

TEST_CASE("the machine-path checker finds absolute paths of a machine, and only those") {
    const auto problems = find_machine_paths(
        "docs/example.md",
        "run `/work/wt-x/build/seqgrad train` here\n"
        "relative: `build/seqgrad`, configs/tmp/a.json, https://example.org/home/page\n"
        "```sh\ncd /tmp/seqgrad-run && ls\n```\n"
        "(see /home/someone/data.tsv) and \"/root/x\", ~/work/y, /usr/include/seqgrad\n"
        "/tmpfs and /workspace are other names; /var/tmp/z is one\n");
    INFO(describe(problems));
    REQUIRE(problems.size() == 5);
    CHECK(problems[0].line == 1);
    CHECK(problems[0].message.find("`/work/wt-x/build/seqgrad`") != std::string::npos);
    CHECK(problems[1].line == 4);  // inside a code block too
    CHECK(problems[1].message.find("`/tmp/seqgrad-run`") != std::string::npos);
    CHECK(problems[2].message.find("`/home/someone/data.tsv`") != std::string::npos);
    CHECK(problems[3].message.find("`/root/x`") != std::string::npos);
    CHECK(problems[4].line == 7);
    CHECK(problems[4].message.find("`/var/tmp/z`") != std::string::npos);
}

TEST_CASE("README.md, docs/ and bench/RESULTS.md name no absolute path of a machine") {
    namespace fs = std::filesystem;
    const fs::path root(SEQGRAD_SOURCE_DIR);
    std::vector<std::string> pages = {"README.md", "bench/RESULTS.md"};
    for (const auto& entry : fs::directory_iterator(root / "docs"))
        if (entry.path().extension() == ".md")
            pages.push_back("docs/" + entry.path().filename().string());
    for (const auto& page : pages) {
        REQUIRE_MESSAGE(fs::exists(root / page), page);
        const auto problems =
            find_machine_paths(page, seqgrad::testing::read_text_file(root / page));
        INFO(describe(problems));
        CHECK_MESSAGE(problems.empty(), page, ": ", problems.size(),
                      " absolute path(s) of a machine (listed above, file:line)");
    }
}
