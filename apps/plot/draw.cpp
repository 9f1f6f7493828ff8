// The shared drawing parts of apps/plot/ (apps/plot/draw.h), and xml_escape (apps/plot/plot.h).
#include "apps/plot/draw.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "apps/plot/plot.h"

namespace seqgrad::plot {

namespace draw {

constexpr const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";

// ---------------------------------------------------------------------------------------------
// Text measurement and UTF-8
// ---------------------------------------------------------------------------------------------

// A UTF-8 continuation byte looks like 10xxxxxx; every other byte starts a character.
static bool is_continuation_byte(char byte) {
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

// About this many intervals between ticks; rounding to 1-2-5 steps gives between 4 and 8.
constexpr double kTargetIntervals = 5;

// The "nice" step (1, 2 or 5 times a power of ten) nearest to `raw`, nearest in ratio: the
// thresholds are the geometric midpoints between 1, 2, 5 and 10. People read 0, 0.2, 0.4 at a
// glance; 0, 0.17, 0.34 they have to work at.
static double nice_step(double raw) {
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
static std::string log_tick_label(double mantissa, int exponent) {
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

}  // namespace draw

// ---------------------------------------------------------------------------------------------
// Text
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

}  // namespace seqgrad::plot
