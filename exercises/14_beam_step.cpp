// Exercise 14: one step of beam search (K = config.beam_size, lp(n) = n^alpha).
//
// In: beams.live, the live hypotheses (unfinished; best log_prob first), and
//     log_probs[i][v] = log p(v | live[i]) for each live hypothesis i and token v (−∞ = never).
// 1. Expand: every live hypothesis i and token v (not PAD = 0, not SOS = 1, not −∞) is a
//    candidate i·v with log_prob L = live[i].log_prob + log_probs[i][v]  (raw: no lp here).
// 2. Select the free = K − |finished| best candidates by L (ties: smaller i, then smaller v).
//    All candidates have the same length, so dividing by lp would not change their order.
// 3. A selected candidate ending in EOS is finished: append it to beams.finished with
//    score = L / lp(its length, EOS included); it is never extended again and its slot stays
//    used (the beam shrinks). The other selected candidates are the new beams.live, in order.
// 4. Stopping rule, beams.done = true when
//    a) no live hypothesis is left, or
//    b) the live hypotheses have config.max_length tokens, or
//    c) some hypothesis finished and no live one can beat the best finished score any more: a
//       live b can only end at a length m <= M = max_length with log_prob <= L(b) (<= 0), so its
//       best possible score is L(b) / lp(M); stop when that is <= the best finished score for
//       every live b. (Not L(b) / lp(current length): a longer ending divides by a larger lp.)
#include <algorithm>
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

void beam_step(BeamState& beams, const std::vector<std::vector<double>>& log_probs,
               const BeamConfig& config) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
