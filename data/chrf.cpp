#include "seqgrad/data/chrf.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "seqgrad/data/sacrebleu_text.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

namespace {

// For each order, n-gram -> count. Character n-grams are UTF-8 strings of n code points; word
// n-grams are the words joined by spaces.
using Counts = std::unordered_map<std::string, int64_t>;

std::vector<Counts> char_ngrams(const std::string& text, int max_order, bool keep_whitespace) {
    std::u32string chars;
    for (char32_t c : decode_utf8(text)) {
        if (keep_whitespace || !is_unicode_space(c)) chars.push_back(c);
    }
    std::vector<Counts> counts(static_cast<size_t>(max_order));
    for (size_t n = 1; n <= counts.size(); ++n) {
        for (size_t i = 0; i + n <= chars.size(); ++i) {
            ++counts[n - 1][encode_utf8(std::u32string_view(chars).substr(i, n))];
        }
    }
    return counts;
}

bool is_ascii_punctuation(char c) {  // Python's string.punctuation
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

// sacreBLEU's _remove_punctuation for chrF++: split one punctuation mark off the end of a word,
// or else off its start ("(hi)" -> "(hi" ")", as sacreBLEU does).
std::vector<std::string> words_for_chrf(const std::string& text) {
    std::vector<std::string> words;
    for (const std::string& w : split_on_whitespace(text)) {
        if (decode_utf8(w).size() == 1) {
            words.push_back(w);
        } else if (is_ascii_punctuation(w.back())) {
            words.push_back(w.substr(0, w.size() - 1));
            words.push_back(w.substr(w.size() - 1));
        } else if (is_ascii_punctuation(w.front())) {
            words.push_back(w.substr(0, 1));
            words.push_back(w.substr(1));
        } else {
            words.push_back(w);
        }
    }
    return words;
}

std::vector<Counts> all_ngrams(const std::string& text, const ChrfOptions& options) {
    std::vector<Counts> counts = char_ngrams(text, options.char_order, options.whitespace);
    if (options.word_order > 0) {
        const std::vector<std::string> words = words_for_chrf(text);
        for (size_t n = 1; n <= static_cast<size_t>(options.word_order); ++n) {
            Counts c;
            for (size_t i = 0; i + n <= words.size(); ++i) {
                std::string key = words[i];
                for (size_t k = 1; k < n; ++k) key += ' ' + words[i + k];
                ++c[key];
            }
            counts.push_back(std::move(c));
        }
    }
    return counts;
}

// Per order: {hyp n-grams, ref n-grams, matches}. As in sacreBLEU, hypothesis n-grams of an
// order the reference has none of are not counted.
std::vector<int64_t> match_statistics(const std::vector<Counts>& hyp,
                                      const std::vector<Counts>& ref) {
    std::vector<int64_t> stats;
    for (size_t n = 0; n < hyp.size(); ++n) {
        int64_t hyp_count = 0, ref_count = 0, matches = 0;
        for (const auto& [ngram, count] : hyp[n]) {
            hyp_count += count;
            auto it = ref[n].find(ngram);
            if (it != ref[n].end()) matches += std::min(count, it->second);
        }
        for (const auto& entry : ref[n]) ref_count += entry.second;
        stats.push_back(ref[n].empty() ? 0 : hyp_count);
        stats.push_back(ref_count);
        stats.push_back(matches);
    }
    return stats;
}

// sacreBLEU's CHRF._compute_f_score.
double f_score(const std::vector<int64_t>& stats, const ChrfOptions& options) {
    const double eps = 1e-16;
    const double factor = static_cast<double>(options.beta) * options.beta;
    const size_t order = stats.size() / 3;
    double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (size_t i = 0; i < order; ++i) {
        const double n_hyp = static_cast<double>(stats[3 * i]);
        const double n_ref = static_cast<double>(stats[3 * i + 1]);
        const double n_match = static_cast<double>(stats[3 * i + 2]);
        const double prec = n_hyp > 0 ? n_match / n_hyp : eps;
        const double rec = n_ref > 0 ? n_match / n_ref : eps;
        const double denom = factor * prec + rec;
        score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            ++effective_order;
        }
    }
    if (options.eps_smoothing) return 100 * score / static_cast<double>(order);
    if (effective_order == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= effective_order;
        avg_rec /= effective_order;
    }
    if (avg_prec + avg_rec == 0) return 0.0;
    score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

std::string prepare(const std::string& text, const ChrfOptions& options) {
    return options.lowercase ? lowercase_text(text) : text;
}

// The statistics of the reference that gives the hypothesis its best F-score (the first one
// on a tie).
std::vector<int64_t> segment_statistics(const std::string& hypothesis,
                                        const std::vector<std::string>& references,
                                        const ChrfOptions& options) {
    const std::vector<Counts> hyp = all_ngrams(prepare(hypothesis, options), options);
    std::vector<int64_t> best;
    double best_f = -1.0;
    for (const auto& reference : references) {
        std::vector<int64_t> stats =
            match_statistics(hyp, all_ngrams(prepare(reference, options), options));
        const double f = f_score(stats, options);
        if (f > best_f) {
            best_f = f;
            best = std::move(stats);
        }
    }
    return best;
}

void check(const ChrfOptions& options) {
    if (options.char_order < 1 || options.word_order < 0 || options.beta < 1) {
        throw std::invalid_argument("chrF: char_order must be >= 1, word_order >= 0 and beta >= 1");
    }
}

std::string score_name(const ChrfOptions& options) {
    return "chrF" + std::to_string(options.beta) +
           std::string(static_cast<size_t>(options.word_order), '+');
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const ChrfOptions& options) {
    check(options);
    if (references.empty()) throw std::invalid_argument("chrF: no reference stream given");
    for (size_t k = 0; k < references.size(); ++k) {
        if (references[k].size() != hypotheses.size()) {
            throw std::invalid_argument("chrF: reference stream " + std::to_string(k + 1) +
                                        " has " + std::to_string(references[k].size()) +
                                        " lines, the hypotheses have " +
                                        std::to_string(hypotheses.size()));
        }
    }
    const size_t num_stats = 3 * static_cast<size_t>(options.char_order + options.word_order);
    std::vector<int64_t> sum(num_stats, 0);
    std::vector<std::string> segment_refs(references.size());
    for (size_t i = 0; i < hypotheses.size(); ++i) {
        for (size_t k = 0; k < references.size(); ++k) segment_refs[k] = references[k][i];
        const std::vector<int64_t> stats = segment_statistics(hypotheses[i], segment_refs, options);
        for (size_t j = 0; j < num_stats; ++j) sum[j] += stats[j];
    }
    return ChrfScore{f_score(sum, options), score_name(options)};
}

ChrfScore sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                        const ChrfOptions& options) {
    std::vector<std::vector<std::string>> streams;
    for (const auto& reference : references) streams.push_back({reference});
    return corpus_chrf({hypothesis}, streams, options);
}

std::string ChrfScore::format(int width) const {
    return format(width, "");
}

std::string ChrfScore::format(int width, const std::string& signature) const {
    return fmt::format("{}{} = {:.{}f}", name, signature.empty() ? "" : "|" + signature, score,
                       width);
}

std::string chrf_signature(const ChrfOptions& options, int num_refs) {
    return fmt::format("nrefs:{}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:2.x-seqgrad",
                       num_refs < 0 ? std::string("var") : std::to_string(num_refs),
                       options.lowercase ? "lc" : "mixed", options.eps_smoothing ? "no" : "yes",
                       options.char_order, options.word_order, options.whitespace ? "yes" : "no");
}

}  // namespace seqgrad
