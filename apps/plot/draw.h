// The drawing parts the line plots (apps/plot/line_plot.cpp) and the heatmaps
// (apps/plot/heatmap.cpp) share: text measurement, SVG elements, colours and axes. Internal to
// apps/plot/; the pictures' contract is apps/plot/plot.h.
//
// SVG is plain text, so a picture is built by appending elements to a string. There is no
// renderer at hand to measure text, so the layout estimates text widths from character counts;
// margins are generous enough that the estimate being a little off never cuts text.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace seqgrad::plot::draw {

// ---- text ---------------------------------------------------------------------------------------

// Characters (not bytes) of UTF-8 `text`.
std::size_t utf8_length(const std::string& text);
// Shortens `text` to at most `max_chars` characters, ending in "…" when something was cut.
std::string utf8_truncate(const std::string& text, std::size_t max_chars);
// Width of `text` in pixels at `font_size`, estimated (see draw.cpp).
double text_width(const std::string& text, double font_size);
// The widest of `texts`.
double widest(const std::vector<std::string>& texts, double font_size);

// ---- SVG elements -------------------------------------------------------------------------------

void open_svg(std::string& svg, double width, double height);
void close_svg(std::string& svg);
// A <text> element. `content` comes from the caller and is escaped; `attributes` are written by
// apps/plot/ only (never user data), so they go in verbatim.
void add_text(std::string& svg, double x, double y, const std::string& content,
              const std::string& attributes);
void add_line(std::string& svg, double x1, double y1, double x2, double y2,
              const std::string& attributes);

// ---- colours ------------------------------------------------------------------------------------

// Paul Tol's "bright" qualitative palette: distinguishable under the common colour-vision
// deficiencies and on white paper. Beyond seven series the colours repeat with a dash pattern.
inline constexpr std::array<const char*, 7> kSeriesColours = {
    "#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"};
inline constexpr std::array<const char*, 4> kDashPatterns = {"", "7 4", "2 3", "9 3 2 3"};

struct Rgb {
    double r, g, b;
};

// Matplotlib's viridis sampled at 0, 0.1, ..., 1. Viridis is perceptually uniform (equal steps
// in value look like equal steps in colour), reads in grey-scale, and suits colour-blind readers.
// Linear interpolation between these eleven stops is visually indistinguishable from the full map.
inline constexpr std::array<Rgb, 11> kViridis = {{{0x44, 0x01, 0x54},
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

// "#rrggbb"
std::string hex_colour(const Rgb& c);
// Colour of t in [0, 1] (clamped) on the viridis map.
std::string viridis(double t);

// ---- axes ---------------------------------------------------------------------------------------

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
// Linear axis covering [lo, hi], widened outwards to whole 1-2-5 steps so the frame starts and
// ends on a tick.
Axis linear_axis(double lo, double hi);
// Log axis covering [lo, hi] (both > 0): ticks at 1, 2 and 5 times each power of ten over a few
// decades, at powers of ten only over many.
Axis log_axis(double lo, double hi);

}  // namespace seqgrad::plot::draw
