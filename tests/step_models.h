// Toy StepModels for the decoding and beam-trace tests:
//   RandomStepModel  a tiny random recurrent "decoder" with attention, built from engine ops
//                    (embedding, matmul, tanh, log_softmax, masked softmax): realistic, random.
//   TableStepModel   fixed probability tables per prefix, so the right answer is known by hand:
//                    the exercises' TableModel (apps/exercises/step_models.h), stepped only
//                    without a graph.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "apps/exercises/step_models.h"
#include "seqgrad/models/decoding/decoding.h"
#include "test_util.h"

namespace seqgrad::testing {

inline constexpr int32_t PAD = Vocab::PAD;
inline constexpr int32_t SOS = Vocab::SOS;
inline constexpr int32_t EOS = Vocab::EOS;
inline constexpr int32_t UNK = Vocab::UNK;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

using grading::HiddenState;  // h [N,H] and the source padding mask [N,S]

// h' = tanh(h W + E[previous token]); log p = log_softmax(h' O + bias);
// attention = softmax(h' A) over the sentence's source positions (the rest masked to -inf).
// State: HiddenState, h [N, H] and the source padding mask [N, S] (1 = past the length).
class RandomStepModel : public StepModel {
  public:
    static constexpr int64_t V = 10, H = 8, S = 6;

    // eos_bias is added to EOS's logit: larger = shorter outputs.
    explicit RandomStepModel(uint64_t seed, double eos_bias = 0.5, double scale = 1.5)
        : embed_(random_tensor({V, H}, seed, false, -scale, scale)),
          w_(random_tensor({H, H}, seed + 1, false, -scale, scale)),
          out_(random_tensor({H, V}, seed + 2, false, -scale, scale)),
          att_(random_tensor({H, S}, seed + 3, false, -scale, scale)),
          bias_(Tensor::zeros({V})) {
        bias_.data()[EOS] = real(eos_bias);
    }

    int64_t vocab_size() const override { return V; }

    // One row per sentence; sentence i's row depends only on sentence_ids[i] and its length,
    // so a sentence gets the same initial state whichever batch it is in.
    std::unique_ptr<DecoderState> initial_state(const std::vector<int32_t>& sentence_ids,
                                                const std::vector<int32_t>& source_lengths) const {
        const int64_t n = int64_t(sentence_ids.size());
        Tensor h = Tensor::empty({n, H}), mask = Tensor::zeros({n, S});
        for (int64_t i = 0; i < n; ++i) {
            Tensor row = random_tensor({H}, 1000 + uint64_t(sentence_ids[size_t(i)]), false);
            std::copy(row.data(), row.data() + H, h.data() + i * H);
            for (int64_t s = source_lengths[size_t(i)]; s < S; ++s) mask.data()[i * S + s] = 1;
        }
        auto state = std::make_unique<HiddenState>();
        state->h = h;
        state->mask = mask;
        return state;
    }

    StepResult step(const std::vector<int32_t>& previous_tokens,
                    DecoderState& base) const override {
        CHECK(!grad_enabled());
        HiddenState& state = state_of<HiddenState>(base, "RandomStepModel::step");
        ++state.step;
        ++calls;
        rows_seen += int64_t(previous_tokens.size());
        max_rows = std::max(max_rows, int64_t(previous_tokens.size()));
        for (int32_t t : previous_tokens)
            if (t == EOS || t == PAD) ++bad_previous_tokens;  // a finished row was extended
        const int64_t n = int64_t(previous_tokens.size());
        Tensor h = tanh(matmul(state.h, w_) + embedding(embed_, previous_tokens, {n}));
        state.h = h;
        Tensor scores = masked_fill(matmul(h, att_), state.mask, real(-kInf));
        return {log_softmax(matmul(h, out_) + bias_), softmax(scores)};
    }

    mutable int64_t calls = 0, rows_seen = 0, max_rows = 0, bad_previous_tokens = 0;

  private:
    Tensor embed_, w_, out_, att_, bias_;
};

class TableStepModel : public grading::TableModel {
  public:
    using TableModel::TableModel;
    StepResult step(const std::vector<int32_t>& previous_tokens,
                    DecoderState& state) const override {
        CHECK(!grad_enabled());
        return TableModel::step(previous_tokens, state);
    }
};

}  // namespace seqgrad::testing
