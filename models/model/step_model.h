// StepModel: what greedy decoding and beam search need from a model, and nothing more.
//
// A decoder runs one token at a time for N independent rows (hypotheses). Its per-row state is
// a list of tensors whose first dim is N (hidden state, input-feeding vector, and the encoder
// outputs / projected keys / source mask the row attends over). Beam search reorders and
// duplicates rows with select_rows; a row never needs to know which sentence it belongs to.
// Seq2Seq implements this; tests implement it with fixed probability tables.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

struct DecoderState {
    std::vector<Tensor> tensors;  // each [N, ...]
    int64_t rows() const { return tensors.empty() ? 0 : tensors[0].size(0); }
};

struct StepResult {
    StepResult() = default;
    StepResult(Tensor log_probs_, Tensor attention_ = Tensor())
        : log_probs(std::move(log_probs_)), attention(std::move(attention_)) {}
    Tensor log_probs;  // [N, V]: log p(next token | prefix, source), rows sum to 1 in prob space
    Tensor attention;  // [N, S] attention weights of this step, or undefined for models without
    // Models built of multi-head attention layers (the Transformer) also give every decoder
    // layer's weights of this step, head by head (the query is the one new position, T = 1):
    //   self_attention[l]   [N, h, 1, t]  over the t target positions so far, this one included
    //   cross_attention[l]  [N, h, 1, S]  over the source positions
    // `attention` is then the top layer's cross-attention averaged over heads. Decoding reads
    // neither list; they stay empty for the RNN models.
    std::vector<Tensor> self_attention, cross_attention;
};

class StepModel {
  public:
    virtual ~StepModel() = default;
    virtual int64_t vocab_size() const = 0;
    // Advances every row by one token given the previous token of each row (SOS at the first
    // step); updates `state` in place. Called under NoGradGuard.
    virtual StepResult step(const std::vector<int32_t>& previous_tokens,
                            DecoderState& state) const = 0;
};

// A new state whose row i is row rows[i] of `state` (rows may repeat: beam expansion).
DecoderState select_rows(const DecoderState& state, const std::vector<int32_t>& rows);

}  // namespace seqgrad
