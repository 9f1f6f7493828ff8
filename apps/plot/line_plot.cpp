// Line plots (line_plot_svg, apps/plot/plot.h): axes over the drawable points, series, legend.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/plot/draw.h"
#include "apps/plot/plot.h"

namespace seqgrad::plot {

using namespace draw;

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

}  // namespace seqgrad::plot
