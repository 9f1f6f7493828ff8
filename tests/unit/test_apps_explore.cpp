// `seqgrad explore` without a browser: escaping of everything that reaches the page, the page
// assembly, the training-curve reader, and the errors on bad options (the browser test in
// tests/train/test_explore_browser.cpp opens real files).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apps/cli/commands.h"
#include "apps/explore/explore_data.h"
#include "apps/explore/explore_html.h"
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
