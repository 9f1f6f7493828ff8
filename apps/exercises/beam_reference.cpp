#include "apps/exercises/beam_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace seqgrad::grading {

using namespace practice;

void reference_beam_step(BeamState& beams, const std::vector<std::vector<double>>& log_probs,
                         const BeamConfig& config) {
    struct Candidate {
        double log_prob;
        size_t beam;
        int32_t token;
    };
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < beams.live.size(); ++i)
        for (size_t v = 2; v < log_probs[i].size(); ++v)
            if (std::isfinite(log_probs[i][v]))
                candidates.push_back({beams.live[i].log_prob + log_probs[i][v], i, int32_t(v)});
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });
    const size_t free = size_t(config.beam_size) - beams.finished.size();
    std::vector<BeamHypothesis> live;
    for (size_t k = 0; k < std::min(free, candidates.size()); ++k) {
        BeamHypothesis h{beams.live[candidates[k].beam].tokens, candidates[k].log_prob, 0};
        h.tokens.push_back(candidates[k].token);
        if (h.tokens.back() == config.eos) {
            h.score = h.log_prob / std::pow(double(h.tokens.size()), config.alpha);
            beams.finished.push_back(h);
        } else {
            live.push_back(h);
        }
    }
    beams.live = live;
    if (live.empty() || int(live[0].tokens.size()) >= config.max_length) {
        beams.done = true;
        return;
    }
    if (beams.finished.empty()) return;
    double best = -INFINITY;
    for (const auto& f : beams.finished) best = std::max(best, f.score);
    const double lp_max = std::pow(double(config.max_length), config.alpha);
    beams.done = std::all_of(live.begin(), live.end(),
                             [&](const BeamHypothesis& b) { return b.log_prob / lp_max <= best; });
}

BeamRun run_beam(const BeamStepFn& step, const TableModel& model, const BeamConfig& config) {
    BeamRun run;
    BeamState state;
    state.live = {BeamHypothesis{}};
    while (!state.done) {
        if (run.steps > config.max_length + 1) {
            run.error =
                fmt::format("never stopped: still running after {} steps with max_length {}",
                            run.steps, config.max_length);
            return run;
        }
        std::vector<std::vector<double>> log_probs;
        for (const auto& h : state.live) {
            std::vector<double> row(size_t(TableModel::V), -INFINITY);
            for (auto [token, p] : model.next(h.tokens)) row[size_t(token)] = std::log(p);
            log_probs.push_back(row);
        }
        step(state, log_probs, config);
        ++run.steps;
        if (state.live.size() + state.finished.size() > size_t(config.beam_size) + 0 &&
            state.finished.size() > size_t(config.beam_size))
            run.error = "more finished hypotheses than the beam has slots";
        if (state.live.empty() && state.finished.empty()) {
            run.error = "the beam emptied with nothing finished";
            return run;
        }
    }
    std::vector<BeamHypothesis> all = state.finished;
    for (auto h : state.live)
        if (int(h.tokens.size()) >= config.max_length) {
            h.score = h.log_prob / std::pow(double(h.tokens.size()), config.alpha);
            all.push_back(h);
        }
    if (all.empty()) {
        run.error = "stopped with no finished hypothesis and no live one at max_length";
        return run;
    }
    run.best = *std::max_element(all.begin(), all.end(),
                                 [](const auto& a, const auto& b) { return a.score < b.score; });
    return run;
}

BeamRun library_beam(const TableModel& model, const BeamConfig& config) {
    DecodeOptions options;
    options.beam_size = config.beam_size;
    options.alpha = config.alpha;
    options.length_penalty = DecodeOptions::average;
    options.max_length = config.max_length;
    options.keep_attention = false;
    NoGradGuard no_grad;
    auto result = beam_search(model, model.initial_state(1), options);
    BeamRun run;
    run.best.tokens = result.at(0).at(0).tokens;
    run.best.log_prob = result[0][0].log_prob;
    run.best.score = result[0][0].score;
    return run;
}

}  // namespace seqgrad::grading
