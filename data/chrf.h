// chrF (Popović 2015) exactly as sacreBLEU 2.x computes it: an F-score over character n-grams
// (n = 1..6), optionally plus word n-grams (chrF++ uses 2 word orders), recall weighted beta
// times as much as precision.
//
// Per segment and order: hyp = hypothesis n-grams, ref = reference n-grams, match = clipped
// common n-grams (white space is removed before character n-grams are taken). With several
// references, a segment uses the reference that gives it the best F-score. Corpus chrF sums
// the statistics over segments, then (sacreBLEU's default, "effective order"):
//   P = mean of match/hyp and R = mean of match/ref over the orders where both hyp and ref
//   are non-zero;  chrF = 100 * (1 + beta^2) P R / (beta^2 P + R)   (0 if P + R = 0).
#pragma once

#include <string>
#include <vector>

namespace seqgrad {

struct ChrfOptions {
    int char_order = 6;
    int word_order = 0;  ///< 2 gives chrF++
    int beta = 2;
    bool lowercase = false;
    bool whitespace = false;     ///< keep white space inside character n-grams
    bool eps_smoothing = false;  ///< chrF++.py / Moses style: mean of per-order F-scores
};

struct ChrfScore {
    double score = 0.0;  ///< 0..100
    std::string name;    ///< "chrF2", or "chrF2++" with word_order 2
    /// "chrF2 = 52.34" with `width` decimals.
    std::string format(int width = 2) const;
    /// "chrF2|nrefs:1|... = 52.34".
    std::string format(int width, const std::string& signature) const;
};

/// Corpus chrF; `references` are streams parallel to `hypotheses`, as for corpus_bleu().
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const ChrfOptions& options = {});

/// chrF of one sentence.
ChrfScore sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                        const ChrfOptions& options = {});

/// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.x-seqgrad".
std::string chrf_signature(const ChrfOptions& options, int num_refs);

}  // namespace seqgrad
