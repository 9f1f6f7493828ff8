// plot.h — small, dependency-free SVG pictures for what a person would rather look at than read:
// loss curves, gradient norms against position, attention heatmaps; plus the CSV that carries the
// numbers behind each picture, and an atomic file write so a crash never leaves half a file.
//
// Every function returns a complete, standalone SVG document as a string. All text that comes from
// the caller (titles, series names, tokens) is XML-escaped, so tokens such as "<eos>" or "&" are
// safe.
#pragma once

#include <string>
#include <vector>

namespace seqgrad::plot {

// ---------------------------------------------------------------------------------------------
// Line plots
// ---------------------------------------------------------------------------------------------

// One named curve. x[i] pairs with y[i]; the two must have the same length. Points whose x or y
// is not finite (NaN, ±inf) are skipped, and so are values <= 0 on a log axis; the curve is broken
// there rather than drawn across the gap.
struct Series {
    std::string name;
    std::vector<double> x;
    std::vector<double> y;
};

struct LinePlot {
    std::string title;
    std::string x_label;
    std::string y_label;
    std::vector<Series> series;  // drawn in order, coloured from a colour-blind-safe palette
    bool log_y = false;          // log10 y axis, for quantities spanning many decades
    bool log_x = false;          // log10 x axis, e.g. for a beam width 1 ... 20 or a step size
    bool markers = false;        // a dot at every drawn point
    int width = 760;  // whole picture, in pixels (the legend sits inside it, on the right)
    int height = 460;
};

// Renders the plot: axes with 1-2-5 ticks (powers of ten on a log axis), light grid lines, axis
// labels, title, and a legend when any series has a name. Throws std::invalid_argument if a
// series has x and y of different lengths. Empty series and plots with no data are fine.
std::string line_plot_svg(const LinePlot& plot);

// ---------------------------------------------------------------------------------------------
// Heatmaps
// ---------------------------------------------------------------------------------------------

// A matrix of weights, e.g. attention: rows are output tokens, columns are input tokens.
struct Heatmap {
    std::string title;                        // optional
    std::vector<std::string> row_labels;      // one per row (left side), or empty for 0, 1, 2...
    std::vector<std::string> col_labels;      // one per column (top), or empty for 0, 1, 2...
    std::vector<std::vector<double>> values;  // values[row][col]; every row has the same length
    double vmin = 0.0;                        // value drawn in the darkest colour
    double vmax = 1.0;                        // value drawn in the brightest colour
};

// Renders the heatmap with a viridis colour map and a colour bar ticked at vmin, vmax and three
// evenly spaced values between. Cell sizes adapt to the matrix (a 40 x 40 matrix stays legible);
// column labels are rotated so they never overlap. Each cell carries a tooltip
// "out_token <- in_token: 0.123"; cells large enough also print their value. Non-finite values
// are drawn grey. Throws std::invalid_argument on ragged rows, mismatched label counts, or
// vmin >= vmax.
std::string heatmap_svg(const Heatmap& heatmap);

// ---------------------------------------------------------------------------------------------
// Text and files
// ---------------------------------------------------------------------------------------------

// Escapes the five XML special characters (& < > " ') so `text` is safe both as element text and
// inside a quoted attribute. Control characters, which XML 1.0 forbids, become '?'.
std::string xml_escape(const std::string& text);

// CSV as RFC 4180 describes it, with "\n" line endings: a field is quoted when it contains a
// comma, a double quote, a line break or leading/trailing spaces, and quotes inside are doubled.
// The header line is omitted when `header` is empty; otherwise every row must have as many
// fields as the header (std::invalid_argument if not).
std::string to_csv(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows);

}  // namespace seqgrad::plot
