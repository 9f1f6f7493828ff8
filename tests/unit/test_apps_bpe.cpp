// `seqgrad bpe learn|apply|vocab|undo` (apps/cli/cmd_bpe.cpp) on in-memory input: subword-nmt's
// files come out, and bad arguments or input are errors that say what is wrong.
#include <doctest/doctest.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

const std::string kGolden = std::string(SEQGRAD_SOURCE_DIR) + "/tests/data/subword-nmt/";

// A file in this process's temporary folder, which goes when the process ends (the pid in its
// name: ctest runs the cases side by side).
std::string temp_file(const std::string& name) {
    static const testing::TempDir suite("apps_bpe");
    return suite.file(name);
}

// Runs `seqgrad bpe ARGS` with `input` on stdin; returns stdout.
std::string run_bpe(const Argv& args, const std::string& input) {
    std::istringstream in(input);
    std::ostringstream out;
    std::streambuf* old_in = std::cin.rdbuf(in.rdbuf());
    std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
    try {
        cmd_bpe(args);
    } catch (...) {
        std::cin.rdbuf(old_in);
        std::cout.rdbuf(old_out);
        throw;
    }
    std::cin.rdbuf(old_in);
    std::cout.rdbuf(old_out);
    return out.str();
}

}  // namespace

TEST_CASE("bpe learn and apply reproduce subword-nmt's reference files") {
    const std::string corpus = read_file(kGolden + "corpus.en");
    const std::string codes = run_bpe({"learn", "--merges", "1000"}, corpus);
    CHECK(codes == read_file(kGolden + "bpe.ref"));
    const std::string path = temp_file("golden.codes");
    write_file_atomically(path, codes);
    const std::string segmented = run_bpe({"apply", path}, corpus);
    CHECK(segmented == read_file(kGolden + "corpus.bpe.ref.en"));
    CHECK(run_bpe({"undo"}, segmented) == corpus);
}

TEST_CASE("bpe vocab counts tokens, most frequent first, and apply --vocabulary filters with it") {
    CHECK(run_bpe({"vocab"}, "b a@@ c\na@@ c b b\n") == "b 3\na@@ 2\nc 2\n");
    const std::string codes = temp_file("filter.codes"), vocab = temp_file("filter.vocab");
    write_file_atomically(codes, "#version: 0.2\nl o\nlo w</w>\n");
    write_file_atomically(vocab, "lo@@ 5\nw 3\nlow 1\n");
    CHECK(run_bpe({"apply", codes}, "low\n") == "low\n");
    CHECK(run_bpe({"apply", codes, "--vocabulary", vocab, "--vocabulary-threshold", "2"},
                  "low\n") == "lo@@ w\n");
}

TEST_CASE("bpe tokenize and detokenize: the reversible pre-tokeniser, line by line") {
    const std::string raw = "Ich habe Hunger.\n\"Oui\", dit-il.\n\n";
    const std::string tokens = run_bpe({"tokenize"}, raw);
    CHECK(tokens ==
          "Ich habe Hunger \xEF\xBF\xAD.\n\"\xEF\xBF\xAD Oui \xEF\xBF\xAD\" "
          "\xEF\xBF\xAD, dit-il \xEF\xBF\xAD.\n\n");
    CHECK(run_bpe({"detokenize"}, tokens) == raw);
    CHECK_THROWS_WITH(run_bpe({"tokenize"}, "ok\n\xFF\n"), doctest::Contains("stdin:2:"));
}

TEST_CASE("bpe: bad arguments and bad input are errors naming what is wrong") {
    CHECK_THROWS_WITH_AS(run_bpe({"learn"}, "a b\n"), doctest::Contains("--merges N is required"),
                         Error);
    CHECK_THROWS_WITH_AS(run_bpe({"learn", "--merges", "0"}, "a b\n"),
                         doctest::Contains("--merges: expected N > 0, got 0"), Error);
    CHECK_THROWS_WITH_AS(run_bpe({"learn", "--merges", "-2"}, "a b\n"), doctest::Contains("got -2"),
                         Error);
    CHECK_THROWS_WITH(run_bpe({"learn", "--merges", "5"}, "fine\nbad \xC3\n"),
                      doctest::Contains("stdin:2: not valid UTF-8"));
    const std::string bad = temp_file("bad.codes"), good = temp_file("good.codes");
    write_file_atomically(bad, "a b\n");
    CHECK_THROWS_WITH(run_bpe({"apply", bad}, "x\n"),
                      doctest::Contains((bad + ":1: not a BPE codes file").c_str()));
    write_file_atomically(good, "#version: 0.2\na b\n");
    CHECK_THROWS_WITH(run_bpe({"apply", good}, "ok\n\xFF\n"),
                      doctest::Contains("stdin:2: not valid UTF-8"));
    CHECK_THROWS_WITH(run_bpe({"apply"}, ""), doctest::Contains("expected one CODES file"));
    CHECK_THROWS_WITH(run_bpe({"fly"}, ""), doctest::Contains("unknown action \"fly\""));
    // More merges than the corpus allows: learning stops early (and says so on stderr).
    CHECK(run_bpe({"learn", "--merges", "100"}, "ab ab\n") == "#version: 0.2\na b</w>\n");
}
