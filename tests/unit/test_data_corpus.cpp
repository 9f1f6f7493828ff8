// The TSV parallel-corpus reader (data/corpus.h).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>

#include "seqgrad/data/corpus.h"

using namespace seqgrad;

namespace {

std::string temp_path(const std::string& stem) {
    return (std::filesystem::temp_directory_path() /
            ("seqgrad_test_" + stem + "_" + std::to_string(std::random_device{}()) + ".tsv"))
        .string();
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

// An error message without the way past it that follows "; ".
std::string what_is_wrong(const std::string& message) {
    return message.substr(0, message.find("; "));
}

CorpusOptions skipping() {
    CorpusOptions options;
    options.on_bad_line = OnBadLine::skip;
    return options;
}

}  // namespace

TEST_CASE("reads pairs with line numbers, CRLF, a BOM, metadata columns and padding are handled") {
    const std::string text =
        "\xEF\xBB\xBFgo .\tva !\tCC-BY 2.0\r\n"
        "  i am cold .  \tj ai froid .\t#1\n"
        "hello\tbonjour\tCC-BY 2.0 (France) Attribution: tatoeba.org\n";
    CorpusOptions three_columns;
    three_columns.columns = 3;
    const CorpusReadResult result = parse_parallel_corpus(text, "mem.tsv", three_columns);
    REQUIRE(result.pairs.size() == 3);
    CHECK(result.skipped == 0);
    CHECK(result.pairs[0].source == "go .");
    CHECK(result.pairs[0].target == "va !");  // no trailing \r
    CHECK(result.pairs[1].source == "i am cold .");
    CHECK(result.pairs[1].target == "j ai froid .");
    CHECK(result.pairs[2].target == "bonjour");  // the third column is ignored
    CHECK(result.pairs[2].line == 3);
    // A CRLF-only line is an empty line, not a line without a tab.
    CHECK(what_is_wrong(message_of([] { parse_parallel_corpus("a\tb\r\n\r\n", "crlf.tsv"); })) ==
          "crlf.tsv:2: empty line (expected source<TAB>target)");
}

TEST_CASE("source_column 1 swaps the sides") {
    CorpusOptions options;
    options.source_column = 1;
    const auto result = parse_parallel_corpus("hello\tbonjour\n", "mem", options);
    CHECK(result.pairs[0].source == "bonjour");
    CHECK(result.pairs[0].target == "hello");
    options.source_column = 2;
    CHECK_THROWS_AS(parse_parallel_corpus("a\tb\n", "mem", options), std::invalid_argument);
}

TEST_CASE("with on_bad_line = error, the first bad line throws FILE:LINE: what is wrong") {
    CHECK(what_is_wrong(message_of([] {
              parse_parallel_corpus("a\tb\nno tab here\n", "c.tsv");
          })) == "c.tsv:2: no tab (expected source<TAB>target)");
    CHECK(what_is_wrong(message_of([] { parse_parallel_corpus("a\tb\n\tb\n", "c.tsv"); })) ==
          "c.tsv:2: empty source side (column 1)");
    CHECK(what_is_wrong(message_of([] {
              parse_parallel_corpus("a\tb\nc\tb\nx\t   \n", "c.tsv");
          })) == "c.tsv:3: empty target side (column 2)");
    CHECK(what_is_wrong(message_of([] { parse_parallel_corpus("a\xFF\tb\n", "c.tsv"); })) ==
          "c.tsv:1: invalid UTF-8 at byte 2 of the line");
    CHECK(what_is_wrong(message_of([] { parse_parallel_corpus("a\tb\n\nc\td\n", "c.tsv"); })) ==
          "c.tsv:2: empty line (expected source<TAB>target)");
    CorpusOptions swapped;
    swapped.source_column = 1;
    CHECK(what_is_wrong(message_of([&] { parse_parallel_corpus("a\t\n", "c.tsv", swapped); })) ==
          "c.tsv:1: empty source side (column 2)");
}

TEST_CASE("with on_bad_line = skip, bad lines are counted and the first messages kept") {
    std::string text;
    for (int i = 1; i <= 10; ++i) text += i % 2 ? "good\tbon\n" : "bad line\n";
    CorpusOptions options = skipping();
    options.max_messages = 3;
    const auto result = parse_parallel_corpus(text, "s.tsv", options);
    CHECK(result.pairs.size() == 5);
    CHECK(result.skipped == 5);
    REQUIRE(result.messages.size() == 3);
    CHECK(result.messages[0] == "s.tsv:2: no tab (expected source<TAB>target)");
    CHECK(result.messages[2] == "s.tsv:6: no tab (expected source<TAB>target)");
    CHECK(result.pairs[4].line == 9);
}

TEST_CASE("a corpus without any good pair is an error") {
    CHECK(message_of([] { parse_parallel_corpus("", "e.tsv"); }) ==
          "e.tsv: no sentence pairs (the file is empty)");
    CHECK(message_of([] { parse_parallel_corpus("x\ny\n", "e.tsv", skipping()); }) ==
          "e.tsv: no sentence pairs (all 2 lines are bad; first: e.tsv:1: no tab (expected "
          "source<TAB>target))");
}

TEST_CASE("read_parallel_corpus reads a file and names a missing one") {
    const std::string path = temp_path("corpus");
    std::ofstream(path) << "one\tun\ntwo\tdeux\n";
    const auto result = read_parallel_corpus(path);
    CHECK(result.pairs.size() == 2);
    CHECK(result.pairs[1].target == "deux");
    std::filesystem::remove(path);
    CHECK(message_of([&] { read_parallel_corpus(path); }) == path + ": no such file");
    CHECK(message_of([] {
              read_parallel_corpus(std::filesystem::temp_directory_path());
          }).find("is a directory") != std::string::npos);
}

TEST_CASE("the shipped eng-fra corpus reads cleanly, French as the source") {
    CorpusOptions options;
    options.source_column = 1;
    const auto train =
        read_parallel_corpus(SEQGRAD_SOURCE_DIR "/datasets/eng-fra/train.tsv", options);
    const auto test =
        read_parallel_corpus(SEQGRAD_SOURCE_DIR "/datasets/eng-fra/test.tsv", options);
    CHECK(train.pairs.size() == 9539);
    CHECK(test.pairs.size() == 530);
    CHECK(train.skipped == 0);
    // Line 1 of train.tsv: "i am afraid he will make a mistake .<TAB>j ai peur qu il ..."
    CHECK(train.pairs[0].target == "i am afraid he will make a mistake .");
    CHECK(train.pairs[0].source == "j ai peur qu il commette une erreur .");
}

TEST_CASE("a line with more columns than data.columns says is an error naming file and line") {
    // A tab inside a sentence must not silently turn one pair into a wrong one.
    const std::string text = "go .\tva !\nhe said\tthen left\til a dit\n";
    CHECK_THROWS_WITH(parse_parallel_corpus(text, "tab.tsv"),
                      doctest::Contains("tab.tsv:2: 3 tab-separated columns, expected 2"));
    CHECK_THROWS_WITH(parse_parallel_corpus(text, "tab.tsv"), doctest::Contains("data.bad_lines"));
    CorpusOptions skip;
    skip.on_bad_line = OnBadLine::skip;
    const CorpusReadResult skipped = parse_parallel_corpus(text, "tab.tsv", skip);
    CHECK(skipped.pairs.size() == 1);
    CHECK(skipped.skipped == 1);
    // Fewer columns than declared is an error too: the metadata column is missing.
    CorpusOptions three;
    three.columns = 3;
    CHECK_THROWS_WITH(parse_parallel_corpus("a\tb\tmeta\nc\td\n", "m.tsv", three),
                      doctest::Contains("m.tsv:2: 2 tab-separated columns, expected 3"));
    three.columns = 1;
    CHECK_THROWS_AS(parse_parallel_corpus("a\tb\n", "m.tsv", three), std::invalid_argument);
}

// Like Multi30k's raw training file: one German side holds a tab inside a quoted sentence; and
// an empty side and a line that is not UTF-8.
const char* kMulti30kLike =
    "Two young guys are outside.\tZwei junge Männer sind im Freien.\n"
    "A man says \"hello\".\t\"Ein Mann sagt\t\"\"Hallo\"\".\"\n"
    "Several men in hard hats.\t\n"
    "A little girl climbs\xC3\x28.\tEin kleines Mädchen klettert.\n"
    "A dog runs.\tEin Hund rennt.\n";

TEST_CASE("a file like Multi30k's: the error names data.bad_lines as the way past") {
    const std::string message =
        message_of([] { parse_parallel_corpus(kMulti30kLike, "train.tsv"); });
    CHECK(message ==
          "train.tsv:2: 3 tab-separated columns, expected 2 (a tab inside a sentence?); to leave "
          "bad lines out, set data.bad_lines to \"skip\" (or \"warn\" to print each one); they "
          "are listed in the run directory, in skipped_lines.tsv");
    CHECK(message.find("data.columns") == std::string::npos);  // lines differ: not metadata
}

TEST_CASE("data.columns is suggested only when every line has the same extra columns") {
    const std::string message = message_of(
        [] { parse_parallel_corpus("a\tb\tCC-BY #1\nc\td\tCC-BY #2\n", "tatoeba.tsv"); });
    CHECK(
        message ==
        "tatoeba.tsv:1: 3 tab-separated columns, expected 2 (a tab inside a sentence?); every "
        "line has 3 tab-separated columns: if the extra ones are metadata, set data.columns to 3");
}

TEST_CASE("warn and skip leave bad lines out and list every one with its reason") {
    for (OnBadLine how : {OnBadLine::warn, OnBadLine::skip}) {
        CorpusOptions options;
        options.on_bad_line = how;
        const CorpusReadResult r = parse_parallel_corpus(kMulti30kLike, "train.tsv", options);
        REQUIRE(r.pairs.size() == 2);
        CHECK(r.pairs[1].line == 5);
        CHECK(r.skipped == 3);
        REQUIRE(r.bad_lines.size() == 3);
        CHECK(r.bad_lines[0].line == 2);
        CHECK(r.bad_lines[0].reason ==
              "3 tab-separated columns, expected 2 (a tab inside a sentence?)");
        CHECK(r.bad_lines[1].line == 3);
        CHECK(r.bad_lines[1].reason == "empty target side (column 2)");
        CHECK(r.bad_lines[2].line == 4);
        CHECK(r.bad_lines[2].reason == "invalid UTF-8 at byte 21 of the line");
    }
}

TEST_CASE("data.bad_lines values follow pandas' on_bad_lines") {
    CHECK(on_bad_line_from_string("error") == OnBadLine::error);
    CHECK(on_bad_line_from_string("warn") == OnBadLine::warn);
    CHECK(on_bad_line_from_string("skip") == OnBadLine::skip);
    CHECK(on_bad_line_from_string("fail") == OnBadLine::error);  // older configs
    CHECK(message_of([] { on_bad_line_from_string("drop"); }) ==
          "unknown on_bad_line \"drop\" (expected \"error\", \"warn\" or \"skip\")");
}
