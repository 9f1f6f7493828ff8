// Toy StepModels for the decoding and beam-trace tests:
//   RandomStepModel  a tiny random recurrent "decoder" with attention, built from engine ops
//                    (embedding, matmul, tanh, log_softmax, masked softmax): realistic, random.
//   TableStepModel   fixed probability tables per prefix, so the right answer is known by hand.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "seqgrad/models/decoding/decoding.h"
#include "test_util.h"

namespace seqgrad::testing {

inline constexpr int32_t PAD = Vocab::PAD;
inline constexpr int32_t SOS = Vocab::SOS;
inline constexpr int32_t EOS = Vocab::EOS;
inline constexpr int32_t UNK = Vocab::UNK;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The state of the table model: each row's prefix, as its id in the model's list of prefixes.
struct PrefixState : DecoderState {
    Tensor prefix_ids;  // [N,1]
    int64_t rows() const override { return prefix_ids.size(0); }
    std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const override {
        auto s = std::make_unique<PrefixState>(*this);
        s->prefix_ids = select_rows(prefix_ids, rows, "PrefixState");
        return s;
    }
};

// The state of the random recurrent model: h [N,H] and the source padding mask [N,S].
struct HiddenState : DecoderState {
    Tensor h, mask;
    int64_t rows() const override { return h.size(0); }
    std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const override {
        auto s = std::make_unique<HiddenState>(*this);
        s->h = select_rows(h, rows, "HiddenState");
        if (mask.defined()) s->mask = select_rows(mask, rows, "HiddenState");
        return s;
    }
};

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

// Fixed next-token distributions per prefix (the prefix excludes SOS). A prefix without a table
// uses `fallback`. Probabilities not listed are 0 (log-prob -inf). No attention.
// State: PrefixState, the id of each row's prefix in `prefixes`.
class TableStepModel : public StepModel {
  public:
    using Distribution = std::map<int32_t, double>;
    static constexpr int64_t V = 8;  // PAD SOS EOS UNK a b c d
    static constexpr int32_t a = 4, b = 5, c = 6, d = 7;

    explicit TableStepModel(Distribution fallback = {{EOS, 1.0}})
        : fallback_(std::move(fallback)) {}
    void set(const std::vector<int32_t>& prefix, const Distribution& next) {
        table_[prefix] = next;
    }
    int64_t vocab_size() const override { return V; }

    std::unique_ptr<DecoderState> initial_state(int64_t sentences) const {
        prefixes.assign(1, {});
        auto state = std::make_unique<PrefixState>();
        state->prefix_ids = Tensor::zeros({sentences, 1});
        return state;
    }

    StepResult step(const std::vector<int32_t>& previous_tokens,
                    DecoderState& base) const override {
        CHECK(!grad_enabled());
        PrefixState& state = state_of<PrefixState>(base, "TableStepModel::step");
        ++state.step;
        ++calls;
        const int64_t n = int64_t(previous_tokens.size());
        Tensor log_probs = Tensor::full({n, V}, real(-kInf));
        for (int64_t i = 0; i < n; ++i) {
            std::vector<int32_t> prefix = prefixes[size_t(state.prefix_ids.data()[i])];
            if (previous_tokens[size_t(i)] != SOS) prefix.push_back(previous_tokens[size_t(i)]);
            if (std::find(prefix.begin(), prefix.end(), EOS) != prefix.end()) ++extended_after_eos;
            extended.push_back(prefix);
            state.prefix_ids.data()[i] = real(intern(prefix));
            auto found = table_.find(prefix);
            for (auto [token, p] : found == table_.end() ? fallback_ : found->second)
                log_probs.data()[i * V + token] = real(std::log(p));
        }
        return {log_probs, Tensor()};
    }

    mutable int64_t calls = 0, extended_after_eos = 0;
    mutable std::vector<std::vector<int32_t>> extended;  // every prefix the model was asked about

  private:
    int64_t intern(const std::vector<int32_t>& prefix) const {
        auto it = std::find(prefixes.begin(), prefixes.end(), prefix);
        if (it != prefixes.end()) return it - prefixes.begin();
        prefixes.push_back(prefix);
        return int64_t(prefixes.size()) - 1;
    }
    Distribution fallback_;
    std::map<std::vector<int32_t>, Distribution> table_;
    mutable std::vector<std::vector<int32_t>> prefixes;
};

}  // namespace seqgrad::testing
