// StepModel: what greedy decoding and beam search need from a model, and nothing more.
//
// A decoder runs one token at a time for N independent rows (hypotheses). What it carries from
// one step to the next is its DecoderState: each model has its own, with named members
// (Seq2SeqState in models/model/seq2seq.h, TransformerState in models/model/transformer.h, the
// tests' toy states), and decoding holds it through this base only. Beam search reorders and
// duplicates rows with select(rows); a row never needs to know which sentence it belongs to.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

class DecoderState {
  public:
    virtual ~DecoderState() = default;
    // Rows the state holds (N).
    virtual int64_t rows() const = 0;
    // A new state whose row i is row rows[i] of this one (rows may repeat: beam expansion).
    // `step` and `keep_layer_attention` come along.
    virtual std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const = 0;

    int64_t step = 0;  // tokens every row has produced so far (0 before the first step)
    // Ask for every layer's attention of each step, head by head (StepResult::self_attention,
    // cross_attention): the explorer and `seqgrad attention` do; plain decoding does not, so
    // the weights are not copied out.
    bool keep_layer_attention = false;
};

// Row i of the result is row rows[i] of t [n, ...] (a copy); throws naming `who` when a row is
// out of range.
Tensor select_rows(const Tensor& t, const std::vector<int32_t>& rows, const char* who);

// The model's own state type behind a DecoderState: a StepModel's step() calls this on the state
// its start_decoding made. Throws naming `who` when the state is another model's.
template <class State>
State& state_of(DecoderState& state, const char* who) {
    auto* own = dynamic_cast<State*>(&state);
    if (!own)
        throw Error(fmt::format("{}: a decoder state made by another model (expected the one "
                                "its start_decoding returns)",
                                who));
    return *own;
}

struct StepResult {
    StepResult() = default;
    StepResult(Tensor log_probs_, Tensor attention_ = Tensor())
        : log_probs(std::move(log_probs_)), attention(std::move(attention_)) {}
    Tensor log_probs;  // [N, V]: log p(next token | prefix, source), rows sum to 1 in prob space
    Tensor attention;  // [N, S] attention weights of this step, or undefined for models without
    // Models built of multi-head attention layers (the Transformer) also give every decoder
    // layer's weights of this step, head by head (the query is the one new position, T = 1),
    // when the state asks (DecoderState::keep_layer_attention):
    //   self_attention[l]   [N, h, 1, t]  over the t target positions so far, this one included
    //   cross_attention[l]  [N, h, 1, S]  over the source positions
    // `attention` is then the top layer's cross-attention averaged over heads. Empty otherwise,
    // and always for the RNN models.
    std::vector<Tensor> self_attention, cross_attention;
};

class StepModel {
  public:
    virtual ~StepModel() = default;
    virtual int64_t vocab_size() const = 0;
    // Advances every row by one token given the previous token of each row (SOS at the first
    // step); updates `state` in place (its step grows by one). Called under NoGradGuard.
    virtual StepResult step(const std::vector<int32_t>& previous_tokens,
                            DecoderState& state) const = 0;
};

}  // namespace seqgrad
