// `seqgrad explore` without a browser: escaping of everything that reaches the page, the page
// assembly, the training-curve reader, the errors on bad options, and the check that runs shown
// side by side share a test set (the browser test in tests/train/test_explore_browser.cpp opens
// real files).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apps/cli/commands.h"
#include "apps/explore/explore_data.h"
#include "apps/explore/explore_html.h"
#include "apps/explore/explore_runs.h"
#include "seqgrad/autograd/tensor.h"

using namespace seqgrad;

TEST_CASE("json_for_script: no string can end the script element, and JSON.parse reads it back") {
    const nlohmann::json data = {{"source", "</script><script>alert(1)</script> <!-- & -->"},
                                 {"unicode", "déjà vu \xe2\x80\xa8"},
                                 {"n", {1, 2.5}}};
    const std::string text = json_for_script(data);
    CHECK(text.find('<') == std::string::npos);
    CHECK(text.find('>') == std::string::npos);
    CHECK(text.find('&') == std::string::npos);
    CHECK(nlohmann::json::parse(text) == data);  // \u003c etc. are ordinary JSON escapes
}

TEST_CASE("explore_page fills the title and the data once, whatever they contain") {
    const nlohmann::json data = {{"meta", {{"run_dir", "@@DATA@@ @@TITLE@@"}}}};
    const std::string page = explore_page(data, "<runs/x> & @@DATA@@");
    CHECK(page.find("<title>&lt;runs/x&gt; &amp; @@DATA@@</title>") != std::string::npos);
    const std::string marker = "<script id=\"seqgrad-data\" type=\"application/json\">";
    const size_t at = page.find(marker);
    REQUIRE(at != std::string::npos);
    const size_t end = page.find("</script>", at);
    CHECK(nlohmann::json::parse(page.substr(at + marker.size(), end - at - marker.size())) == data);
    CHECK(page.find("http://") == std::string::npos);
    CHECK(page.find("https://") == std::string::npos);
}

TEST_CASE("training_curves reads metrics.jsonl and names the file and line of a bad line") {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("seqgrad_explore_metrics_" + std::to_string(::getpid()) + ".jsonl"))
                                 .string();
    std::ofstream(path)
        << R"({"type":"train","step":10,"loss":2.5,"lr":0.001,"grad_norm":3.0,"clipped":true,)"
        << R"("grad_norms":{"encoder":1.5,"decoder":2.0}})"
        << "\n"
        << R"({"type":"valid","step":10,"loss":2.25,"bleu":12.345})"
        << "\n"
        << R"({"type":"test","step":10})"
        << "\n"
        << R"({"type":"train","step":20,"loss":null,"lr":0.001,"grad_norm":null})"
        << "\n";
    nlohmann::json curves = training_curves(path);
    REQUIRE(curves["train"].size() == 2);
    CHECK(curves["train"][1]["loss"].is_null());  // a NaN loss is logged as null: no crash
    CHECK(curves["train"][0]["clipped"] == true);
    CHECK(curves["train"][0]["grad_norms"]["decoder"] == 2.0);
    REQUIRE(curves["valid"].size() == 1);
    CHECK(curves["valid"][0]["bleu"] == doctest::Approx(12.35));
    CHECK(training_curves(path + ".missing")["train"].empty());
    std::ofstream(path, std::ios::app) << "{not json\n";
    const std::string expected = path + ":5: not a JSON object";
    CHECK_THROWS_WITH(training_curves(path), doctest::Contains(expected.c_str()));
    std::filesystem::remove(path);
}

TEST_CASE("explore: bad options are errors naming the option, before anything is decoded") {
    auto error_of = [](const Argv& args) {
        try {
            cmd_explore(args);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    // No run is needed to reject these: the options are checked first.
    CHECK(error_of({"no-such-run", "--limit", "0"}).find("--limit: expected N >= 1, got 0") !=
          std::string::npos);
    CHECK(error_of({"no-such-run", "--beam", "0"}).find("--beam: expected a number >= 1") !=
          std::string::npos);
    CHECK(error_of({"no-such-run", "--nbest", "-2"}).find("--nbest") != std::string::npos);
    CHECK(error_of({"no-such-run", "--what-if-steps", "-1"})
              .find("--what-if-steps: expected S >= 0, got -1") != std::string::npos);
    CHECK(error_of({"no-such-run", "--ig-steps", "0"}).find("--ig-steps: expected K >= 1, got 0") !=
          std::string::npos);
    CHECK(error_of({"no-such-run", "--ig-sentences", "-1"})
              .find("--ig-sentences: expected N >= 0, got -1") != std::string::npos);
    CHECK(error_of({"no-such-run", "--tape-sentences", "-1"})
              .find("--tape-sentences: expected N >= 0, got -1") != std::string::npos);
    CHECK(error_of({"no-such-run", "--gradient-sentences", "-3"})
              .find("--gradient-sentences: expected N >= 0, got -3") != std::string::npos);
    CHECK(error_of({"no-such-run", "--test", "a.tsv", "--input", "b.txt"}).find("not both") !=
          std::string::npos);
    const std::string unwritable = "/nonexistent-folder/sub/explore.html";
    const std::string e = error_of({"no-such-run", "--out", unwritable});
    CHECK(e.find(unwritable) != std::string::npos);
    CHECK(e.find("cannot write") != std::string::npos);
    CHECK(!std::filesystem::exists(unwritable + ".tmp"));
    // A run directory that does not exist: the loader's error names it.
    CHECK(error_of({"no-such-run", "--out", "/tmp/x.html"}).find("no-such-run") !=
          std::string::npos);
}

namespace {

// The error `f` throws, or "(no error)".
template <class F>
std::string error_of_call(F f) {
    try {
        f();
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::string("(no error)");
}

// A TSV task's config reading `test` with `tokenizer`.
Config tsv_config(const std::string& test, const std::string& tokenizer) {
    return Config::from_json({{"data",
                               {{"task", "tsv"},
                                {"train", test},
                                {"valid", test},
                                {"test", test},
                                {"tokenizer", tokenizer}}}});
}

}  // namespace

TEST_CASE("explore: runs side by side share a test set; tokenizers may differ, test sets not") {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("seqgrad_explore_runs_" + std::to_string(::getpid())))
                                .string();
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/test.tsv") << "I am happy.\tJe suis heureux.\n"
                                        "He runs.\tIl court.\nWe wait.\tNous attendons.\n";
    std::ofstream(dir + "/other.tsv") << "I am happy.\tJe suis heureux.\n"
                                         "She runs.\tElle court.\nWe wait.\tNous attendons.\n";
    std::ofstream(dir + "/refs.tsv") << "I am happy.\tJe suis heureux.\n"
                                        "He runs.\tIl court.\nWe wait.\tOn attend.\n";
    std::ofstream(dir + "/short.tsv") << "I am happy.\tJe suis heureux.\nHe runs.\tIl court.\n";
    const ExploreRequest own_test_sets;  // no --test, no --input: each run reads its own
    auto input = [&](const std::string& file, const std::string& tokenizer) {
        return read_explore_input(own_test_sets, tsv_config(dir + "/" + file, tokenizer));
    };

    // The same file read by a word-level run and by a BPE run: the same sentences.
    const ExploreInput words = input("test.tsv", "word"), bpe = input("test.tsv", "bpe");
    REQUIRE(words.sources.size() == 3);
    CHECK(words.references[1] == "Il court.");
    CHECK_NOTHROW(check_same_test_set("runs/words", words, "runs/bpe", bpe));

    // Another source at line 2: the error names both runs, the line and both sentences.
    const std::string source = error_of_call([&] {
        check_same_test_set("runs/words", words, "runs/other", input("other.tsv", "word"));
    });
    CHECK(source.find("runs/words") != std::string::npos);
    CHECK(source.find("runs/other") != std::string::npos);
    CHECK(source.find("do not share a test set") != std::string::npos);
    CHECK(source.find("line 2 differs") != std::string::npos);
    CHECK(source.find("\"She runs.\"") != std::string::npos);
    // The same sources with another reference at line 3.
    const std::string reference = error_of_call(
        [&] { check_same_test_set("runs/a", words, "runs/b", input("refs.tsv", "word")); });
    CHECK(reference.find("line 3 differs: reference") != std::string::npos);
    CHECK(reference.find("runs/a") != std::string::npos);
    CHECK(reference.find("runs/b") != std::string::npos);
    // One set is a prefix of the other: the counts and the first line only one has.
    const std::string count = error_of_call(
        [&] { check_same_test_set("runs/a", words, "runs/b", input("short.tsv", "word")); });
    CHECK(count.find("runs/a has 3 sentences, runs/b has 2") != std::string::npos);
    CHECK(count.find("line 3") != std::string::npos);

    // The date task: another generator seed is another test set.
    auto dates = [](int seed) {
        return Config::from_json({{"data",
                                   {{"task", "dates"},
                                    {"dates_train", 10},
                                    {"dates_valid", 5},
                                    {"dates_test", 20},
                                    {"dates_seed", seed}}}});
    };
    const ExploreInput seven = read_explore_input(own_test_sets, dates(7));
    CHECK_NOTHROW(check_same_test_set("runs/a", seven, "runs/b",
                                      read_explore_input(own_test_sets, dates(7))));
    CHECK(error_of_call([&] {
              check_same_test_set("runs/a", seven, "runs/b",
                                  read_explore_input(own_test_sets, dates(8)));
          }).find("line 1 differs") != std::string::npos);

    // --test FILE: every run reads the same file, whatever its own test set.
    ExploreRequest with_test;
    with_test.test = dir + "/other.tsv";
    CHECK_NOTHROW(check_same_test_set(
        "runs/a", read_explore_input(with_test, tsv_config(dir + "/test.tsv", "word")), "runs/b",
        read_explore_input(with_test, tsv_config(dir + "/short.tsv", "char"))));
    std::filesystem::remove_all(dir);
}

TEST_CASE("explore: two or more runs need --out; every option is still checked first") {
    auto error_of = [](const Argv& args) { return error_of_call([&] { cmd_explore(args); }); };
    CHECK(error_of({"runs/a", "runs/b"}).find("2 runs side by side need --out FILE.html") !=
          std::string::npos);
    CHECK(error_of({"runs/a", "runs/b", "runs/c"}).find("3 runs side by side need --out") !=
          std::string::npos);
    CHECK(error_of({"runs/a", "runs/b", "--out", "/tmp/x.html", "--limit", "0"})
              .find("--limit: expected N >= 1, got 0") != std::string::npos);
    CHECK(error_of({"runs/a", "runs/b", "--beam", "0", "--out", "/tmp/x.html"})
              .find("--beam: expected a number >= 1") != std::string::npos);
    CHECK(error_of(
              {"runs/a", "runs/b", "--test", "a.tsv", "--input", "b.txt", "--out", "/tmp/x.html"})
              .find("not both") != std::string::npos);
    // With --out, the runs are loaded in order: the first missing one is named.
    CHECK(error_of({"no-such-run-a", "no-such-run-b", "--out", "/tmp/x.html"})
              .find("no-such-run-a") != std::string::npos);
    CHECK(explore_runs_data({nlohmann::json{{"meta", 1}}}) == nlohmann::json{{"meta", 1}});
    CHECK(explore_runs_data({nlohmann::json{{"meta", 1}}, nlohmann::json{{"meta", 2}}}) ==
          nlohmann::json{{"runs", {{{"meta", 1}}, {{"meta", 2}}}}});
}
