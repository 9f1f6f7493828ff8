// apps/attention/: reading attention out of a model, for `seqgrad attention`, `saliency`, `explore`
// and the live page.
//
// Every attention weight of a Transformer (models/model/transformer.h) on one source sentence and
// one output, layer by layer and head by head: what `seqgrad explore` and `seqgrad attention`
// show for a Transformer run.
//
// A multi-head attention computes one softmax per head and query, [B, h, T, S] (what Hugging
// Face returns as `attentions`; PyTorch's need_weights returns their mean over heads, [B, T, S]).
// A Transformer has three kinds of them, in every layer:
//   encoder self-attention   [h, S, S]  source position i over source positions j (padding
//                                       masked), from the teacher-forced pass, once per sentence
//   decoder self-attention   [h, T, T]  output step t over the steps 0..t (causal: row t has
//                                       t + 1 entries here, the masked future is left out)
//   cross-attention          [h, T, S]  output step t over the source positions
// The encoder's come from the teacher-forced pass's ForwardRecord (models/model/forward_record.h).
// The decoder's two come from the decoding step itself (StepResult::self_attention and
// cross_attention), the output fed back one token at a time as decoding fed it, so they are the
// weights the decoder computed while it chose those tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqgrad/models/model/translation_model.h"

namespace seqgrad {

using WeightRows = std::vector<std::vector<double>>;  // [rows][columns], each row sums to 1

struct TransformerAttention {
    // [layer][head] -> rows; layers in model order (layers.0 first), heads 0..h-1
    std::vector<std::vector<WeightRows>> encoder;  // [S][S]
    std::vector<std::vector<WeightRows>> decoder;  // self: [T][t + 1]
    std::vector<std::vector<WeightRows>> cross;    // [T][S]
};

// The weights of `model` (one built of multi-head attention layers: the Transformer; others
// throw) on `source` (ids, EOS included, as Task::encode_source gives them) while
// it produces `output` (ids, as a Hypothesis holds them: EOS at the end when finished). Throws on
// an empty source or output.
TransformerAttention transformer_attention(const TranslationModel& model,
                                           const std::vector<int32_t>& source,
                                           const std::vector<int32_t>& output);

// The mean over heads of one layer's rows (PyTorch's average_attn_weights).
WeightRows mean_over_heads(const std::vector<WeightRows>& heads);

}  // namespace seqgrad
