// Heatmaps (heatmap_svg, apps/plot/plot.h): labelled cells on the viridis map, and a colour bar.
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
