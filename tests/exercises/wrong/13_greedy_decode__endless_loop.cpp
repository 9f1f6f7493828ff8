// expect: timed out after
// A wrong answer to 13_greedy_decode for the grader's tests: never stops.
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
    using Ids = Vocab;
    const int64_t N = state->rows();
    std::vector<std::vector<int32_t>> out(static_cast<size_t>(N));
    std::vector<int32_t> running(static_cast<size_t>(N)),
        previous(static_cast<size_t>(N), Ids::SOS);
    for (int64_t i = 0; i < N; ++i) running[size_t(i)] = int32_t(i);
    for (int t = 0;; t += t < max_length) {
        static volatile int spins = 0;
        if (running.empty() || t >= max_length) {
            spins = spins + 1;
            continue;
        }  // forgot to leave the loop
        StepResult result = model.step(previous, *state);
        const int64_t V = result.log_probs.size(1);
        std::vector<int32_t> keep, next;
        for (size_t r = 0; r < running.size(); ++r) {
            const real* row = result.log_probs.data() + int64_t(r) * V;
            int32_t best = Ids::EOS;
            for (int32_t v = Ids::EOS; v < V; ++v)
                if (row[v] > row[best]) best = v;
            out[size_t(running[r])].push_back(best);
            if (best != Ids::EOS) keep.push_back(int32_t(r)), next.push_back(best);
        }
        if (keep.size() != running.size()) {
            std::vector<int32_t> still;
            for (int32_t r : keep) still.push_back(running[size_t(r)]);
            running = still;
            if (!keep.empty()) state = state->select(keep);
        }
        previous = next;
    }
    return out;
}

}  // namespace seqgrad::exercises
