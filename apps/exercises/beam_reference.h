// The grader's own beam-search step (the answer to exercise 14, checked against the library's
// beam_search on every table by the whole-search checks), and a driver that runs a whole search
// on a TableModel with a given step.
#pragma once

#include <functional>
#include <string>

#include "apps/exercises/exercise.h"
#include "apps/exercises/step_models.h"

namespace seqgrad::grading {

using BeamStepFn = std::function<void(practice::BeamState&, const std::vector<std::vector<double>>&,
                                      const practice::BeamConfig&)>;

void reference_beam_step(practice::BeamState& beams,
                         const std::vector<std::vector<double>>& log_probs,
                         const practice::BeamConfig& config);

struct BeamRun {
    practice::BeamHypothesis best;  // by score; unfinished ones (length limit) count too
    int steps = 0;
    std::string error;  // the step never stopped, or broke the beam's invariants
};
BeamRun run_beam(const BeamStepFn& step, const TableModel& model,
                 const practice::BeamConfig& config);
// seqgrad's beam_search on the same table (average length penalty, nbest 1).
BeamRun library_beam(const TableModel& model, const practice::BeamConfig& config);

}  // namespace seqgrad::grading
