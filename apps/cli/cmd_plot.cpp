// `seqgrad plot FILE.csv --x COL --y COL[,COL...] --out FILE.svg`: a line plot of a CSV table,
// drawn by apps/plot/plot.h's line_plot_svg. The claims page (docs/claims.md) makes its figures with
// it from the tables its scripts write, so every picture there is redrawn by a command.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"

namespace seqgrad {
namespace {

const char* kHelp = R"(usage: seqgrad plot FILE.csv --x COLUMN --y COLUMN[,COLUMN...] --out FILE.svg
                    [--group COLUMN] [--logx] [--logy] [--title T] [--xlabel T] [--ylabel T]

Draws a line plot (SVG) of the numbers in a CSV table whose first line names the columns
(RFC 4180: fields may be quoted, "" is a quote inside quotes). One curve per --y column; with
--group, one curve per distinct value of that column (and y column), in the order the values
first appear. Each curve's points are sorted by x. An empty field, nan or inf is a gap in its
curve (so is a value <= 0 on a log axis); any other field that is not a number is an error
naming the file, line and column. Points get markers when no curve has more than 40 of them.

options:
  --x COLUMN        the column along the horizontal axis
  --y COLUMNS       the column(s) drawn, separated by commas
  --group COLUMN    one curve per distinct value of COLUMN
  --logx, --logy    log10 axes
  --title T         the title (default: none)
  --xlabel T        the horizontal axis label (default: the --x column)
  --ylabel T        the vertical axis label (default: the --y column when there is one)
  --out FILE.svg    where the picture goes (written atomically)
)";

// A CSV table: the header's column names and, for every record, its fields and the line (1-based)
// it starts on, so errors can name it.
struct CsvTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<size_t> row_lines;
};

// RFC 4180 records; a quoted field may hold commas, line breaks and doubled quotes. "\r\n" line
// ends are accepted, blank lines are skipped.
CsvTable parse_csv(const std::string& text, const std::string& name) {
    CsvTable table;
    size_t line = 1, i = 0;
    while (i < text.size()) {
        const size_t record_line = line;
        std::vector<std::string> fields(1);
        bool end_of_record = false;
        while (!end_of_record) {
            std::string& field = fields.back();
            if (i < text.size() && text[i] == '"') {  // a quoted field, up to its closing quote
                ++i;
                for (;; ++i) {
                    if (i >= text.size())
                        throw Error(
                            fmt::format("{}:{}: a quoted field is not closed", name, record_line));
                    if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                        field += '"';
                        ++i;
                    } else if (text[i] == '"') {
                        ++i;
                        break;
                    } else {
                        line += text[i] == '\n';
                        field += text[i];
                    }
                }
            }
            for (; i < text.size() && text[i] != ',' && text[i] != '\n'; ++i) {
                if (text[i] == '"')
                    throw Error(
                        fmt::format("{}:{}: field {}: a quote inside an unquoted field "
                                    "(quote the whole field, and double the quote)",
                                    name, record_line, fields.size()));
                if (text[i] != '\r' || (i + 1 < text.size() && text[i + 1] != '\n'))
                    field += text[i];
            }
            if (i < text.size() && text[i] == ',') {
                fields.emplace_back();
                ++i;
            } else {
                end_of_record = true;
                if (i < text.size()) ++i, ++line;  // the '\n'
            }
        }
        if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
        if (table.header.empty()) {
            table.header = std::move(fields);
        } else {
            if (fields.size() != table.header.size())
                throw Error(fmt::format("{}:{}: {} fields, but the header (line 1) has {}", name,
                                        record_line, fields.size(), table.header.size()));
            table.rows.push_back(std::move(fields));
            table.row_lines.push_back(record_line);
        }
    }
    if (table.header.empty())
        throw Error(fmt::format("{}: empty file (expected a header line)", name));
    return table;
}

// The index of column `column` (given as --`option`), or an error listing the header.
size_t column_index(const CsvTable& table, const std::string& column, const std::string& option,
                    const std::string& name) {
    auto it = std::find(table.header.begin(), table.header.end(), column);
    if (it == table.header.end()) {
        std::string known;
        for (const std::string& h : table.header) known += (known.empty() ? "" : ", ") + h;
        throw Error(fmt::format("{}: no column \"{}\" (--{}); line 1 names: {}", name, column,
                                option, known));
    }
    return size_t(it - table.header.begin());
}

// A field as a number: empty, nan and inf give NaN/inf (a gap); anything else not a number is
// an error naming the file, line and column.
double number_at(const CsvTable& table, size_t row, size_t column, const std::string& name) {
    std::string field = table.rows[row][column];
    field.erase(0, field.find_first_not_of(" \t"));
    field.erase(field.find_last_not_of(" \t") + 1);
    if (field.empty()) return std::nan("");
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(field.c_str(), &end);
    if (end != field.c_str() + field.size())
        throw Error(fmt::format("{}:{}: column \"{}\": expected a number, got \"{}\"", name,
                                table.row_lines[row], table.header[column],
                                table.rows[row][column]));
    return value;  // overflow gives ±inf, which the plot skips like any non-finite value
}

std::vector<std::string> split_commas(const std::string& list) {
    std::vector<std::string> parts(1);
    for (char c : list) {
        if (c == ',')
            parts.emplace_back();
        else
            parts.back() += c;
    }
    return parts;
}

bool is_number(const std::string& text) {
    char* end = nullptr;
    std::strtod(text.c_str(), &end);
    return !text.empty() && end == text.c_str() + text.size();
}

}  // namespace

plot::LinePlot line_plot_from_csv(const std::string& csv_text, const std::string& csv_name,
                                  const CsvPlotSpec& spec) {
    const CsvTable table = parse_csv(csv_text, csv_name);
    if (spec.y_columns.empty()) throw Error("--y: expected at least one column");
    const size_t x = column_index(table, spec.x_column, "x", csv_name);
    std::vector<size_t> ys;
    for (const std::string& y : spec.y_columns) ys.push_back(column_index(table, y, "y", csv_name));

    // The groups in order of first appearance (one group of every row without --group).
    std::vector<std::string> groups;
    std::vector<size_t> group_of_row(table.rows.size(), 0);
    if (!spec.group_column.empty()) {
        const size_t g = column_index(table, spec.group_column, "group", csv_name);
        std::map<std::string, size_t> index;
        for (size_t r = 0; r < table.rows.size(); ++r) {
            auto [it, added] = index.emplace(table.rows[r][g], groups.size());
            if (added) groups.push_back(table.rows[r][g]);
            group_of_row[r] = it->second;
        }
    } else {
        groups.push_back("");
    }

    plot::LinePlot p;
    p.title = spec.title;
    p.x_label = spec.x_label.empty() ? spec.x_column : spec.x_label;
    p.y_label = spec.y_label.empty() && ys.size() == 1 ? spec.y_columns[0] : spec.y_label;
    p.log_x = spec.log_x;
    p.log_y = spec.log_y;
    size_t most_points = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
        for (size_t k = 0; k < ys.size(); ++k) {
            // The legend: the y column when there are several, the group's value ("k=5" for a
            // number) with --group, both when both vary; none for a single curve.
            std::string label = groups[g];
            if (!spec.group_column.empty() && is_number(label))
                label = spec.group_column + "=" + label;
            if (ys.size() > 1) label += (label.empty() ? "" : " ") + spec.y_columns[k];

            std::vector<std::pair<double, double>> points;
            for (size_t r = 0; r < table.rows.size(); ++r) {
                if (group_of_row[r] != g) continue;
                points.emplace_back(number_at(table, r, x, csv_name),
                                    number_at(table, r, ys[k], csv_name));
            }
            std::stable_sort(points.begin(), points.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            plot::Series series{label, {}, {}};
            for (const auto& [px, py] : points) {
                series.x.push_back(px);
                series.y.push_back(py);
            }
            most_points = std::max(most_points, points.size());
            p.series.push_back(std::move(series));
        }
    }
    p.markers = most_points <= 40;
    return p;
}

int cmd_plot(const Argv& argv) {
    Args args(argv, {"x", "y", "group", "title", "xlabel", "ylabel", "out"},
              {"logx", "logy", "help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().size() != 1 || !args.has("x") || !args.has("y") || !args.has("out")) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    CsvPlotSpec spec;
    spec.x_column = args.get("x");
    spec.y_columns = split_commas(args.get("y"));
    for (const std::string& y : spec.y_columns)
        if (y.empty()) throw Error(fmt::format("--y \"{}\": an empty column name", args.get("y")));
    spec.group_column = args.get("group");
    spec.log_x = args.has("logx");
    spec.log_y = args.has("logy");
    spec.title = args.get("title");
    spec.x_label = args.get("xlabel");
    spec.y_label = args.get("ylabel");

    const std::string csv = args.positional()[0];
    const plot::LinePlot p = line_plot_from_csv(read_file(csv), csv, spec);
    const std::string out = args.get("out");
    write_file_atomically(out, plot::line_plot_svg(p));
    size_t points = 0;
    for (const plot::Series& s : p.series) points += s.x.size();
    fmt::print("{}: {} curve{}, {} points\n", out, p.series.size(), p.series.size() == 1 ? "" : "s",
               points);
    return 0;
}

}  // namespace seqgrad
