// BPE learned and applied as subword-nmt does (data/bpe.h), checked against subword-nmt's own
// reference files (tests/data/subword-nmt/, MIT licence).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "seqgrad/data/bpe.h"
#include "seqgrad/data/file_io.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

const std::string kGolden = std::string(SEQGRAD_SOURCE_DIR) + "/tests/data/subword-nmt/";

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

WordCounts counts_of(const std::string& text) {
    WordCounts counts;
    std::istringstream in(text);
    counts.add_lines(in, "text");
    return counts;
}

std::string merges_text(const std::vector<BpeMerge>& merges) {
    return BpeCodes(merges).to_string();
}

}  // namespace

TEST_CASE("learning 1000 merges from subword-nmt's test corpus gives its reference codes") {
    std::ifstream corpus(kGolden + "corpus.en");
    REQUIRE(corpus);
    WordCounts counts;
    counts.add_lines(corpus, "corpus.en");
    BpeLearnResult learned = learn_bpe(counts, {1000, 2});
    CHECK_FALSE(learned.stopped_early);
    std::vector<std::string> got = lines_of(merges_text(learned.merges));
    std::vector<std::string> want = lines_of(read_file(kGolden + "bpe.ref"));
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        INFO("line " << i + 1);
        REQUIRE(got[i] == want[i]);
    }
}

TEST_CASE("applying the reference codes gives subword-nmt's segmented corpus byte for byte") {
    Bpe bpe(BpeCodes::load(kGolden + "bpe.ref"));
    std::vector<std::string> input = lines_of(read_file(kGolden + "corpus.en"));
    std::vector<std::string> want = lines_of(read_file(kGolden + "corpus.bpe.ref.en"));
    REQUIRE(input.size() == want.size());
    for (size_t i = 0; i < input.size(); ++i) {
        INFO("line " << i + 1);
        REQUIRE(bpe.apply_line(input[i]) == want[i]);
    }
}

TEST_CASE("undo_bpe inverts the segmentation of the reference corpus") {
    std::vector<std::string> input = lines_of(read_file(kGolden + "corpus.en"));
    std::vector<std::string> segmented = lines_of(read_file(kGolden + "corpus.bpe.ref.en"));
    for (size_t i = 0; i < input.size(); ++i) {
        INFO("line " << i + 1);
        REQUIRE(undo_bpe(segmented[i]) == input[i]);
    }
}

TEST_CASE("learn_bpe: ties go to the lexicographically largest pair, counts weigh by frequency") {
    // "ab" x2 and "cd" x2: pairs (a, b</w>) and (c, d</w>) both occur twice; "c" > "a" wins.
    BpeLearnResult r = learn_bpe(counts_of("ab cd ab cd\n"), {10, 2});
    REQUIRE(r.merges.size() == 2);
    CHECK(r.merges[0] == BpeMerge{"c", "d</w>"});
    CHECK(r.merges[1] == BpeMerge{"a", "b</w>"});
    CHECK(r.stopped_early);  // no pair left with frequency >= 2
    // One word seen 3 times outweighs two seen once.
    BpeLearnResult w = learn_bpe(counts_of("xy xy xy zq zw\n"), {1, 2});
    REQUIRE(w.merges.size() == 1);
    CHECK(w.merges[0] == BpeMerge{"x", "y</w>"});
}

TEST_CASE("learn_bpe counts overlapping pairs exactly (a a a a)") {
    // a a a a</w>: (a, a) occurs twice, (a, a</w>) once. Merging (a, a) left to right gives
    // aa a a</w>, whose pairs (aa, a) and (a, a</w>) occur once each: a tie, won by the larger
    // (aa, a) since "aa" > "a"; then aaa a</w> -> aaaa</w>.
    BpeLearnResult r = learn_bpe(counts_of("aaaa\n"), {10, 1});
    REQUIRE(r.merges.size() == 3);
    CHECK(r.merges[0] == BpeMerge{"a", "a"});
    CHECK(r.merges[1] == BpeMerge{"aa", "a"});
    CHECK(r.merges[2] == BpeMerge{"aaa", "a</w>"});
    CHECK(r.stopped_early);
    Bpe bpe{BpeCodes(r.merges)};
    CHECK(bpe.segment_word("aaaa") == std::vector<std::string>{"aaaa"});
    // a a a</w>: (a, a) first -> aa a</w>; (aa, a</w>) is not a code.
    CHECK(bpe.segment_word("aaa") == std::vector<std::string>{"aa", "a"});
}

TEST_CASE("learn_bpe rejects a non-positive number of merges and a bad min_frequency") {
    WordCounts c = counts_of("a b\n");
    CHECK_THROWS_WITH_AS(learn_bpe(c, {0, 2}), doctest::Contains("must be positive, got 0"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(learn_bpe(c, {-3, 2}), doctest::Contains("got -3"), std::invalid_argument);
    CHECK_THROWS_AS(learn_bpe(c, {5, 0}), std::invalid_argument);
}

TEST_CASE("a corpus line that is not UTF-8 is an error naming its line") {
    WordCounts c;
    std::istringstream in("good line\nbad \xff byte\n");
    CHECK_THROWS_WITH_AS(c.add_lines(in, "corpus.txt"),
                         doctest::Contains("corpus.txt:2: not valid UTF-8"), std::runtime_error);
}

TEST_CASE("codes files: round trip, and errors naming the file and line") {
    BpeCodes codes({{"a", "b"}, {"ab", "c</w>"}});
    CHECK(codes.to_string() == "#version: 0.2\na b\nab c</w>\n");
    CHECK(BpeCodes::parse(codes.to_string(), "x").merges() == codes.merges());
    CHECK_THROWS_WITH_AS(BpeCodes::parse("a b\nc d\n", "codes.txt"),
                         doctest::Contains("codes.txt:1: not a BPE codes file"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(BpeCodes::parse("#version: 0.1\na b\n", "codes.txt"),
                         doctest::Contains("codes.txt:1:"), std::runtime_error);
    CHECK_THROWS_WITH_AS(BpeCodes::parse("#version: 0.2\na b\nlonely\n", "codes.txt"),
                         doctest::Contains("codes.txt:3: expected two symbols"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(BpeCodes::parse("#version: 0.2\na b c\n", "codes.txt"),
                         doctest::Contains("codes.txt:2:"), std::runtime_error);
    CHECK_THROWS_WITH_AS(BpeCodes::parse("#version: 0.2\na \xc3\n", "codes.txt"),
                         doctest::Contains("codes.txt:2: not valid UTF-8"), std::runtime_error);
    CHECK_THROWS_WITH_AS(BpeCodes::load("/nonexistent/codes"),
                         doctest::Contains("/nonexistent/codes"), std::runtime_error);
}

TEST_CASE("apply: lowest rank first, first of duplicate codes wins, white space kept") {
    // Ranks: (b c) before (a b): "abc" -> a bc, not ab c.
    Bpe bpe(BpeCodes({{"b", "c</w>"}, {"a", "b"}, {"a", "b"}}));
    CHECK(bpe.segment_word("abc") == std::vector<std::string>{"a", "bc"});
    CHECK(bpe.segment_word("abd") == std::vector<std::string>{"ab", "d"});
    CHECK(bpe.apply_line("  abc  abd x ") == "  a@@ bc ab@@ d x ");
    CHECK(bpe.apply_line("") == "");
    CHECK(bpe.apply_line("   ") == "   ");
}

TEST_CASE("undo_bpe: '@@ ' and a trailing '@@' (with or without a space) are removed") {
    CHECK(undo_bpe("lo@@ w@@ est") == "lowest");
    CHECK(undo_bpe("a@@") == "a");
    CHECK(undo_bpe("a@@ ") == "a");
    CHECK(undo_bpe("e@@@ mail") == "e@mail");
    CHECK(undo_bpe("no marks") == "no marks");
}

TEST_CASE("the vocabulary filter splits unknown segments back into known ones") {
    // Merges: l o -> lo, lo w</w> -> low</w>. With "low" unknown, "low" splits into lo + w.
    BpeCodes codes({{"l", "o"}, {"lo", "w</w>"}});
    BpeApplyOptions options;
    options.vocabulary = {"lo@@", "w"};
    Bpe bpe(codes, options);
    CHECK(bpe.segment_word("low") == std::vector<std::string>{"lo", "w"});
    // lo@@ unknown too: down to single characters.
    options.vocabulary = {"w"};
    Bpe strict(codes, options);
    CHECK(strict.segment_word("low") == std::vector<std::string>{"l", "o", "w"});
    // Without a filter: one segment.
    CHECK(Bpe(codes).segment_word("low") == std::vector<std::string>{"low"});
}

TEST_CASE("glossary words are never split, also inside a word") {
    BpeCodes codes({{"a", "b"}, {"ab", "c"}, {"x", "y</w>"}});
    BpeApplyOptions options;
    options.glossary = {"bc"};
    Bpe bpe(codes, options);
    CHECK(bpe.segment_word("abcxy") == std::vector<std::string>{"a", "bc", "xy"});
    CHECK(bpe.segment_word("bc") == std::vector<std::string>{"bc"});
}

TEST_CASE("read_bpe_vocabulary keeps tokens at the threshold and names bad lines") {
    const testing::TempDir dir("bpe_vocab");
    const std::string path = dir.file("vocab.txt");
    write_file_atomically(path, "the 10\nlo@@ 3\nw 1\n");
    CHECK(read_bpe_vocabulary(path, 3) == std::unordered_set<std::string>{"the", "lo@@"});
    write_file_atomically(path, "the 10\nbroken\n");
    CHECK_THROWS_WITH_AS(read_bpe_vocabulary(path, 1), doctest::Contains((path + ":2:").c_str()),
                         std::runtime_error);
    write_file_atomically(path, "the ten\n");
    CHECK_THROWS_WITH_AS(read_bpe_vocabulary(path, 1), doctest::Contains("not an integer"),
                         std::runtime_error);
}
