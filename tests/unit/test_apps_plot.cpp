// Tests for `seqgrad plot` (apps/cli/cmd_plot.cpp): a CSV table in, a line plot out with one curve
// per y column or per group value, points sorted by x, gaps for empty / nan fields, a log x axis;
// bad input is an error naming the file, the line and the column.
#include <doctest/doctest.h>

#include <string>

#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::string error_of(const std::string& csv, const CsvPlotSpec& spec) {
    try {
        line_plot_from_csv(csv, "sweep.csv", spec);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

CsvPlotSpec spec_of(const std::string& x, std::vector<std::string> ys,
                    const std::string& group = "") {
    CsvPlotSpec spec;
    spec.x_column = x;
    spec.y_columns = std::move(ys);
    spec.group_column = group;
    return spec;
}

const char* kSweep =
    "k,seed,bleu,sentences_per_s\n"
    "5,1,30.5,120\n"
    "1,1,28.0,400\n"
    "2,1,29.5,250\n"
    "1,2,27.0,410\n"
    "5,2,31.0,118\n"
    "2,2,\"29.0\",240\n";

}  // namespace

TEST_CASE("plot: one curve per y column, points sorted by x, default axis labels") {
    const plot::LinePlot p =
        line_plot_from_csv(kSweep, "sweep.csv", spec_of("k", {"bleu", "sentences_per_s"}));
    REQUIRE(p.series.size() == 2);
    CHECK(p.series[0].name == "bleu");
    CHECK(p.series[1].name == "sentences_per_s");
    CHECK(p.x_label == "k");
    CHECK(p.y_label == "");  // two y columns: no single name for the axis
    CHECK(p.series[0].x == std::vector<double>{1, 1, 2, 2, 5, 5});
    CHECK(p.series[1].y == std::vector<double>{400, 410, 250, 240, 120, 118});
    const std::string svg = plot::line_plot_svg(p);
    CHECK(count(svg, "class=\"series\"") == 2);
    CHECK(count(svg, "class=\"marker\"") == 12);
}

TEST_CASE("plot --group: one curve per distinct value, in order of first appearance") {
    CsvPlotSpec spec = spec_of("k", {"bleu"}, "seed");
    spec.title = "BLEU & k";
    const plot::LinePlot p = line_plot_from_csv(kSweep, "sweep.csv", spec);
    REQUIRE(p.series.size() == 2);
    CHECK(p.series[0].name == "seed=1");
    CHECK(p.series[1].name == "seed=2");
    CHECK(p.y_label == "bleu");
    CHECK(p.series[0].x == std::vector<double>{1, 2, 5});
    CHECK(p.series[0].y == std::vector<double>{28.0, 29.5, 30.5});
    CHECK(p.series[1].y == std::vector<double>{27.0, 29.0, 31.0});
    const std::string svg = plot::line_plot_svg(p);
    CHECK(count(svg, "class=\"series\"") == 2);
    CHECK(svg.find("BLEU &amp; k") != std::string::npos);

    // Two y columns and a text-valued group: "average bleu", "average len", "gnmt bleu", ...
    const char* csv = "penalty,alpha,bleu,len\naverage,0,20,5\ngnmt,0,21,5\naverage,1,25,7\n";
    const plot::LinePlot q =
        line_plot_from_csv(csv, "a.csv", spec_of("alpha", {"bleu", "len"}, "penalty"));
    REQUIRE(q.series.size() == 4);
    CHECK(q.series[0].name == "average bleu");
    CHECK(q.series[3].name == "gnmt len");
    CHECK(q.series[0].x == std::vector<double>{0, 1});
}

TEST_CASE("plot: empty fields, nan and inf are gaps; a log x axis drops x <= 0") {
    const char* csv = "x,y\r\n1,1\r\n2,\r\n\r\n4,nan\r\n8,inf\r\n16,5\r\n0,3\r\n";
    CsvPlotSpec spec = spec_of("x", {"y"});
    spec.log_x = true;
    const plot::LinePlot p = line_plot_from_csv(csv, "gaps.csv", spec);
    REQUIRE(p.series.size() == 1);
    CHECK(p.series[0].name == "");
    CHECK(p.series[0].x.size() == 6);  // every row is kept; the picture skips what it cannot draw
    const std::string svg = plot::line_plot_svg(p);
    CHECK(count(svg, "class=\"marker\"") == 2);  // (1, 1) and (16, 5) only
    // Powers of ten on the x axis, no 0.
    CHECK(svg.find(">10</text>") != std::string::npos);
    CHECK(svg.find("nan") == std::string::npos);
}

TEST_CASE("plot: quoted fields may hold commas, quotes and line breaks") {
    const char* csv = "name,x,y\n\"a, \"\"b\"\"\nc\",1,2\nplain,2,3\n";
    const plot::LinePlot p = line_plot_from_csv(csv, "q.csv", spec_of("x", {"y"}, "name"));
    REQUIRE(p.series.size() == 2);
    CHECK(p.series[0].name == "a, \"b\"\nc");
    // The record after the multi-line field starts on line 4: errors there say so.
    CHECK(error_of("name,x,y\n\"a\nb\",1,2\nplain,oops,3\n", spec_of("x", {"y"})) ==
          "sweep.csv:4: column \"x\": expected a number, got \"oops\"");
}

TEST_CASE("plot: bad input is an error naming the file, line and column") {
    CHECK(error_of("k,bleu\n1,20\n2,twenty\n", spec_of("k", {"bleu"})) ==
          "sweep.csv:3: column \"bleu\": expected a number, got \"twenty\"");
    CHECK(error_of("k,bleu\n1,20\n2,21,extra\n", spec_of("k", {"bleu"})) ==
          "sweep.csv:3: 3 fields, but the header (line 1) has 2");
    CHECK(error_of("k,bleu\n1,20\n", spec_of("k", {"blue"})) ==
          "sweep.csv: no column \"blue\" (--y); line 1 names: k, bleu");
    CHECK(error_of("k,bleu\n1,20\n", spec_of("beam", {"bleu"})) ==
          "sweep.csv: no column \"beam\" (--x); line 1 names: k, bleu");
    CHECK(error_of("k,bleu\n1,20\n", spec_of("k", {"bleu"}, "seed")) ==
          "sweep.csv: no column \"seed\" (--group); line 1 names: k, bleu");
    CHECK(error_of("k,bleu\n1,\"20\n", spec_of("k", {"bleu"})) ==
          "sweep.csv:2: a quoted field is not closed");
    CHECK(error_of("k,bleu\n1,2\"0\n", spec_of("k", {"bleu"})).find("sweep.csv:2: field 2") == 0);
    CHECK(error_of("", spec_of("k", {"bleu"})) == "sweep.csv: empty file (expected a header line)");
}

TEST_CASE("plot command: reads the CSV, writes the SVG atomically, rejects bad arguments") {
    testing::TempDir dir("apps_plot");
    write_file_atomically(dir.file("t.csv"), kSweep);
    const std::string out = dir.file("t.svg");
    CHECK(cmd_plot({dir.file("t.csv"), "--x", "k", "--y", "bleu", "--group", "seed", "--logx",
                    "--title", "beam", "--out", out}) == 0);
    const std::string svg = read_file(out);
    CHECK(count(svg, "class=\"series\"") == 2);
    CHECK(svg.find("</svg>") != std::string::npos);

    CHECK(cmd_plot({dir.file("t.csv"), "--x", "k", "--y", "bleu"}) == 2);  // no --out
    CHECK_THROWS_WITH_AS(cmd_plot({dir.file("t.csv"), "--x", "k", "--y", "bleu,", "--out", out}),
                         "--y \"bleu,\": an empty column name", Error);
    CHECK_THROWS_AS(cmd_plot({dir.file("missing.csv"), "--x", "k", "--y", "bleu", "--out", out}),
                    std::runtime_error);
}
