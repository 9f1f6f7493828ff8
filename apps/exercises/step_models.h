// Hand-built StepModels for the decoding exercises and the decoding tests (tests/step_models.h
// builds on them): fixed next-token tables per prefix (the right answer is known by hand) and a
// tiny random recurrent decoder.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/models/decoding/decoding.h"

namespace seqgrad::grading {

constexpr int32_t PAD = 0, SOS = 1, EOS = 2;

// The state of the table models: each row's prefix, as its id in the model's list of prefixes.
struct PrefixState : DecoderState {
    Tensor prefix_ids;  // [N,1]
    int64_t rows() const override { return prefix_ids.size(0); }
    std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const override {
        auto s = std::make_unique<PrefixState>(*this);
        s->prefix_ids = select_rows(prefix_ids, rows, "PrefixState");
        return s;
    }
};

// The state of the random recurrent models: h [N,H] (and, for some, the source mask [N,S]).
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

// Next-token probabilities per prefix (prefix without SOS); unlisted prefixes use `fallback`,
// tokens not listed have probability 0 (log-prob -inf). No attention.
// State: [N, 1], the id of each row's prefix. Counts the steps, the rows extended after they
// ended with EOS, and keeps every prefix it was asked about.
class TableModel : public StepModel {
  public:
    using Distribution = std::map<int32_t, double>;
    static constexpr int64_t V = 8;  // PAD SOS EOS UNK a b c d
    static constexpr int32_t a = 4, b = 5, c = 6, d = 7;

    explicit TableModel(Distribution fallback = {{EOS, 1.0}}) : fallback_(std::move(fallback)) {}
    void set(const std::vector<int32_t>& prefix, const Distribution& next) {
        table_[prefix] = next;
    }
    int64_t vocab_size() const override { return V; }
    std::unique_ptr<DecoderState> initial_state(int64_t rows) const {
        prefixes_.assign(1, {});
        auto s = std::make_unique<PrefixState>();
        s->prefix_ids = Tensor::zeros({rows, 1});
        return s;
    }
    // Row i continues the prefix starts[i] (as if it had produced those tokens already).
    std::unique_ptr<DecoderState> initial_state(
        const std::vector<std::vector<int32_t>>& starts) const {
        prefixes_.assign(1, {});
        auto s = std::make_unique<PrefixState>();
        s->prefix_ids = Tensor::zeros({int64_t(starts.size()), 1});
        for (size_t i = 0; i < starts.size(); ++i)
            s->prefix_ids.data()[i] = real(intern(starts[i]));
        return s;
    }
    const Distribution& next(const std::vector<int32_t>& prefix) const {
        auto found = table_.find(prefix);
        return found == table_.end() ? fallback_ : found->second;
    }
    StepResult step(const std::vector<int32_t>& previous, DecoderState& base) const override {
        PrefixState& state = state_of<PrefixState>(base, "TableModel::step");
        ++state.step;
        ++calls;
        const int64_t n = int64_t(previous.size());
        if (state.rows() != n) throw Error("TableModel: state rows != previous tokens");
        Tensor log_probs = Tensor::full({n, V}, -std::numeric_limits<real>::infinity());
        for (int64_t i = 0; i < n; ++i) {
            std::vector<int32_t> prefix = prefixes_[size_t(state.prefix_ids.data()[i])];
            if (previous[size_t(i)] != SOS) prefix.push_back(previous[size_t(i)]);
            if (std::find(prefix.begin(), prefix.end(), EOS) != prefix.end()) ++extended_after_eos;
            extended.push_back(prefix);
            state.prefix_ids.data()[i] = real(intern(prefix));
            for (auto [token, p] : next(prefix))
                log_probs.data()[i * V + token] = real(std::log(p));
        }
        return {log_probs, Tensor()};
    }
    mutable int64_t calls = 0, extended_after_eos = 0;
    mutable std::vector<std::vector<int32_t>> extended;  // every prefix the model was asked about

  private:
    int64_t intern(const std::vector<int32_t>& prefix) const {
        auto it = std::find(prefixes_.begin(), prefixes_.end(), prefix);
        if (it != prefixes_.end()) return it - prefixes_.begin();
        prefixes_.push_back(prefix);
        return int64_t(prefixes_.size()) - 1;
    }
    Distribution fallback_;
    std::map<std::vector<int32_t>, Distribution> table_;
    mutable std::vector<std::vector<int32_t>> prefixes_;
};

// h' = tanh(h W + E[previous]);  log p = log_softmax(h' O + bias). State {h [N, H]}.
class RandomModel : public StepModel {
  public:
    static constexpr int64_t V = 9, H = 6;
    explicit RandomModel(uint64_t seed) {
        Rng rng(seed);
        auto fill = [&](const Shape& s, double scale) {
            std::vector<real> v(size_t(s.numel()));
            for (auto& x : v) x = real(rng.uniform(-scale, scale));
            return Tensor::from_vector(s, v);
        };
        embed_ = fill({V, H}, 1.5), w_ = fill({H, H}, 1.5), out_ = fill({H, V}, 1.5);
        bias_ = Tensor::zeros({V});
        bias_.data()[EOS] = real(0.8);
        start_ = fill({16, H}, 1);
    }
    int64_t vocab_size() const override { return V; }
    std::unique_ptr<DecoderState> initial_state(int64_t rows) const {
        auto s = std::make_unique<HiddenState>();
        s->h = slice(start_, 0, 0, rows).detach();
        return s;
    }
    StepResult step(const std::vector<int32_t>& previous, DecoderState& base) const override {
        HiddenState& state = state_of<HiddenState>(base, "RandomModel::step");
        ++state.step;
        const int64_t n = int64_t(previous.size());
        Tensor h = tanh(matmul(state.h, w_) + embedding(embed_, previous, {n}));
        state.h = h;
        return {log_softmax(matmul(h, out_) + bias_), Tensor()};
    }

  private:
    Tensor embed_, w_, out_, bias_, start_;
};

}  // namespace seqgrad::grading
