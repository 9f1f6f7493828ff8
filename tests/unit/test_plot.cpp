// Tests for apps/plot/plot.h: the SVG is well-formed XML, labels are escaped, skipped points are
// really skipped, a large heatmap stays legible, CSV quoting, atomic file writes.
#include "apps/plot/plot.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "xml_check.h"

using namespace seqgrad::plot;
using seqgrad::testing::xml_check::xml_problem;

// So that a failing CHECK on a list of labels prints the labels.
namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
    static String convert(const std::vector<std::string>& texts) {
        std::string joined = "{";
        for (std::size_t i = 0; i < texts.size(); ++i)
            joined += (i ? ", \"" : "\"") + texts[i] + "\"";
        return (joined + "}").c_str();
    }
};
}  // namespace doctest

namespace {

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos;
         at = haystack.find(needle, at + 1))
        ++n;
    return n;
}

// Every text of the elements whose opening tag contains `marker`, e.g. class="tick-label".
std::vector<std::string> texts_with(const std::string& svg, const std::string& marker) {
    std::vector<std::string> texts;
    for (auto at = svg.find(marker); at != std::string::npos; at = svg.find(marker, at + 1)) {
        const auto open_end = svg.find('>', at);
        const auto close = svg.find('<', open_end);
        texts.push_back(svg.substr(open_end + 1, close - open_end - 1));
    }
    return texts;
}

// Value of attribute `name` in the opening tag that contains position `at`.
double attribute_at(const std::string& svg, std::size_t at, const std::string& name) {
    const auto tag_start = svg.rfind('<', at);
    const auto key = svg.find(" " + name + "=\"", tag_start);
    REQUIRE(key != std::string::npos);
    return std::stod(svg.substr(key + name.size() + 3));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Heatmap attention_example() {
    Heatmap h;
    h.title = "attention: \"le chat\" & <friends>";
    h.row_labels = {"the", "cat", "&", "<eos>"};
    h.col_labels = {"le", "chat", "'s", "<eos>", "a\"b"};
    h.values = {{0.9, 0.05, 0.05, 0, 0},
                {0.1, 0.8, 0.05, 0.05, 0},
                {0, 0.2, 0.123, 0.677, 0},
                {0, 0, 0, 0.3, 0.7}};
    return h;
}

}  // namespace

// The checker is the judge in every SVG test below, so first show that it can say no.
TEST_CASE("xml checker rejects malformed documents and accepts well-formed ones") {
    CHECK(xml_problem("<svg><g><rect x=\"1\"/></g></svg>") == "");
    CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg a='1'>x &amp; y &#8592;</svg>\n") == "");
    CHECK(xml_problem("<svg><g></svg></g>") != "");             // closed out of order
    CHECK(xml_problem("<svg><g></svg>") != "");                 // never closed
    CHECK(xml_problem("<svg><rect x=1/></svg>") != "");         // unquoted attribute
    CHECK(xml_problem("<svg><text>a & b</text></svg>") != "");  // raw ampersand
    CHECK(xml_problem("<svg><text>a < b</text></svg>") != "");  // raw less-than
    CHECK(xml_problem("<svg><text><eos></text></svg>") != "");  // unescaped token = stray tag
    CHECK(xml_problem("<svg><rect x=\"1\" x=\"2\"/></svg>") != "");
    CHECK(xml_problem("<svg/><svg/>") != "");
}

TEST_CASE("xml_escape escapes the five special characters and drops control characters") {
    CHECK(xml_escape("<eos> & \"x\" 'y'") == "&lt;eos&gt; &amp; &quot;x&quot; &apos;y&apos;");
    CHECK(xml_escape(std::string("a\x01z", 3)) == "a?z");
    CHECK(xml_escape("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 passes through untouched
}

TEST_CASE("heatmap is well-formed, escapes every label and has one cell per value") {
    const Heatmap h = attention_example();
    const std::string svg = heatmap_svg(h);
    CHECK(xml_problem(svg) == "");

    CHECK(count(svg, "class=\"cell\"") == 4 * 5);
    CHECK(count(svg, "<rect") == 4 * 5 + 2);  // the cells, the white background, the colour bar
    for (const char* escaped :
         {"the", "cat", "&amp;", "&lt;eos&gt;", "le", "chat", "&apos;s", "a&quot;b"}) {
        CAPTURE(escaped);
        CHECK(count(svg, std::string(">") + escaped + "</text>") >= 1);
    }
    CHECK(texts_with(svg, "class=\"row-label\"") ==
          std::vector<std::string>{"the", "cat", "&amp;", "&lt;eos&gt;"});
    CHECK(texts_with(svg, "class=\"col-label\"") ==
          std::vector<std::string>{"le", "chat", "&apos;s", "&lt;eos&gt;", "a&quot;b"});
    CHECK(svg.find("<eos>") == std::string::npos);
    CHECK(svg.find("attention: &quot;le chat&quot; &amp; &lt;friends&gt;") != std::string::npos);

    // Tooltips: "out_token <- in_token: value", with the arrow escaped.
    CHECK(svg.find("<title>&amp; &lt;- &apos;s: 0.123</title>") != std::string::npos);
    CHECK(svg.find("<title>&lt;eos&gt; &lt;- a&quot;b: 0.700</title>") != std::string::npos);
    CHECK(count(svg, "<title>") == 4 * 5);

    // Colour bar ticks.
    const auto ticks = texts_with(svg, "class=\"tick-label\"");
    CHECK(ticks == std::vector<std::string>{"0", "0.25", "0.5", "0.75", "1"});
}

TEST_CASE("heatmap colours follow the values and the given range") {
    Heatmap h;
    h.values = {{0.0, 1.0, 0.5}};
    std::string svg = heatmap_svg(h);
    CHECK(svg.find("fill=\"#440154\"><title>0 &lt;- 0: 0.000") != std::string::npos);  // darkest
    CHECK(svg.find("fill=\"#fde725\"><title>0 &lt;- 1: 1.000") != std::string::npos);  // brightest
    CHECK(svg.find("fill=\"#21918c\"><title>0 &lt;- 2: 0.500") != std::string::npos);  // middle

    h.vmin = 0.0;
    h.vmax = 0.5;  // now 0.5 is the top of the scale
    svg = heatmap_svg(h);
    CHECK(svg.find("fill=\"#fde725\"><title>0 &lt;- 2: 0.500") != std::string::npos);
    CHECK(texts_with(svg, "class=\"tick-label\"") ==
          std::vector<std::string>{"0", "0.125", "0.25", "0.375", "0.5"});

    h.values = {{kNaN, 0.2, 0.2}};  // a non-finite weight is grey, not a crash or a colour
    svg = heatmap_svg(h);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.find("fill=\"#bbbbbb\"><title>0 &lt;- 0: nan") != std::string::npos);
}

TEST_CASE("a 40 x 40 heatmap is well-formed and its labels do not overlap") {
    Heatmap h;
    for (int i = 0; i < 40; ++i) {
        h.row_labels.push_back("out" + std::to_string(i));
        h.col_labels.push_back("input_token_" + std::to_string(i));
        h.values.emplace_back();
        for (int j = 0; j < 40; ++j) h.values.back().push_back(((i * 7 + j * 3) % 11) / 10.0);
    }
    const std::string svg = heatmap_svg(h);
    CHECK(xml_problem(svg) == "");
    CHECK(count(svg, "class=\"cell\"") == 1600);
    CHECK(texts_with(svg, "class=\"col-label\"").size() == 40);
    CHECK(texts_with(svg, "class=\"row-label\"").size() == 40);

    // Neighbouring labels must be at least a font height apart, and everything must lie inside
    // the picture: the column labels, rotated, extend upwards from their anchor by their length.
    const double font = 12;
    const double svg_width = attribute_at(svg, svg.find("<svg"), "width");
    std::vector<double> xs, row_ys;
    for (auto at = svg.find("class=\"col-label\""); at != std::string::npos;
         at = svg.find("class=\"col-label\"", at + 1)) {
        xs.push_back(attribute_at(svg, at, "x"));
        const double y = attribute_at(svg, at, "y");
        CHECK(y - 0.62 * font * 14 >= 0);  // "input_token_39" fits above its anchor
        CHECK(xs.back() < svg_width);
    }
    for (auto at = svg.find("class=\"row-label\""); at != std::string::npos;
         at = svg.find("class=\"row-label\"", at + 1)) {
        row_ys.push_back(attribute_at(svg, at, "y"));
        CHECK(attribute_at(svg, at, "x") - 0.62 * font * 5 >= 0);  // "out39" fits on the left
    }
    for (std::size_t i = 1; i < xs.size(); ++i) CHECK(xs[i] - xs[i - 1] >= font * 1.2);
    for (std::size_t i = 1; i < row_ys.size(); ++i) CHECK(row_ys[i] - row_ys[i - 1] >= font * 1.2);
}

TEST_CASE("heatmap edge cases: empty, ragged, wrong label counts, bad range") {
    CHECK(xml_problem(heatmap_svg(Heatmap{})) == "");
    Heatmap ragged;
    ragged.values = {{0.1, 0.2}, {0.3}};
    CHECK_THROWS_AS(heatmap_svg(ragged), std::invalid_argument);
    Heatmap labels;
    labels.values = {{0.1, 0.2}};
    labels.col_labels = {"only one"};
    CHECK_THROWS_AS(heatmap_svg(labels), std::invalid_argument);
    Heatmap range;
    range.values = {{0.1}};
    range.vmin = range.vmax = 1;
    CHECK_THROWS_AS(heatmap_svg(range), std::invalid_argument);
}

TEST_CASE("line plot is well-formed, with legend, escaped text and 1-2-5 ticks") {
    LinePlot p;
    p.title = "loss <train & valid>";
    p.x_label = "step";
    p.y_label = "cross-entropy";
    p.series = {{"train", {0, 100, 200, 300}, {2.9, 1.3, 0.8, 0.43}},
                {"valid \"held-out\"", {0, 150, 300}, {3.0, 1.5, 0.9}}};
    p.markers = true;
    const std::string svg = line_plot_svg(p);
    CHECK(xml_problem(svg) == "");
    CHECK(count(svg, "class=\"series\"") == 2);
    CHECK(count(svg, "class=\"marker\"") == 7);
    CHECK(texts_with(svg, "class=\"legend\"") ==
          std::vector<std::string>{"train", "valid &quot;held-out&quot;"});
    CHECK(svg.find("loss &lt;train &amp; valid&gt;") != std::string::npos);
    // x: 0..300 in steps of 50; y: 0.43..3.0 widened to 0..3 in steps of 0.5.
    CHECK(texts_with(svg, "class=\"tick-label\"") ==
          std::vector<std::string>{"0", "50", "100", "150", "200", "250", "300", "0.0", "0.5",
                                   "1.0", "1.5", "2.0", "2.5", "3.0"});
    // The two series get different colours.
    const auto first = svg.find("class=\"series\"");
    const auto second = svg.find("class=\"series\"", first + 1);
    const auto stroke = [&](std::size_t at) { return svg.substr(svg.find("stroke=", at), 16); };
    CHECK(stroke(first) != stroke(second));
}

TEST_CASE("log-scale line plot skips zeros, negatives and non-finite values") {
    LinePlot p;
    p.log_y = true;
    p.markers = true;
    p.series = {{"grad norm", {1, 2, 3, 4, 5, 6, 7, 8}, {1, 0, kNaN, 100, -5, 1000, kInf, 10}}};
    const std::string svg = line_plot_svg(p);
    CHECK(xml_problem(svg) == "");
    CHECK(count(svg, "class=\"marker\"") == 4);  // 1, 100, 1000 and 10 only
    // Skipped points break the line: runs {1}, {100}, {1000}, {10}... are separate sub-paths.
    const auto path_at = svg.find("class=\"series\" d=\"");
    REQUIRE(path_at != std::string::npos);
    const std::string d = svg.substr(path_at, svg.find('"', path_at + 18) - path_at);
    CHECK(count(d, "M") == 4);  // runs {1}, {100}, {1000}, {10}
    CHECK(count(d, "L") == 0);
    // The axis spans the drawable values only: powers of ten from 1 to 1000, nothing at 0.
    CHECK(
        texts_with(svg, "class=\"tick-label\"") ==
        std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8", "1", "10", "100", "1000"});
    for (const char* bad : {"nan", "inf", "NaN"}) CHECK(svg.find(bad) == std::string::npos);
}

TEST_CASE("log axis: 1-2-5 ticks over a narrow range, strided powers of ten over a wide one") {
    LinePlot narrow;
    narrow.log_y = true;
    narrow.series = {{"", {0, 1}, {0.3, 4}}};
    const auto narrow_ticks = texts_with(line_plot_svg(narrow), "class=\"tick-label\"");
    CHECK(std::vector<std::string>(narrow_ticks.end() - 5, narrow_ticks.end()) ==
          std::vector<std::string>{"0.2", "0.5", "1", "2", "5"});

    LinePlot wide;
    wide.log_y = true;
    wide.series = {{"", {0, 1}, {3e-12, 20}}};  // 13 decades: every second power of ten
    const auto wide_ticks = texts_with(line_plot_svg(wide), "class=\"tick-label\"");
    CHECK(std::vector<std::string>(wide_ticks.end() - 8, wide_ticks.end()) ==
          std::vector<std::string>{"1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "0.01", "1", "100"});
}

TEST_CASE("line plot edge cases: empty series, all-invalid data, no series, bad lengths") {
    LinePlot p;
    p.series = {{"empty", {}, {}}, {"all nan", {1, 2}, {kNaN, kNaN}}, {"one point", {3}, {0.5}}};
    std::string svg = line_plot_svg(p);
    CHECK(xml_problem(svg) == "");
    CHECK(count(svg, "class=\"marker\"") == 1);  // a lone point gets a dot even without markers
    CHECK(texts_with(svg, "class=\"legend\"").size() == 3);

    p.log_y = true;
    p.series = {{"zeros", {1, 2}, {0, 0}}};
    svg = line_plot_svg(p);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.find("no data") != std::string::npos);

    CHECK(xml_problem(line_plot_svg(LinePlot{})) == "");
    CHECK(line_plot_svg(LinePlot{}).find("no data") != std::string::npos);

    p.series = {{"bad", {1, 2, 3}, {1, 2}}};
    CHECK_THROWS_AS(line_plot_svg(p), std::invalid_argument);
}

TEST_CASE("more series than colours: repeats are told apart by dashes") {
    LinePlot p;
    for (int i = 0; i < 9; ++i) p.series.push_back({"s" + std::to_string(i), {0, 1}, {0, i + 1.0}});
    const std::string svg = line_plot_svg(p);
    CHECK(xml_problem(svg) == "");
    CHECK(count(svg, "class=\"series\"") == 9);
    CHECK(count(svg, "<path class=\"series\" d=\"M") == 9);
    CHECK(count(svg, "stroke-dasharray") == 2 * 2);  // series 8 and 9, in the plot and the legend
}

TEST_CASE("to_csv quotes commas, quotes, line breaks and edge spaces, and nothing else") {
    const std::string csv = to_csv(
        {"token", "weight"},
        {{"hello, world", "0.5"}, {"say \"hi\"", "1"}, {"two\nlines", ""}, {" padded", "plain"}});
    CHECK(csv ==
          "token,weight\n"
          "\"hello, world\",0.5\n"
          "\"say \"\"hi\"\"\",1\n"
          "\"two\nlines\",\n"
          "\" padded\",plain\n");
    CHECK(to_csv({}, {{"a", "b"}, {"c"}}) == "a,b\nc\n");
    CHECK_THROWS_AS(to_csv({"a", "b"}, {{"only one"}}), std::invalid_argument);
}
