// expect: missing brevity penalty
// A wrong answer to 15_corpus_bleu for the grader's tests: BP = 1 always.
// Exercise 15: corpus BLEU (one reference per sentence, n = 1..4, no smoothing), in 0..100.
//
// For every sentence and n = 1..4, over the hypothesis' n-grams:
//   correct[n] += Σ_g min(count_hyp(g), count_ref(g))     (clipped: a repeated word counts only
//                                                           as often as the reference has it)
//   total[n]   += number of hypothesis n-grams             (max(0, len − n + 1))
//   hyp_len    += hypothesis length,   ref_len += reference length
// Then, over the corpus (sums first, precisions after: not an average of sentence scores):
//   p_n  = correct[n] / total[n];   if any correct[n] (or total[n]) is 0, BLEU = 0
//   BP   = 1 if hyp_len >= ref_len, else exp(1 − ref_len / hyp_len)    (brevity penalty)
//   BLEU = 100 · BP · exp((1/4) Σ_n ln p_n)
// Empty hypotheses are allowed (they add to ref_len only); never return NaN.
#include <cmath>
#include <map>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

double corpus_bleu(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references) {
    double correct[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
    double hyp_len = 0, ref_len = 0;
    for (size_t s = 0; s < hypotheses.size(); ++s) {
        const Tokens &hyp = hypotheses[s], &ref = references[s];
        hyp_len += double(hyp.size());
        ref_len += double(ref.size());
        for (size_t n = 1; n <= 4; ++n) {
            std::map<Tokens, int> hyp_counts, ref_counts;
            for (size_t i = 0; i + n <= hyp.size(); ++i)
                ++hyp_counts[Tokens(hyp.begin() + long(i), hyp.begin() + long(i + n))];
            for (size_t i = 0; i + n <= ref.size(); ++i)
                ++ref_counts[Tokens(ref.begin() + long(i), ref.begin() + long(i + n))];
            for (const auto& [gram, count] : hyp_counts) {
                auto found = ref_counts.find(gram);
                correct[n - 1] += found == ref_counts.end() ? 0 : std::min(count, found->second);
                total[n - 1] += count;
            }
        }
    }
    double log_sum = 0;
    for (int n = 0; n < 4; ++n) {
        if (correct[n] == 0 || total[n] == 0) return 0;
        log_sum += std::log(correct[n] / total[n]);
    }
    const double bp = 1;
    return 100 * bp * std::exp(log_sum / 4);
}

}  // namespace seqgrad::exercises
