#include "apps/attention/attention_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace seqgrad {

AttentionDiagnosis diagnose_attention(const std::vector<std::vector<double>>& weights,
                                      const AttentionThresholds& thresholds) {
    if (weights.empty()) throw std::invalid_argument("diagnose_attention: no output steps");
    const size_t S = weights[0].size();
    AttentionDiagnosis d;
    d.source_positions = S;
    for (size_t t = 0; t < weights.size(); ++t) {
        const std::vector<double>& row = weights[t];
        if (row.empty() || row.size() != S)
            throw std::invalid_argument(
                fmt::format("diagnose_attention: row {} has {} weights, expected {} (and > 0)", t,
                            row.size(), S));
        AttentionStep step;
        double sum = 0;
        for (size_t s = 0; s < S; ++s) {
            const double w = row[s];
            if (!std::isfinite(w) || w < 0)
                throw std::invalid_argument(fmt::format(
                    "diagnose_attention: weight [{}][{}] = {} is not a probability", t, s, w));
            sum += w;
            if (w > step.max_weight || s == 0) {
                step.max_weight = w;
                step.argmax = s;
            }
            if (w > 0) step.entropy -= w * std::log(w);  // 0 ln 0 = 0
        }
        if (std::abs(sum - 1.0) > 1e-3)
            throw std::invalid_argument(
                fmt::format("diagnose_attention: row {} sums to {}, not 1", t, sum));
        step.entropy = std::max(step.entropy, 0.0);  // rounding can give -0 or -1e-17
        step.normalized_entropy = S > 1 ? step.entropy / std::log(double(S)) : 0.0;
        step.dispersed = step.normalized_entropy > thresholds.dispersed;
        d.steps.push_back(step);
    }

    const double T = double(d.steps.size());
    size_t forward = 0;
    for (size_t t = 0; t < d.steps.size(); ++t) {
        const AttentionStep& step = d.steps[t];
        d.mean_normalized_entropy += step.normalized_entropy / T;
        if (step.dispersed) d.dispersed_share += 1 / T;
        if (step.argmax == S - 1) d.last_column_share += 1 / T;
        if (t > 0 && step.argmax >= d.steps[t - 1].argmax) ++forward;
    }
    if (d.steps.size() > 1) d.forward_share = double(forward) / (T - 1);
    d.roughly_monotonic = d.forward_share >= thresholds.monotonic;
    return d;
}

namespace {

// The words of `tokens`: for each, the token positions it spans, and its label.
struct Words {
    std::vector<std::vector<size_t>> positions;
    std::vector<std::string> labels;
};

Words group_subwords(const std::vector<std::string>& tokens, const std::string& separator) {
    const std::string joiner = "\xEF\xBF\xAD";  // U+FFED, data/reversible_tokenizer.h
    Words words;
    bool continues = false;
    for (size_t i = 0; i < tokens.size(); ++i) {
        std::string t = tokens[i];
        const bool open = t.size() > separator.size() &&
                          t.compare(t.size() - separator.size(), separator.size(), separator) == 0;
        if (open) t.resize(t.size() - separator.size());
        for (size_t at; (at = t.find(joiner)) != std::string::npos;) t.erase(at, joiner.size());
        if (!continues) {
            words.positions.emplace_back();
            words.labels.emplace_back();
        }
        words.positions.back().push_back(i);
        words.labels.back() += t;
        continues = open;
    }
    return words;
}

}  // namespace

WordAttention merge_subword_attention(const std::vector<std::string>& source_tokens,
                                      const std::vector<std::string>& output_tokens,
                                      const std::vector<std::vector<double>>& weights,
                                      const std::string& separator) {
    if (weights.size() != output_tokens.size())
        throw std::invalid_argument(
            fmt::format("merge_subword_attention: {} rows for {} output tokens", weights.size(),
                        output_tokens.size()));
    for (const auto& row : weights)
        if (row.size() != source_tokens.size())
            throw std::invalid_argument(
                fmt::format("merge_subword_attention: a row of {} weights for {} source tokens",
                            row.size(), source_tokens.size()));
    Words source = group_subwords(source_tokens, separator);
    Words output = group_subwords(output_tokens, separator);
    WordAttention merged{source.labels, output.labels, {}};
    for (const auto& rows : output.positions) {
        std::vector<double> row(source.positions.size(), 0.0);
        for (size_t t : rows)
            for (size_t w = 0; w < source.positions.size(); ++w)
                for (size_t s : source.positions[w]) row[w] += weights[t][s] / double(rows.size());
        merged.weights.push_back(std::move(row));
    }
    return merged;
}

std::string display_token(const std::string& token) {
    if (token.empty()) return "\xe2\x88\x85";  // ∅
    if (token == " ") return "\xe2\x90\xa3";   // ␣, the open box: a visible space
    if (token == "\t") return "\\t";
    if (token == "\n") return "\\n";
    return token;
}

static std::vector<std::string> display_tokens(const std::vector<std::string>& tokens) {
    std::vector<std::string> out;
    for (const std::string& t : tokens) out.push_back(display_token(t));
    return out;
}

std::string format_attention_report(const AttentionDiagnosis& d,
                                    const std::vector<std::string>& source_tokens,
                                    const std::vector<std::string>& output_tokens, bool dates_task,
                                    const AttentionThresholds& thresholds) {
    if (source_tokens.size() != d.source_positions || output_tokens.size() != d.steps.size())
        throw std::invalid_argument(fmt::format(
            "format_attention_report: {} source and {} output tokens for a {} x {} matrix",
            source_tokens.size(), output_tokens.size(), d.steps.size(), d.source_positions));
    std::string out = fmt::format("{:>4}  {:<12} {:<16} {:>6}  {:>7}  {:>10}\n", "step", "output",
                                  "attended @pos", "weight", "entropy", "normalised");
    for (size_t t = 0; t < d.steps.size(); ++t) {
        const AttentionStep& s = d.steps[t];
        std::string where = fmt::format("{} @{}", display_token(source_tokens[s.argmax]), s.argmax);
        out += fmt::format("{:>4}  {:<12} {:<16} {:>6.3f}  {:>7.3f}  {:>10.3f}{}\n", t + 1,
                           display_token(output_tokens[t]), where, s.max_weight, s.entropy,
                           s.normalized_entropy, s.dispersed ? "  DISPERSED" : "");
    }

    const size_t T = d.steps.size();
    const size_t dispersed = size_t(std::lround(d.dispersed_share * double(T)));
    const size_t on_last = size_t(std::lround(d.last_column_share * double(T)));
    out += fmt::format("\nsummary: {} output steps over {} input positions (entropy in nats; ", T,
                       d.source_positions);
    out += fmt::format("normalised = entropy / ln {} = entropy / {:.3f})\n", d.source_positions,
                       std::log(double(d.source_positions)));
    out += fmt::format("  mean normalised entropy {:.3f} (0 = one-hot, 1 = uniform)\n",
                       d.mean_normalized_entropy);
    out += fmt::format(
        "  dispersed steps (normalised entropy > {:.2f}, near-uniform): {} of {} ({:.0f}%)\n",
        thresholds.dispersed, dispersed, T, 100 * d.dispersed_share);
    out += fmt::format("  most attended input is the last one ({}): {} of {} steps ({:.0f}%)\n",
                       display_token(source_tokens.back()), on_last, T, 100 * d.last_column_share);
    if (T > 1) {
        out += fmt::format(
            "  argmax does not move left at {:.0f}% of the {} moves: {} (threshold {:.0f}%)\n",
            100 * d.forward_share, T - 1,
            d.roughly_monotonic ? "roughly monotonic" : "not monotonic",
            100 * thresholds.monotonic);
        if (dates_task)
            out +=
                "  (date task: the ISO output starts with the year, which inputs usually write "
                "last, so a good model need not be monotonic here)\n";
    }
    return out;
}

plot::Heatmap attention_heatmap(const std::vector<std::string>& source_tokens,
                                const std::vector<std::string>& output_tokens,
                                const std::vector<std::vector<double>>& weights,
                                const std::string& title) {
    plot::Heatmap h;
    h.title = title;
    h.row_labels = display_tokens(output_tokens);
    h.col_labels = display_tokens(source_tokens);
    h.values = weights;
    h.vmin = 0.0;
    h.vmax = 1.0;
    return h;
}

std::string attention_csv(const std::vector<std::string>& source_tokens,
                          const std::vector<std::string>& output_tokens,
                          const std::vector<std::vector<double>>& weights) {
    if (weights.size() != output_tokens.size())
        throw std::invalid_argument(fmt::format("attention_csv: {} rows for {} output tokens",
                                                weights.size(), output_tokens.size()));
    std::vector<std::string> header{"output"};
    for (const std::string& s : display_tokens(source_tokens)) header.push_back(s);
    std::vector<std::vector<std::string>> rows;
    for (size_t t = 0; t < weights.size(); ++t) {
        std::vector<std::string> row{display_token(output_tokens[t])};
        for (double w : weights[t]) row.push_back(fmt::format("{:.6f}", w));
        rows.push_back(std::move(row));
    }
    return plot::to_csv(header, rows);  // checks every row has as many fields as the header
}

}  // namespace seqgrad
