// Tests for apps/attention/attention_report.h: the diagnosis on hand-made attention matrices
// (one-hot, uniform, mixed), monotonicity, input checks, and the heatmap the `attention` command
// draws: well-formed SVG containing every token label.
#include "apps/attention/attention_report.h"

#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "xml_check.h"

using namespace seqgrad;
using seqgrad::testing::xml_check::xml_problem;

namespace {

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos;
         at = haystack.find(needle, at + 1))
        ++n;
    return n;
}

}  // namespace

TEST_CASE("a one-hot row: entropy 0, the right argmax, not dispersed") {
    AttentionDiagnosis d = diagnose_attention({{0, 0, 1, 0}});
    REQUIRE(d.steps.size() == 1);
    CHECK(d.source_positions == 4);
    CHECK(d.steps[0].argmax == 2);
    CHECK(d.steps[0].max_weight == 1.0);
    CHECK(d.steps[0].entropy == 0.0);
    CHECK(d.steps[0].normalized_entropy == 0.0);
    CHECK_FALSE(d.steps[0].dispersed);
    CHECK(d.dispersed_share == 0.0);
}

TEST_CASE("a uniform row: entropy ln S, normalised entropy 1, flagged dispersed") {
    AttentionDiagnosis d = diagnose_attention({{0.2, 0.2, 0.2, 0.2, 0.2}});
    CHECK(d.steps[0].entropy == doctest::Approx(std::log(5.0)).epsilon(1e-12));
    CHECK(d.steps[0].normalized_entropy == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(d.steps[0].dispersed);
    CHECK(d.steps[0].argmax == 0);  // ties go to the first position
    CHECK(d.dispersed_share == 1.0);
}

TEST_CASE("a row split over two of four positions has normalised entropy ln 2 / ln 4 = 0.5") {
    AttentionDiagnosis d = diagnose_attention({{0.5, 0.5, 0, 0}, {0, 0, 0, 1}});
    CHECK(d.steps[0].entropy == doctest::Approx(std::log(2.0)));
    CHECK(d.steps[0].normalized_entropy == doctest::Approx(0.5));
    CHECK_FALSE(d.steps[0].dispersed);
    CHECK(d.mean_normalized_entropy == doctest::Approx(0.25));
    CHECK(d.last_column_share == doctest::Approx(0.5));  // step 2 sits on the last column
}

TEST_CASE("the dispersed threshold is a parameter and is strict") {
    // Normalised entropy 0.5 is dispersed above 0.4 but not above 0.5.
    std::vector<std::vector<double>> w{{0.5, 0.5, 0, 0}};
    AttentionThresholds low;
    low.dispersed = 0.4;
    CHECK(diagnose_attention(w, low).steps[0].dispersed);
    AttentionThresholds exact;
    exact.dispersed = 0.5 + 1e-9;
    CHECK_FALSE(diagnose_attention(w, exact).steps[0].dispersed);
}

TEST_CASE("a single source position cannot be dispersed") {
    AttentionDiagnosis d = diagnose_attention({{1.0}, {1.0}});
    CHECK(d.steps[0].normalized_entropy == 0.0);
    CHECK_FALSE(d.steps[0].dispersed);
}

TEST_CASE("monotonicity: a diagonal moves forward, a reversed diagonal does not") {
    std::vector<std::vector<double>> diagonal{
        {0.9, 0.1, 0, 0}, {0.1, 0.8, 0.1, 0}, {0, 0.1, 0.8, 0.1}, {0, 0, 0.1, 0.9}};
    AttentionDiagnosis d = diagnose_attention(diagonal);
    CHECK(d.forward_share == 1.0);
    CHECK(d.roughly_monotonic);

    std::vector<std::vector<double>> reversed(diagonal.rbegin(), diagonal.rend());
    AttentionDiagnosis r = diagnose_attention(reversed);
    CHECK(r.forward_share == 0.0);
    CHECK_FALSE(r.roughly_monotonic);

    // One step back out of four moves: 75% forward, under the 80% threshold.
    AttentionDiagnosis m =
        diagnose_attention({{1, 0, 0}, {0, 1, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
    CHECK(m.forward_share == doctest::Approx(0.75));
    CHECK_FALSE(m.roughly_monotonic);
}

TEST_CASE("rows that are not probability distributions are rejected") {
    CHECK_THROWS_AS(diagnose_attention({}), std::invalid_argument);
    CHECK_THROWS_AS(diagnose_attention({{}}), std::invalid_argument);
    CHECK_THROWS_AS(diagnose_attention({{0.5, 0.5}, {1, 0, 0}}), std::invalid_argument);
    CHECK_THROWS_AS(diagnose_attention({{1.5, -0.5}}), std::invalid_argument);
    CHECK_THROWS_AS(diagnose_attention({{std::nan(""), 1.0}}), std::invalid_argument);
    CHECK_THROWS_AS(diagnose_attention({{0.3, 0.3}}), std::invalid_argument);
}

TEST_CASE("the text report flags exactly the dispersed steps and names the attended tokens") {
    std::vector<std::string> source{"le", "chat", "<eos>"};
    std::vector<std::string> output{"the", "cat", "<eos>"};
    std::vector<std::vector<double>> w{
        {0.98, 0.01, 0.01}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, {0.05, 0.05, 0.9}};
    AttentionDiagnosis d = diagnose_attention(w);
    std::string report = format_attention_report(d, source, output, /*dates_task=*/false);
    CAPTURE(report);
    CHECK(count(report, "DISPERSED") == 1);
    const auto line_of = [&](const std::string& start) {
        auto at = report.find(start);
        REQUIRE(at != std::string::npos);
        return report.substr(at, report.find('\n', at) - at);
    };
    CHECK(line_of("   2  cat").find("DISPERSED") != std::string::npos);
    CHECK(line_of("   1  the").find("le @0") != std::string::npos);
    CHECK(line_of("   3  <eos>").find("<eos> @2") != std::string::npos);
    CHECK(report.find("1 of 3") != std::string::npos);  // dispersed steps in the summary
    CHECK_THROWS_AS(format_attention_report(d, {"le"}, output, false), std::invalid_argument);
}

TEST_CASE("display_token makes spaces visible") {
    CHECK(display_token(" ") == "\xe2\x90\xa3");
    CHECK(display_token("chat") == "chat");
    CHECK(display_token("") != "");
}

TEST_CASE("the attention heatmap is well-formed SVG and contains every token label") {
    // A 31-token source (character-level, with a space, an ampersand and <eos>) and an output
    // with XML specials: each label must survive escaping.
    std::vector<std::string> source;
    const std::string text = "tuesday, march 3 & 2001 <x> ok";
    for (char c : text) source.push_back(std::string(1, c));
    source.push_back("<eos>");
    std::vector<std::string> output{"2", "0", "0", "1", "-", "0", "3", "<unk>", "\"q\"", "<eos>"};
    std::vector<std::vector<double>> w(output.size(), std::vector<double>(source.size(), 0.0));
    for (size_t t = 0; t < output.size(); ++t) w[t][(3 * t) % source.size()] = 1.0;

    const std::string svg =
        plot::heatmap_svg(attention_heatmap(source, output, w, "attention: \"a & b\""));
    CHECK(xml_problem(svg) == "");
    for (const std::string& token : source) {
        const std::string label = plot::xml_escape(display_token(token));
        CAPTURE(label);
        CHECK(svg.find(">" + label + "</text>") != std::string::npos);
    }
    for (const std::string& token : output) {
        const std::string label = plot::xml_escape(display_token(token));
        CAPTURE(label);
        CHECK(svg.find(">" + label + "</text>") != std::string::npos);
    }
    CHECK(count(svg, "class=\"cell\"") == output.size() * source.size());
    CHECK(svg.find("\xe2\x90\xa3") != std::string::npos);  // the space, drawn as ␣
}

TEST_CASE("attention_csv: a header of input tokens, one line per output token") {
    std::string csv =
        attention_csv({"a", " ", "<eos>"}, {"x", "<eos>"}, {{0.5, 0.25, 0.25}, {0, 0, 1}});
    CHECK(csv ==
          "output,a,\xe2\x90\xa3,<eos>\n"
          "x,0.500000,0.250000,0.250000\n"
          "<eos>,0.000000,0.000000,1.000000\n");
    CHECK_THROWS(attention_csv({"a"}, {"x", "y"}, {{1.0}}));
}
