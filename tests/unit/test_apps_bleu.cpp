// Tests for the `seqgrad bleu` and `seqgrad translate` command pieces (apps/cli/commands.h): line
// counts that differ are an error naming both counts and files, --score-only prints just the
// number, the whole command on in-memory input gives sacreBLEU's lines, invalid UTF-8 input is
// an error naming the line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "apps/cli/commands.h"

using namespace seqgrad;

namespace {

// A temporary file with `contents`, deleted at the end of the test.
struct TempFile {
    std::filesystem::path path;
    TempFile(const std::string& name, const std::string& contents)
        : path(std::filesystem::temp_directory_path() /
               ("seqgrad_test_apps_bleu_" + std::to_string(::getpid()) + "_" + name)) {
        std::ofstream(path, std::ios::binary) << contents;
    }
    ~TempFile() { std::filesystem::remove(path); }
    std::string str() const { return path.string(); }
};

std::string run_bleu(const Argv& args, const std::string& hypotheses) {
    std::istringstream in(hypotheses);
    return bleu_command_output(args, in);
}

std::string error_of(const Argv& args, const std::string& hypotheses) {
    try {
        run_bleu(args, hypotheses);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("mismatched line counts: the message names both counts and both sources") {
    try {
        check_line_counts("stdin", 3, "ref.de", 5);
        FAIL("no error");
    } catch (const std::exception& e) {
        const std::string message = e.what();
        CAPTURE(message);
        CHECK(message.find("3 lines") != std::string::npos);
        CHECK(message.find("has 5") != std::string::npos);
        CHECK(message.find("stdin") != std::string::npos);
        CHECK(message.find("ref.de") != std::string::npos);
    }
    CHECK_NOTHROW(check_line_counts("stdin", 4, "ref.de", 4));

    // Through the command: the second reference file is one line short.
    TempFile ref1("ref1.txt", "a b c\nd e f\n");
    TempFile ref2("ref2.txt", "a b c\n");
    const std::string message = error_of({ref1.str(), ref2.str()}, "a b c\nd e f\n");
    CAPTURE(message);
    CHECK(message.find("2 lines") != std::string::npos);
    CHECK(message.find(ref2.str() + " has 1") != std::string::npos);
    CHECK(error_of({ref1.str()}, "a b c\nd e f\n") == "");
}

TEST_CASE("--score-only prints the number with --width decimals") {
    CHECK(format_score_only(48.5312, 2) == "48.53");
    CHECK(format_score_only(48.5312, 1) == "48.5");
    CHECK(format_score_only(48.5312, 0) == "49");
    CHECK(format_score_only(100.0, 3) == "100.000");
    CHECK(format_score_only(0.0, 2) == "0.00");

    TempFile ref("ref.txt", "the cat sat on the mat\n");
    CHECK(run_bleu({ref.str(), "--score-only"}, "the cat sat on the mat\n") == "100.00\n");
    CHECK(run_bleu({ref.str(), "--score-only", "--width", "1"}, "the cat sat on the mat\n") ==
          "100.0\n");
    CHECK(run_bleu({ref.str(), "--score-only", "--metrics", "bleu,chrf"},
                   "the cat sat on the mat\n") == "100.00\n100.00\n");
    CHECK(run_bleu({ref.str(), "--score-only"}, "xyz\n") == "0.00\n");
}

TEST_CASE("corpus BLEU prints sacreBLEU's score line and the signature") {
    TempFile ref("ref.txt", "the cat sat on the mat\nit is raining today\n");
    const std::string out = run_bleu({ref.str()}, "the cat sat on the mat\nit is raining today\n");
    CHECK(out.rfind("BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 "
                    "hyp_len = 10 ref_len = 10)\n",
                    0) == 0);
    CHECK(out.find("BLEU signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp") !=
          std::string::npos);
    // Sentence level: one line per segment, nothing else.
    const std::string lines =
        run_bleu({ref.str(), "--sentence-level", "--score-only"}, "the cat sat on the mat\nno\n");
    CHECK(lines == "100.00\n0.00\n");
}

TEST_CASE("--metrics all: every published definition on its own labelled line") {
    TempFile ref("ref.txt", "The cat sat on the mat.\nIt's raining today!\n");
    const std::string hyps = "the cat sat on the mat .\nIt's raining today!\n";
    const std::string out = run_bleu({ref.str(), "--metrics", "all"}, hyps);
    CAPTURE(out);
    const std::string labels[] = {
        "BLEU cased 13a          BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|",
        "BLEU lower-cased        BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|",
        "BLEU intl               BLEU|nrefs:1|case:mixed|eff:no|tok:intl|smooth:exp|",
        "BLEU tutorial protocol  BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:none|",
        "chrF2                   chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|",
        "chrF++                  chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|"};
    size_t line_start = 0;
    for (const std::string& label : labels) {
        CHECK(out.compare(line_start, label.size(), label) == 0);
        line_start = out.find('\n', line_start) + 1;
    }
    CHECK(line_start == out.size());  // six lines, nothing else
    // Lower-casing turns "The" into a match: the case:lc line scores higher.
    const std::string both =
        run_bleu({ref.str(), "--metrics", "bleu,bleu-lc", "--score-only"}, hyps);
    CHECK(std::stod(both.substr(both.find('\n') + 1)) > std::stod(both));
}

TEST_CASE("--lowercase applies to chrF too, and --tokenize takes intl and char") {
    TempFile ref("ref.txt", "The Cat\n");
    CHECK(run_bleu({ref.str(), "--metrics", "chrf", "--score-only", "--lowercase"}, "the cat\n") ==
          "100.00\n");
    CHECK(run_bleu({ref.str(), "--metrics", "chrf", "--score-only"}, "the cat\n") != "100.00\n");
    CHECK(run_bleu({ref.str(), "--metrics", "chrf++", "--lowercase"}, "the cat\n")
              .find("chrF2++ = 100.00\nchrF2++ signature: nrefs:1|case:lc|eff:yes|nc:6|nw:2") == 0);
    CHECK(run_bleu({ref.str(), "--tokenize", "intl"}, "The Cat\n").find("tok:intl") !=
          std::string::npos);
    CHECK(run_bleu({ref.str(), "--tokenize", "char", "--score-only"}, "The Cat\n") == "100.00\n");
}

TEST_CASE("bad options and missing files are errors") {
    TempFile ref("ref.txt", "a\n");
    CHECK(error_of({}, "a\n").find("reference") != std::string::npos);
    CHECK(error_of({ref.str(), "--tokenize", "v14"}, "a\n") != "");
    CHECK(error_of({ref.str(), "--metrics", "ter"}, "a\n").find("ter") != std::string::npos);
    CHECK(error_of({ref.str(), "--metrics", "ter"}, "a\n").find("chrf++, all") !=
          std::string::npos);
    CHECK(error_of({ref.str(), "--widht", "3"}, "a\n").find("unknown option") != std::string::npos);
    CHECK(error_of({"/nonexistent/ref.txt"}, "a\n").find("/nonexistent/ref.txt") !=
          std::string::npos);
}

TEST_CASE("read_utf8_lines: CRLF is removed, invalid UTF-8 names the line") {
    std::istringstream good("one\r\ntwo\n\nfour");
    CHECK(read_utf8_lines(good, "in") == std::vector<std::string>{"one", "two", "", "four"});
    std::istringstream bad("fine\nalso fine\nbad \xff byte\n");
    try {
        read_utf8_lines(bad, "stdin");
        FAIL("no error");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()).find("stdin:3:") != std::string::npos);
    }
}
