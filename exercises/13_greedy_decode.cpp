// Exercise 13: greedy decoding.
//
// `state` holds one row per sentence (N rows); model.step(previous_tokens, *state) advances
// every row by one token and returns log_probs [N', V] for the N' rows you passed (it updates
// `state` in place). Start every row with SOS (Vocab::SOS, data/vocab.h:
// PAD 0, SOS 1, EOS 2). At each step each running row takes its argmax token (never PAD or SOS;
// on a tie the smallest id). A row that produced EOS is finished: stop feeding it (keep only
// the running rows with state = state->select(rows), models/model/step_model.h). Stop when every
// row is finished or has max_length tokens. Returns each row's tokens (EOS included if produced).
#include "apps/exercises/exercise.h"
#include "seqgrad/models/decoding/decoding.h"

namespace seqgrad::exercises {

std::vector<std::vector<int32_t>> greedy_decode(const StepModel& model,
                                                std::unique_ptr<DecoderState> state,
                                                int max_length) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
