// plot.cpp — SVG line plots and heatmaps, CSV, atomic file writes. See plot.h for the contract.
//
// SVG is plain text, so a picture is built by appending elements to a string. There is no
// renderer at hand to measure text, so the layout estimates text widths from character counts;
// margins are generous enough that the estimate being a little off never cuts text.
#include "apps/plot/plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace seqgrad::plot {
namespace {

// ---------------------------------------------------------------------------------------------
// Text measurement and UTF-8
// ---------------------------------------------------------------------------------------------

constexpr const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";

// A UTF-8 continuation byte looks like 10xxxxxx; every other byte starts a character.
bool is_continuation_byte(char byte) {
    return (static_cast<unsigned char>(byte) & 0xC0) == 0x80;
}

std::size_t utf8_length(const std::string& text) {
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return !is_continuation_byte(c); }));
}

// Shortens `text` to at most `max_chars` characters, ending in "…" when something was cut.
// Cuts only at character boundaries, so a multi-byte character is never split.
std::string utf8_truncate(const std::string& text, std::size_t max_chars) {
    if (utf8_length(text) <= max_chars) return text;
    std::size_t kept = 0;
    std::size_t end = 0;
    for (; end < text.size(); ++end) {
        if (is_continuation_byte(text[end])) continue;
        if (kept == max_chars - 1) break;  // leave room for the ellipsis
        ++kept;
    }
    return text.substr(0, end) + "\u2026";
}

// Width of `text` in pixels, estimated. Sans-serif fonts average about 0.6 em per character
// (DejaVu Sans, the usual Linux default, is among the widest), so 0.62 em errs on the safe side.
double text_width(const std::string& text, double font_size) {
    return 0.62 * font_size * static_cast<double>(utf8_length(text));
}

double widest(const std::vector<std::string>& texts, double font_size) {
    double width = 0;
    for (const auto& text : texts) width = std::max(width, text_width(text, font_size));
    return width;
}

// ---------------------------------------------------------------------------------------------
// SVG building blocks
// ---------------------------------------------------------------------------------------------

void open_svg(std::string& svg, double width, double height) {
    fmt::format_to(std::back_inserter(svg),
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                   "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"{2}\">\n"
                   "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                   std::ceil(width), std::ceil(height), kFontFamily);
}

void close_svg(std::string& svg) {
    svg += "</svg>\n";
}

// A <text> element. `content` comes from the caller and is escaped here; `attributes` are
// written by this file only (never user data), so they go in verbatim.
void add_text(std::string& svg, double x, double y, const std::string& content,
              const std::string& attributes) {
    fmt::format_to(std::back_inserter(svg), "<text x=\"{:.1f}\" y=\"{:.1f}\" {}>{}</text>\n", x, y,
                   attributes, xml_escape(content));
}

void add_line(std::string& svg, double x1, double y1, double x2, double y2,
              const std::string& attributes) {
    fmt::format_to(std::back_inserter(svg),
                   "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" {}/>\n", x1, y1,
                   x2, y2, attributes);
}

// ---------------------------------------------------------------------------------------------
// Colours
// ---------------------------------------------------------------------------------------------

// Paul Tol's "bright" qualitative palette: distinguishable under the common colour-vision
// deficiencies and on white paper. Beyond seven series the colours repeat with a dash pattern.
constexpr std::array<const char*, 7> kSeriesColours = {"#4477AA", "#EE6677", "#228833", "#CCBB44",
                                                       "#66CCEE", "#AA3377", "#BBBBBB"};
constexpr std::array<const char*, 4> kDashPatterns = {"", "7 4", "2 3", "9 3 2 3"};

struct Rgb {
    double r, g, b;
};

// Matplotlib's viridis sampled at 0, 0.1, ..., 1. Viridis is perceptually uniform (equal steps
// in value look like equal steps in colour), reads in grey-scale, and suits colour-blind readers.
// Linear interpolation between these eleven stops is visually indistinguishable from the full map.
constexpr std::array<Rgb, 11> kViridis = {{{0x44, 0x01, 0x54},
                                           {0x48, 0x24, 0x75},
                                           {0x41, 0x44, 0x87},
                                           {0x35, 0x5f, 0x8d},
                                           {0x2a, 0x78, 0x8e},
                                           {0x21, 0x91, 0x8c},
                                           {0x22, 0xa8, 0x84},
                                           {0x44, 0xbf, 0x70},
                                           {0x7a, 0xd1, 0x51},
                                           {0xbd, 0xdf, 0x26},
                                           {0xfd, 0xe7, 0x25}}};

std::string hex_colour(const Rgb& c) {
    auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
    return fmt::format("#{:02x}{:02x}{:02x}", byte(c.r), byte(c.g), byte(c.b));
}

// Colour of t in [0, 1] (clamped) on the viridis map.
std::string viridis(double t) {
    const double position = std::clamp(t, 0.0, 1.0) * (kViridis.size() - 1);
    const std::size_t below = std::min(static_cast<std::size_t>(position), kViridis.size() - 2);
    const double f = position - static_cast<double>(below);
    const Rgb& a = kViridis[below];
    const Rgb& b = kViridis[below + 1];
    return hex_colour({a.r + f * (b.r - a.r), a.g + f * (b.g - a.g), a.b + f * (b.b - a.b)});
}

// ---------------------------------------------------------------------------------------------
// Axes and ticks
// ---------------------------------------------------------------------------------------------

// The range an axis shows and where its ticks go. On a log axis, positions are proportional to
// log10 of the value.
struct Axis {
    double lo = 0;
    double hi = 1;
    bool log = false;
    std::vector<double> ticks;
    std::vector<std::string> labels;

    // How far along the axis `value` lies: 0 at lo, 1 at hi.
    double fraction(double value) const {
        if (log) return (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
        return (value - lo) / (hi - lo);
    }
};

// About this many intervals between ticks; rounding to 1-2-5 steps gives between 4 and 8.
constexpr double kTargetIntervals = 5;

// The "nice" step (1, 2 or 5 times a power of ten) nearest to `raw`, nearest in ratio: the
// thresholds are the geometric midpoints between 1, 2, 5 and 10. People read 0, 0.2, 0.4 at a
// glance; 0, 0.17, 0.34 they have to work at.
double nice_step(double raw) {
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    const double mantissa = raw / power;  // in [1, 10)
    if (mantissa < std::sqrt(2.0)) return power;
    if (mantissa < std::sqrt(10.0)) return 2 * power;
    if (mantissa < std::sqrt(50.0)) return 5 * power;
    return 10 * power;
}

// Linear axis covering [lo, hi], widened outwards to whole steps so the frame starts and ends on
// a tick.
Axis linear_axis(double lo, double hi) {
    if (!(hi > lo)) {  // a single value: give it some room either side
        const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    const double step = nice_step((hi - lo) / kTargetIntervals);
    // The epsilon keeps 0.30000000000000004 / 0.1 from adding an extra, empty step.
    const double first = std::floor(lo / step + 1e-9);
    const double last = std::ceil(hi / step - 1e-9);

    Axis axis;
    axis.lo = first * step;
    axis.hi = last * step;
    // Enough decimals to tell ticks apart: a step of 0.05 needs two, a step of 20 none.
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    const bool huge = std::max(std::abs(axis.lo), std::abs(axis.hi)) >= 1e6;
    for (double k = first; k <= last + 0.5; k += 1) {
        const double value = k * step;  // k * step, not a running sum, so 0 is exactly 0
        axis.ticks.push_back(value);
        axis.labels.push_back(huge ? fmt::format("{:g}", value)
                                   : fmt::format("{:.{}f}", value, decimals));
    }
    return axis;
}

// "1000", "0.002", but "1e-5" rather than "0.00001": short labels either way.
std::string log_tick_label(double mantissa, int exponent) {
    if (exponent >= -3 && exponent <= 4)
        return fmt::format("{:g}", mantissa * std::pow(10.0, exponent));
    return fmt::format("{:g}e{}", mantissa, exponent);
}

// Log axis covering [lo, hi] (both > 0). Over a few decades, ticks at 1, 2 and 5 times each power
// of ten; over many, ticks at powers of ten only, every `stride` decades so at most ~8 labels.
Axis log_axis(double lo, double hi) {
    int first_decade = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    int last_decade = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    if (last_decade <= first_decade) last_decade = first_decade + 1;

    Axis axis;
    axis.log = true;
    if (last_decade - first_decade <= 2) {
        // Candidate ticks m * 10^e; the axis spans from the last one at or below lo to the first
        // one at or above hi, which wastes less space than whole decades would.
        std::vector<std::pair<double, int>> candidates;  // (mantissa, exponent)
        for (int e = first_decade; e <= last_decade; ++e) {
            for (double m : {1.0, 2.0, 5.0}) candidates.emplace_back(m, e);
        }
        auto value = [](const std::pair<double, int>& c) {
            return c.first * std::pow(10.0, c.second);
        };
        std::size_t begin = 0;
        while (begin + 1 < candidates.size() && value(candidates[begin + 1]) <= lo * (1 + 1e-9)) {
            ++begin;
        }
        std::size_t end = begin + 1;
        while (end < candidates.size() && value(candidates[end]) < hi * (1 - 1e-9)) ++end;
        end = std::min(end, candidates.size() - 1);
        for (std::size_t i = begin; i <= end; ++i) {
            axis.ticks.push_back(value(candidates[i]));
            axis.labels.push_back(log_tick_label(candidates[i].first, candidates[i].second));
        }
    } else {
        const int stride = static_cast<int>(std::ceil((last_decade - first_decade) / 8.0));
        // Align to the stride so the labels are round: 1e-8, 1e-6, ... rather than 1e-7, 1e-5.
        first_decade =
            static_cast<int>(std::floor(static_cast<double>(first_decade) / stride)) * stride;
        while (last_decade % stride != 0) ++last_decade;
        for (int e = first_decade; e <= last_decade; e += stride) {
            axis.ticks.push_back(std::pow(10.0, e));
            axis.labels.push_back(log_tick_label(1, e));
        }
    }
    axis.lo = axis.ticks.front();
    axis.hi = axis.ticks.back();
    return axis;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Text and files
// ---------------------------------------------------------------------------------------------

std::string xml_escape(const std::string& text) {
    std::string escaped;
    escaped.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                escaped += "&amp;";
                break;
            case '<':
                escaped += "&lt;";
                break;
            case '>':
                escaped += "&gt;";
                break;
            case '"':
                escaped += "&quot;";
                break;
            case '\'':
                escaped += "&apos;";
                break;
            default:
                // XML 1.0 allows no control characters other than tab, line feed, carriage return.
                const bool forbidden =
                    static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
                escaped += forbidden ? '?' : c;
        }
    }
    return escaped;
}

namespace {

std::string csv_field(const std::string& field) {
    const bool needs_quotes =
        field.find_first_of(",\"\r\n") != std::string::npos ||
        (!field.empty() && (field.front() == ' ' || field.back() == ' '));  // spreadsheets trim
    if (!needs_quotes) return field;
    std::string quoted = "\"";
    for (char c : field) {
        if (c == '"') quoted += '"';  // a quote inside a quoted field is written twice
        quoted += c;
    }
    return quoted + "\"";
}

void append_csv_row(std::string& csv, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) csv += ',';
        csv += csv_field(fields[i]);
    }
    csv += '\n';
}

}  // namespace

std::string to_csv(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows) {
    std::string csv;
    if (!header.empty()) append_csv_row(csv, header);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (!header.empty() && rows[r].size() != header.size()) {
            throw std::invalid_argument(fmt::format("to_csv: row {} has {} fields, header has {}",
                                                    r, rows[r].size(), header.size()));
        }
        append_csv_row(csv, rows[r]);
    }
    return csv;
}

// ---------------------------------------------------------------------------------------------
// Line plots
// ---------------------------------------------------------------------------------------------

namespace {

// A point is drawn only if both coordinates are finite and, on a log axis, positive
// (log 0 = -inf). The same test decides the axis ranges, so a stray NaN or a zero gradient
// norm can neither vanish silently into the frame nor stretch the axis to infinity.
bool drawable(const LinePlot& plot, double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!plot.log_x || x > 0) && (!plot.log_y || y > 0);
}

// Where a line plot's parts go: its axes, the plot area and the whole picture, in pixels.
struct LineFrame {
    Axis x_axis, y_axis;
    bool have_data = false;
    double left = 0, top = 0, plot_w = 0, plot_h = 0, width = 0, height = 0;
    std::vector<std::string> legend_names;  // empty: no legend
    double to_px_x(double x) const { return left + x_axis.fraction(x) * plot_w; }
    double to_px_y(double y) const { return top + (1 - y_axis.fraction(y)) * plot_h; }
};

constexpr double kTickFont = 12, kLabelFont = 13, kTitleFont = 16, kLegendFont = 12;
constexpr double kSwatch = 28;  // length of the line sample in the legend

// The axes over the drawable points (empty axes when there are none) and the layout.
LineFrame line_frame(const LinePlot& plot) {
    LineFrame f;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double x_lo = kInf, x_hi = -kInf, y_lo = kInf, y_hi = -kInf;
    for (const auto& s : plot.series) {
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            if (!drawable(plot, s.x[i], s.y[i])) continue;
            f.have_data = true;
            x_lo = std::min(x_lo, s.x[i]);
            x_hi = std::max(x_hi, s.x[i]);
            y_lo = std::min(y_lo, s.y[i]);
            y_hi = std::max(y_hi, s.y[i]);
        }
    }
    if (!f.have_data) {  // still draw empty axes, so the picture says "no data" rather than nothing
        x_lo = plot.log_x ? 1 : 0;
        x_hi = plot.log_x ? 10 : 1;
        y_lo = plot.log_y ? 1 : 0;
        y_hi = plot.log_y ? 10 : 1;
    }
    f.x_axis = plot.log_x ? log_axis(x_lo, x_hi) : linear_axis(x_lo, x_hi);
    f.y_axis = plot.log_y ? log_axis(y_lo, y_hi) : linear_axis(y_lo, y_hi);

    // Legend entries: shown when any series is named; long names are shortened.
    bool has_legend = false;
    for (std::size_t i = 0; i < plot.series.size(); ++i) {
        const std::string& name = plot.series[i].name;
        has_legend = has_legend || !name.empty();
        f.legend_names.push_back(name.empty() ? fmt::format("series {}", i + 1)
                                              : utf8_truncate(name, 30));
    }
    if (!has_legend) f.legend_names.clear();

    // Layout, outside in. Left: y label (rotated), tick labels. Bottom: tick labels, x label.
    // Right: the legend, beside the plot so it never hides a curve.
    const double y_label_space = plot.y_label.empty() ? 0 : kLabelFont + 12;
    f.left = 12 + y_label_space + widest(f.y_axis.labels, kTickFont) + 10;
    f.top = plot.title.empty() ? 18 : 46;
    const double bottom = 10 + kTickFont + (plot.x_label.empty() ? 8 : 14 + kLabelFont + 10);
    const double legend_width =
        has_legend ? 24 + kSwatch + 8 + widest(f.legend_names, kLegendFont) + 10 : 0;
    const double half_last_x_label = text_width(f.x_axis.labels.back(), kTickFont) / 2;
    const double right = std::max({legend_width, half_last_x_label + 8, 20.0});
    f.plot_w = std::max(80.0, plot.width - f.left - right);
    f.plot_h = std::max(60.0, plot.height - f.top - bottom);
    f.width = f.left + f.plot_w + right;
    f.height = f.top + f.plot_h + bottom;
    return f;
}

// The title, grid lines, tick labels and axis labels.
void draw_line_axes(std::string& svg, const LinePlot& plot, const LineFrame& f) {
    if (!plot.title.empty()) {
        // Centred over the plot area, as readers expect, unless that would push it off the edge.
        const double half_title = text_width(plot.title, kTitleFont) / 2;
        const double centre =
            std::clamp(f.left + f.plot_w / 2, std::min(half_title + 8, f.width / 2),
                       std::max(f.width - half_title - 8, f.width / 2));
        add_text(svg, centre, 30, plot.title,
                 fmt::format("font-size=\"{}\" font-weight=\"bold\" text-anchor=\"middle\"",
                             kTitleFont));
    }
    const double top = f.top, left = f.left, plot_w = f.plot_w, plot_h = f.plot_h;
    const std::string tick_label_style =
        fmt::format("class=\"tick-label\" font-size=\"{}\"", kTickFont);
    for (std::size_t i = 0; i < f.x_axis.ticks.size(); ++i) {
        const double x = f.to_px_x(f.x_axis.ticks[i]);
        add_line(svg, x, top, x, top + plot_h, "stroke=\"#e6e6e6\"");
        add_line(svg, x, top + plot_h, x, top + plot_h + 5, "stroke=\"#333\"");
        add_text(svg, x, top + plot_h + 8 + kTickFont, f.x_axis.labels[i],
                 tick_label_style + " text-anchor=\"middle\"");
    }
    for (std::size_t i = 0; i < f.y_axis.ticks.size(); ++i) {
        const double y = f.to_px_y(f.y_axis.ticks[i]);
        add_line(svg, left, y, left + plot_w, y, "stroke=\"#e6e6e6\"");
        add_line(svg, left - 5, y, left, y, "stroke=\"#333\"");
        // 0.35 em below the tick puts the middle of the digits on the tick line.
        add_text(svg, left - 8, y + 0.35 * kTickFont, f.y_axis.labels[i],
                 tick_label_style + " text-anchor=\"end\"");
    }
    if (!plot.x_label.empty()) {
        add_text(svg, left + plot_w / 2, f.height - 12, plot.x_label,
                 fmt::format("font-size=\"{}\" text-anchor=\"middle\"", kLabelFont));
    }
    if (!plot.y_label.empty()) {
        const double x = 12 + kLabelFont;  // baseline; rotated text extends one em to its left
        const double y = top + plot_h / 2;
        add_text(
            svg, x, y, plot.y_label,
            fmt::format("font-size=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 {:.1f} "
                        "{:.1f})\"",
                        kLabelFont, x, y));
    }
}

// Series s: its line (each run of consecutive drawable points is one sub-path, "M" starts a run
// and "L" continues it, so the line breaks at skipped points instead of bridging them) and its
// markers.
void draw_line_series(std::string& svg, const LinePlot& plot, const LineFrame& f, std::size_t s) {
    const Series& series = plot.series[s];
    const char* colour = kSeriesColours[s % kSeriesColours.size()];
    const char* dashes = kDashPatterns[(s / kSeriesColours.size()) % kDashPatterns.size()];

    std::string path;
    std::vector<std::pair<double, double>> dots;  // points that get a marker
    std::size_t run_length = 0;
    auto end_run = [&](std::size_t last_index) {
        // A run of one point has no line to show it: give it a dot even without markers.
        if (run_length == 1 && !plot.markers) {
            dots.emplace_back(f.to_px_x(series.x[last_index]), f.to_px_y(series.y[last_index]));
        }
        run_length = 0;
    };
    for (std::size_t i = 0; i < series.x.size(); ++i) {
        if (!drawable(plot, series.x[i], series.y[i])) {
            if (run_length > 0) end_run(i - 1);
            continue;
        }
        const double px = f.to_px_x(series.x[i]);
        const double py = f.to_px_y(series.y[i]);
        fmt::format_to(std::back_inserter(path), "{}{:.1f},{:.1f} ", run_length == 0 ? 'M' : 'L',
                       px, py);
        ++run_length;
        if (plot.markers) dots.emplace_back(px, py);
    }
    if (run_length > 0) end_run(series.x.size() - 1);

    if (!path.empty()) {
        path.pop_back();  // trailing space
        fmt::format_to(
            std::back_inserter(svg),
            "<path class=\"series\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
            "stroke-width=\"2\" stroke-linejoin=\"round\" stroke-linecap=\"round\"{}/>\n",
            path, colour, *dashes ? fmt::format(" stroke-dasharray=\"{}\"", dashes) : "");
    }
    for (const auto& [px, py] : dots) {
        fmt::format_to(
            std::back_inserter(svg),
            "<circle class=\"marker\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px, py,
            colour);
    }
}

// The legend, right of the plot area.
void draw_line_legend(std::string& svg, const LinePlot& plot, const LineFrame& f) {
    const double x = f.left + f.plot_w + 24;
    for (std::size_t s = 0; s < plot.series.size(); ++s) {
        const double y = f.top + 10 + 20 * static_cast<double>(s);
        const char* colour = kSeriesColours[s % kSeriesColours.size()];
        const char* dashes = kDashPatterns[(s / kSeriesColours.size()) % kDashPatterns.size()];
        add_line(svg, x, y, x + kSwatch, y,
                 fmt::format("stroke=\"{}\" stroke-width=\"2\"{}", colour,
                             *dashes ? fmt::format(" stroke-dasharray=\"{}\"", dashes) : ""));
        if (plot.markers) {
            fmt::format_to(std::back_inserter(svg),
                           "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n",
                           x + kSwatch / 2, y, colour);
        }
        add_text(svg, x + kSwatch + 8, y + 0.35 * kLegendFont, f.legend_names[s],
                 fmt::format("class=\"legend\" font-size=\"{}\"", kLegendFont));
    }
}

}  // namespace

std::string line_plot_svg(const LinePlot& plot) {
    for (const auto& s : plot.series) {
        if (s.x.size() != s.y.size()) {
            throw std::invalid_argument(
                fmt::format("line_plot_svg: series '{}' has {} x values but {} y values", s.name,
                            s.x.size(), s.y.size()));
        }
    }
    const LineFrame f = line_frame(plot);
    std::string svg;
    open_svg(svg, f.width, f.height);
    draw_line_axes(svg, plot, f);
    for (std::size_t s = 0; s < plot.series.size(); ++s) draw_line_series(svg, plot, f, s);
    fmt::format_to(
        std::back_inserter(svg),
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
        "stroke=\"#333\"/>\n",
        f.left, f.top, f.plot_w, f.plot_h);
    if (!f.have_data) {
        add_text(svg, f.left + f.plot_w / 2, f.top + f.plot_h / 2, "no data",
                 "font-size=\"14\" fill=\"#888\" text-anchor=\"middle\"");
    }
    if (!f.legend_names.empty()) draw_line_legend(svg, plot, f);
    close_svg(svg);
    return svg;
}

// ---------------------------------------------------------------------------------------------
// Heatmaps
// ---------------------------------------------------------------------------------------------

namespace {

// What a label shows: the token, shortened if long; "0", "1", ... when there are no labels; and
// a visible "␣" for tokens made only of spaces (character-level models have them), which would
// otherwise be invisible.
std::string display_label(const std::vector<std::string>& labels, std::size_t index) {
    if (labels.empty()) return std::to_string(index);
    const std::string& label = labels[index];
    if (!label.empty() && label.find_first_not_of(' ') == std::string::npos) {
        std::string visible;
        for (std::size_t i = 0; i < label.size(); ++i) visible += "\u2423";
        return utf8_truncate(visible, 16);
    }
    return utf8_truncate(label, 16);
}

std::string tooltip_label(const std::vector<std::string>& labels, std::size_t index) {
    return labels.empty() ? std::to_string(index) : labels[index];
}

}  // namespace

namespace {

constexpr double kHeatFont = 12, kHeatTitleFont = 15, kValueFont = 10;
constexpr double kBarGap = 24, kBarWidth = 14, kBarMinHeight = 160;

// Throws std::invalid_argument naming what is inconsistent; returns {rows, cols}.
std::pair<std::size_t, std::size_t> check_heatmap(const Heatmap& heatmap) {
    const std::size_t rows = heatmap.values.size();
    const std::size_t cols = rows == 0 ? 0 : heatmap.values[0].size();
    for (std::size_t r = 0; r < rows; ++r) {
        if (heatmap.values[r].size() != cols) {
            throw std::invalid_argument(
                fmt::format("heatmap_svg: row {} has {} values, row 0 has {}", r,
                            heatmap.values[r].size(), cols));
        }
    }
    if (!heatmap.row_labels.empty() && heatmap.row_labels.size() != rows) {
        throw std::invalid_argument(
            fmt::format("heatmap_svg: {} row labels for {} rows", heatmap.row_labels.size(), rows));
    }
    if (!heatmap.col_labels.empty() && heatmap.col_labels.size() != cols) {
        throw std::invalid_argument(fmt::format("heatmap_svg: {} column labels for {} columns",
                                                heatmap.col_labels.size(), cols));
    }
    if (!(std::isfinite(heatmap.vmin) && std::isfinite(heatmap.vmax) &&
          heatmap.vmin < heatmap.vmax)) {
        throw std::invalid_argument(fmt::format(
            "heatmap_svg: need finite vmin < vmax, got {} and {}", heatmap.vmin, heatmap.vmax));
    }

    return {rows, cols};
}

// Where a heatmap's parts go, in pixels, and the labels it shows.
struct HeatFrame {
    std::size_t rows = 0, cols = 0;
    std::vector<std::string> row_names, col_names;
    double cell = 0, left = 0, top = 0, grid_w = 0, grid_h = 0, width = 0, height = 0;
    bool diagonal = false, show_values = false;
    double bar_x = 0, bar_h = 0;
    std::vector<double> bar_values;
    std::vector<std::string> bar_labels;
};

HeatFrame heat_frame(const Heatmap& heatmap, std::size_t rows, std::size_t cols) {
    HeatFrame f;
    f.rows = rows;
    f.cols = cols;
    for (std::size_t r = 0; r < rows; ++r)
        f.row_names.push_back(display_label(heatmap.row_labels, r));
    for (std::size_t c = 0; c < cols; ++c)
        f.col_names.push_back(display_label(heatmap.col_labels, c));

    // Cell size: aim for a grid about 520 px across, but never so small that a 12 px label no
    // longer fits in a row (or, rotated, in a column), nor so big that a 3 x 3 matrix fills a page.
    constexpr double kFont = kHeatFont;
    const std::size_t longest_side = std::max<std::size_t>({rows, cols, 1});
    const double cell =
        std::clamp(std::round(520.0 / static_cast<double>(longest_side)), 18.0, 44.0);
    // Column labels at -45 degrees read more easily, but neighbouring labels are then only
    // cell * sin(45) apart; when that is too tight for the font, stand them upright (-90).
    constexpr double kSin45 = 0.70710678118654752;
    const bool diagonal = cell * kSin45 >= kFont * 1.3;
    const bool show_values = cell >= 36;  // room for "0.12" inside each cell

    const double row_label_width = widest(f.row_names, kFont);
    const double col_label_width = widest(f.col_names, kFont);
    const double grid_w = cell * static_cast<double>(cols);
    const double grid_h = cell * static_cast<double>(rows);
    const double title_space = heatmap.title.empty() ? 10 : 40;
    const double left = std::round(12 + row_label_width + 8);
    const double top = std::round(title_space + (diagonal ? kSin45 : 1.0) * col_label_width + 12);
    // Diagonal labels lean right: the last one can reach past the grid's right edge.
    const double label_overhang =
        diagonal ? std::max(0.0, col_label_width * kSin45 + kFont - cell / 2) : 0.0;

    const double bar_x = left + grid_w + kBarGap;
    const double bar_h = std::max(grid_h, kBarMinHeight);
    for (int i = 0; i <= 4; ++i) {
        f.bar_values.push_back(heatmap.vmin + (heatmap.vmax - heatmap.vmin) * i / 4.0);
        f.bar_labels.push_back(fmt::format("{:.4g}", f.bar_values.back()));
    }
    const double width = std::max({left + grid_w + label_overhang + 10,
                                   bar_x + kBarWidth + 8 + widest(f.bar_labels, kFont) + 12,
                                   12 + text_width(heatmap.title, kHeatTitleFont) + 12});
    const double height = top + std::max(grid_h, bar_h) + 14;

    f.cell = cell;
    f.diagonal = diagonal;
    f.show_values = show_values;
    f.left = left;
    f.top = top;
    f.grid_w = grid_w;
    f.grid_h = grid_h;
    f.bar_x = bar_x;
    f.bar_h = bar_h;
    f.width = width;
    f.height = height;
    return f;
}

// Row labels, and column labels rotated above the grid.
void draw_heat_labels(std::string& svg, const HeatFrame& f) {
    const double cell = f.cell, left = f.left, top = f.top;
    const std::size_t rows = f.rows, cols = f.cols;
    constexpr double kFont = kHeatFont;
    const bool diagonal = f.diagonal;
    const auto &row_names = f.row_names, &col_names = f.col_names;
    // Row labels, right-aligned against the grid, vertically centred on their row.
    for (std::size_t r = 0; r < rows; ++r) {
        const double y = top + cell * (static_cast<double>(r) + 0.5) + 0.35 * kFont;
        add_text(svg, left - 8, y, row_names[r],
                 fmt::format("class=\"row-label\" font-size=\"{}\" text-anchor=\"end\"", kFont));
    }
    // Column labels, rotated about their anchor point just above the grid. The anchor is nudged
    // so that the middle of the glyphs, not their baseline, lines up with the column's centre.
    for (std::size_t c = 0; c < cols; ++c) {
        const double centre = left + cell * (static_cast<double>(c) + 0.5);
        const double x = centre + (diagonal ? 0.25 : 0.35) * kFont;
        const double y = top - 6 + (diagonal ? 0.25 * kFont : 0.0);
        add_text(svg, x, y, col_names[c],
                 fmt::format("class=\"col-label\" font-size=\"{}\" transform=\"rotate({} {:.1f} "
                             "{:.1f})\"",
                             kFont, diagonal ? -45 : -90, x, y));
    }
}

// The cells (with their values written in when they are large enough).
void draw_heat_cells(std::string& svg, const Heatmap& heatmap, const HeatFrame& f) {
    const double cell = f.cell, left = f.left, top = f.top;
    const std::size_t rows = f.rows, cols = f.cols;
    // The cells. crispEdges keeps renderers from anti-aliasing hairline seams between them.
    svg += "<g shape-rendering=\"crispEdges\">\n";
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            const double value = heatmap.values[r][c];
            const double t = (value - heatmap.vmin) / (heatmap.vmax - heatmap.vmin);
            const std::string fill = std::isfinite(value) ? viridis(t) : "#bbbbbb";
            const std::string tooltip =
                fmt::format("{} <- {}: {:.3f}", tooltip_label(heatmap.row_labels, r),
                            tooltip_label(heatmap.col_labels, c), value);
            fmt::format_to(std::back_inserter(svg),
                           "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                           "height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>\n",
                           left + cell * static_cast<double>(c),
                           top + cell * static_cast<double>(r), cell, cell, fill,
                           xml_escape(tooltip));
        }
    }
    svg += "</g>\n";
    if (f.show_values) {
        // Viridis is dark below about 0.55 and light above: pick the text colour that contrasts.
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
                const double value = heatmap.values[r][c];
                if (!std::isfinite(value)) continue;
                const double t = (value - heatmap.vmin) / (heatmap.vmax - heatmap.vmin);
                add_text(svg, left + cell * (static_cast<double>(c) + 0.5),
                         top + cell * (static_cast<double>(r) + 0.5) + 0.35 * kValueFont,
                         fmt::format("{:.2f}", value),
                         fmt::format("font-size=\"{}\" text-anchor=\"middle\" fill=\"{}\" "
                                     "pointer-events=\"none\"",
                                     kValueFont, t < 0.55 ? "white" : "black"));
            }
        }
    }
}

// Colour bar: a gradient through the same stops the cells use, vmin at the bottom.
void draw_colour_bar(std::string& svg, const HeatFrame& f) {
    const double top = f.top, bar_x = f.bar_x, bar_h = f.bar_h;
    constexpr double kFont = kHeatFont;
    svg += "<defs><linearGradient id=\"seqgrad-viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
    for (std::size_t i = 0; i < kViridis.size(); ++i) {
        fmt::format_to(std::back_inserter(svg), "<stop offset=\"{:.2f}\" stop-color=\"{}\"/>\n",
                       static_cast<double>(i) / (kViridis.size() - 1), hex_colour(kViridis[i]));
    }
    svg += "</linearGradient></defs>\n";
    fmt::format_to(std::back_inserter(svg),
                   "<rect class=\"colour-bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                   "height=\"{:.1f}\" fill=\"url(#seqgrad-viridis)\" stroke=\"#333\" "
                   "stroke-width=\"0.5\"/>\n",
                   bar_x, top, kBarWidth, bar_h);
    for (std::size_t i = 0; i < f.bar_values.size(); ++i) {
        const double y = top + bar_h * (1 - static_cast<double>(i) / 4);
        add_line(svg, bar_x + kBarWidth, y, bar_x + kBarWidth + 4, y, "stroke=\"#333\"");
        add_text(svg, bar_x + kBarWidth + 7, y + 0.35 * kFont, f.bar_labels[i],
                 fmt::format("class=\"tick-label\" font-size=\"{}\"", kFont));
    }
}

}  // namespace

std::string heatmap_svg(const Heatmap& heatmap) {
    const auto [rows, cols] = check_heatmap(heatmap);
    const HeatFrame f = heat_frame(heatmap, rows, cols);
    std::string svg;
    open_svg(svg, f.width, f.height);
    if (rows == 0 || cols == 0) {
        add_text(svg, 12, f.height / 2, "no data", "font-size=\"14\" fill=\"#888\"");
    }
    if (!heatmap.title.empty()) {
        add_text(svg, 12, 26, heatmap.title,
                 fmt::format("font-size=\"{}\" font-weight=\"bold\"", kHeatTitleFont));
    }
    draw_heat_labels(svg, f);
    draw_heat_cells(svg, heatmap, f);
    if (rows > 0 && cols > 0) draw_colour_bar(svg, f);
    close_svg(svg);
    return svg;
}

}  // namespace seqgrad::plot
