// BLEU (Papineni et al. 2002) exactly as sacreBLEU 2.x computes it, so that seqgrad's numbers
// can be compared with published ones.
//
// For each segment (sentence) the hypothesis and its references are tokenized (13a by default)
// and the statistics below are collected; corpus BLEU sums them over all segments first and
// only then forms precisions (it is not an average of sentence scores):
//   correct[n] = hypothesis n-grams that also occur in a reference, each n-gram's count clipped
//                to the largest count it has in any single reference;
//   total[n]   = hypothesis n-grams;
//   hyp_len    = hypothesis tokens;
//   ref_len    = tokens of the reference whose length is closest to hyp_len (a tie goes to the
//                shorter reference).
// Then, with p_n = 100 * correct[n] / total[n] (smoothed, see below):
//   BP   = 1 if hyp_len >= ref_len, else exp(1 - ref_len / hyp_len)   (0 if hyp_len = 0)
//   BLEU = BP * exp( (1/N) * sum_n log p_n ),  N = 4
// If no n-gram of any order matches, BLEU is 0. Smoothing of precisions whose correct count
// is 0 (sacreBLEU's compute_bleu):
//   exp   (default) the k-th such order gets p_n = 100 / (2^k * total[n])
//   floor           p_n = 100 * value / total[n], value 0.1 by default
//   add-k           for n >= 2, correct[n] and total[n] both get + k (k = 1 by default)
//   none            p_n = 0, which makes BLEU 0
// An order with total[n] = 0 stops the loop; with effective order (sentence BLEU) the mean is
// then taken over the orders seen so far, otherwise BLEU is 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace seqgrad {

struct BleuOptions {
    std::string tokenize = "13a";       ///< "13a", "intl", "char" or "none" (sacrebleu_text.h)
    std::string smooth_method = "exp";  ///< "exp", "floor", "add-k" or "none"
    /// The floor value or k; unset means sacreBLEU's default (floor 0.1, add-k 1).
    std::optional<double> smooth_value;
    bool lowercase = false;
    /// Average only over the n-gram orders the hypothesis has (for sentence-level BLEU).
    bool effective_order = false;
    int max_ngram_order = 4;
};

/// Sufficient statistics of one segment or, summed, of a corpus.
struct BleuStats {
    int64_t hyp_len = 0;
    int64_t ref_len = 0;
    std::vector<int64_t> correct;  ///< [max_ngram_order], index n-1 for n-grams
    std::vector<int64_t> total;    ///< [max_ngram_order]
    BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
    double score = 0.0;              ///< 0..100
    std::vector<int64_t> counts;     ///< correct n-grams per order (before add-k)
    std::vector<int64_t> totals;     ///< hypothesis n-grams per order (before add-k)
    std::vector<double> precisions;  ///< per order, in percent, after smoothing
    double bp = 0.0;                 ///< brevity penalty
    double ratio = 0.0;              ///< hyp_len / ref_len (0 if ref_len is 0)
    int64_t sys_len = 0;
    int64_t ref_len = 0;

    /// sacreBLEU's line: "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944
    /// hyp_len = 17 ref_len = 18)", with `width` decimals for the score.
    std::string format(int width = 2) const;
    /// The same with the signature after the name: "BLEU|nrefs:1|...|version:... = 48.53 ...".
    std::string format(int width, const std::string& signature) const;
};

/// Throws std::invalid_argument naming the bad field if `options` is not usable.
void check_bleu_options(const BleuOptions& options);

/// The statistics of one hypothesis against its references (at least one).
BleuStats bleu_segment_stats(const std::string& hypothesis,
                             const std::vector<std::string>& references,
                             const BleuOptions& options = {});

/// BLEU from (summed) statistics: sacreBLEU's compute_bleu.
BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options = {});

/// Corpus BLEU. `references` holds one or more reference streams, each parallel to
/// `hypotheses` (references[k][i] is the k-th reference of segment i), as sacreBLEU takes them.
/// Throws std::invalid_argument if a stream's length differs from the hypotheses'.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const BleuOptions& options = {});

/// The default options of sacreBLEU's sentence_bleu(): as BleuOptions but with effective order.
BleuOptions sentence_bleu_options();

/// BLEU of one sentence against its references (sacreBLEU's sentence_bleu()).
BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        const BleuOptions& options = sentence_bleu_options());

/// sacreBLEU's signature: "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x-seqgrad"
/// (floor and add-k with their value: "smooth:floor[0.10]").
/// `num_refs` < 0 is written "var" (a varying number of references).
std::string bleu_signature(const BleuOptions& options, int num_refs);

}  // namespace seqgrad
