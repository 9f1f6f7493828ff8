// expect: length penalty applied at every step
// A wrong answer to 14_beam_step for the grader's tests: live log_probs divided by lp.
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
    struct Candidate {
        double log_prob;
        int beam;
        int32_t token;
    };
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < beams.live.size(); ++i)
        for (size_t v = 2; v < log_probs[i].size(); ++v)
            if (std::isfinite(log_probs[i][v]))
                candidates.push_back(
                    {beams.live[i].log_prob + log_probs[i][v], int(i), int32_t(v)});
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });
    const size_t free = size_t(config.beam_size) - beams.finished.size();
    std::vector<BeamHypothesis> live;
    for (size_t k = 0; k < std::min(free, candidates.size()); ++k) {
        const Candidate& c = candidates[k];
        BeamHypothesis h{beams.live[size_t(c.beam)].tokens, c.log_prob, 0};
        h.tokens.push_back(c.token);
        if (c.token == config.eos) {
            h.score = h.log_prob / std::pow(double(h.tokens.size()), config.alpha);
            beams.finished.push_back(h);
        } else {
            h.log_prob /= std::pow(double(h.tokens.size()), config.alpha);
            live.push_back(h);
        }
    }
    beams.live = live;
    if (live.empty() || int(live[0].tokens.size()) >= config.max_length) {
        beams.done = true;
        return;
    }
    if (beams.finished.empty()) return;
    double best = beams.finished[0].score;
    for (const BeamHypothesis& f : beams.finished) best = std::max(best, f.score);
    const double lp_max = std::pow(double(config.max_length), config.alpha);
    beams.done = std::all_of(live.begin(), live.end(),
                             [&](const BeamHypothesis& b) { return b.log_prob / lp_max <= best; });
}

}  // namespace seqgrad::exercises
