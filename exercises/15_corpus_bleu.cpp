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
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
