#include "seqgrad/data/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "seqgrad/data/sacrebleu_text.h"

namespace seqgrad {

namespace {

// Counts of the n-grams of one segment, one table per order n = 1..N. An n-gram is stored as
// its tokens joined by single spaces: tokens never contain white space, so the key is unique.
using NgramCounts = std::vector<std::unordered_map<std::string, int64_t>>;

NgramCounts count_ngrams(const std::vector<std::string>& tokens, int max_order) {
    NgramCounts counts(static_cast<size_t>(max_order));
    for (size_t n = 1; n <= static_cast<size_t>(max_order); ++n) {
        for (size_t i = 0; i + n <= tokens.size(); ++i) {
            std::string key = tokens[i];
            for (size_t k = 1; k < n; ++k) key += ' ' + tokens[i + k];
            ++counts[n - 1][key];
        }
    }
    return counts;
}

// sacreBLEU's _preprocess_segment: lower-case (optional), strip trailing space, tokenize; then
// split into tokens.
std::vector<std::string> prepare(const std::string& segment, const BleuOptions& options) {
    const std::string text = options.lowercase ? lowercase_text(segment) : segment;
    return split_on_whitespace(tokenize_for_bleu(rstrip_whitespace(text), options.tokenize));
}

// The reference length closest to the hypothesis length; a tie goes to the shorter one.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
    int64_t best_diff = -1, best_len = -1;
    for (int64_t len : ref_lens) {
        const int64_t diff = std::llabs(hyp_len - len);
        if (best_diff == -1 || diff < best_diff) {
            best_diff = diff;
            best_len = len;
        } else if (diff == best_diff && len < best_len) {
            best_len = len;
        }
    }
    return best_len;
}

// sacreBLEU's my_log: log, with log(0) replaced by a huge negative number so that exp() of
// the mean gives 0 instead of an error.
double safe_log(double x) {
    return x == 0.0 ? -9999999999.0 : std::log(x);
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
    if (correct.empty()) {
        correct.assign(other.correct.size(), 0);
        total.assign(other.total.size(), 0);
    }
    if (other.correct.size() != correct.size()) {
        throw std::invalid_argument("BleuStats: cannot add statistics of different n-gram orders");
    }
    hyp_len += other.hyp_len;
    ref_len += other.ref_len;
    for (size_t n = 0; n < correct.size(); ++n) {
        correct[n] += other.correct[n];
        total[n] += other.total[n];
    }
    return *this;
}

void check_bleu_options(const BleuOptions& options) {
    const std::string& t = options.tokenize;
    if (t != "13a" && t != "intl" && t != "char" && t != "none") {
        throw std::invalid_argument("BLEU tokenize: expected 13a, intl, char or none, got \"" + t +
                                    "\"");
    }
    const std::string& m = options.smooth_method;
    if (m != "exp" && m != "floor" && m != "add-k" && m != "none") {
        throw std::invalid_argument(
            "BLEU smooth_method: expected \"exp\", \"floor\", \"add-k\" or \"none\", got \"" + m +
            "\"");
    }
    if (options.max_ngram_order < 1) {
        throw std::invalid_argument("BLEU max_ngram_order: expected a positive integer, got " +
                                    std::to_string(options.max_ngram_order));
    }
}

BleuStats bleu_segment_stats(const std::string& hypothesis,
                             const std::vector<std::string>& references,
                             const BleuOptions& options) {
    if (references.empty()) throw std::invalid_argument("BLEU: a segment needs a reference");
    const int N = options.max_ngram_order;
    // For every n-gram, the largest count it has in any one reference: the clipping limit.
    NgramCounts max_ref_counts(static_cast<size_t>(N));
    std::vector<int64_t> ref_lens;
    for (const auto& reference : references) {
        const std::vector<std::string> tokens = prepare(reference, options);
        ref_lens.push_back(static_cast<int64_t>(tokens.size()));
        const NgramCounts counts = count_ngrams(tokens, N);
        for (size_t n = 0; n < counts.size(); ++n) {
            for (const auto& [ngram, count] : counts[n]) {
                int64_t& best = max_ref_counts[n][ngram];
                if (count > best) best = count;
            }
        }
    }
    const std::vector<std::string> hyp_tokens = prepare(hypothesis, options);
    BleuStats stats;
    stats.hyp_len = static_cast<int64_t>(hyp_tokens.size());
    stats.ref_len = closest_ref_len(stats.hyp_len, ref_lens);
    stats.correct.assign(static_cast<size_t>(N), 0);
    stats.total.assign(static_cast<size_t>(N), 0);
    const NgramCounts hyp_counts = count_ngrams(hyp_tokens, N);
    for (size_t n = 0; n < hyp_counts.size(); ++n) {
        for (const auto& [ngram, count] : hyp_counts[n]) {
            stats.total[n] += count;
            auto it = max_ref_counts[n].find(ngram);
            if (it != max_ref_counts[n].end()) stats.correct[n] += std::min(count, it->second);
        }
    }
    return stats;
}

BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options) {
    check_bleu_options(options);
    const size_t N = static_cast<size_t>(options.max_ngram_order);
    if (stats.correct.size() != N || stats.total.size() != N) {
        throw std::invalid_argument("BLEU: statistics have " +
                                    std::to_string(stats.correct.size()) +
                                    " n-gram orders, options say " + std::to_string(N));
    }
    BleuScore result;
    result.counts = stats.correct;
    result.totals = stats.total;
    result.sys_len = stats.hyp_len;
    result.ref_len = stats.ref_len;
    result.ratio = stats.ref_len != 0
                       ? static_cast<double>(stats.hyp_len) / static_cast<double>(stats.ref_len)
                       : 0.0;
    result.precisions.assign(N, 0.0);

    const double sys_len = static_cast<double>(stats.hyp_len);
    const double ref_len = static_cast<double>(stats.ref_len);
    if (stats.hyp_len < stats.ref_len) {
        result.bp = stats.hyp_len > 0 ? std::exp(1.0 - ref_len / sys_len) : 0.0;
    } else {
        result.bp = 1.0;
    }

    bool any_match = false;
    for (int64_t c : stats.correct) any_match = any_match || c != 0;
    if (!any_match) return result;  // score 0, precisions 0 (sacreBLEU issue #141)

    const std::string& method = options.smooth_method;
    double smooth_value = options.smooth_value.value_or(method == "floor" ? 0.1 : 1.0);
    std::vector<double> correct(stats.correct.begin(), stats.correct.end());
    std::vector<double> total(stats.total.begin(), stats.total.end());
    double smooth_mteval = 1.0;
    size_t eff_order = N;
    for (size_t n = 1; n <= N; ++n) {
        if (method == "add-k" && n > 1) {
            correct[n - 1] += smooth_value;
            total[n - 1] += smooth_value;
        }
        if (total[n - 1] == 0) break;
        if (options.effective_order) eff_order = n;
        // The arithmetic is written in sacreBLEU's order so the result is the same double.
        if (correct[n - 1] == 0) {
            if (method == "exp") {
                smooth_mteval *= 2;
                result.precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1]);
            } else if (method == "floor") {
                result.precisions[n - 1] = 100.0 * smooth_value / total[n - 1];
            }
        } else {
            result.precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1];
        }
    }
    double log_sum = 0.0;
    for (size_t n = 0; n < eff_order; ++n) log_sum += safe_log(result.precisions[n]);
    result.score = result.bp * std::exp(log_sum / static_cast<double>(eff_order));
    return result;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const BleuOptions& options) {
    check_bleu_options(options);
    if (references.empty()) throw std::invalid_argument("BLEU: no reference stream given");
    for (size_t k = 0; k < references.size(); ++k) {
        if (references[k].size() != hypotheses.size()) {
            throw std::invalid_argument("BLEU: reference stream " + std::to_string(k + 1) +
                                        " has " + std::to_string(references[k].size()) +
                                        " lines, the hypotheses have " +
                                        std::to_string(hypotheses.size()));
        }
    }
    BleuStats sum;
    sum.correct.assign(static_cast<size_t>(options.max_ngram_order), 0);
    sum.total.assign(static_cast<size_t>(options.max_ngram_order), 0);
    std::vector<std::string> segment_refs(references.size());
    for (size_t i = 0; i < hypotheses.size(); ++i) {
        for (size_t k = 0; k < references.size(); ++k) segment_refs[k] = references[k][i];
        sum += bleu_segment_stats(hypotheses[i], segment_refs, options);
    }
    return bleu_from_stats(sum, options);
}

BleuOptions sentence_bleu_options() {
    BleuOptions options;
    options.effective_order = true;
    return options;
}

BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        const BleuOptions& options) {
    check_bleu_options(options);
    return bleu_from_stats(bleu_segment_stats(hypothesis, references, options), options);
}

std::string BleuScore::format(int width) const {
    return format(width, "");
}

std::string BleuScore::format(int width, const std::string& signature) const {
    std::string precision_text;
    for (size_t n = 0; n < precisions.size(); ++n) {
        if (n > 0) precision_text += '/';
        precision_text += fmt::format("{:.1f}", precisions[n]);
    }
    const std::string name = signature.empty() ? "BLEU" : "BLEU|" + signature;
    return fmt::format("{} = {:.{}f} {} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                       name, score, width, precision_text, bp, ratio, sys_len, ref_len);
}

std::string bleu_signature(const BleuOptions& options, int num_refs) {
    // floor and add-k carry their value: "smooth:floor[0.10]", "smooth:add-k[1.00]".
    std::string smooth = options.smooth_method;
    if (smooth == "floor" || smooth == "add-k")
        smooth +=
            fmt::format("[{:.2f}]", options.smooth_value.value_or(smooth == "floor" ? 0.1 : 1.0));
    return fmt::format("nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:2.x-seqgrad",
                       num_refs < 0 ? std::string("var") : std::to_string(num_refs),
                       options.lowercase ? "lc" : "mixed", options.effective_order ? "yes" : "no",
                       options.tokenize, smooth);
}

}  // namespace seqgrad
