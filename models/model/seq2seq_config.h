// The RNN encoder-decoder's own config keys (model.kind "rnn", models/model/seq2seq.h), declared
// once in the table below (models/formats/config_fields.h): FIELD(type, name, default, rule, doc).
// The keys both architectures read (kind, the depths, init, dropout) are in
// models/model/model_config.h.
#pragma once

#include <cstdint>
#include <string>

#include "seqgrad/models/formats/config_fields.h"

// clang-format off
#define SEQGRAD_RNN_FIELDS(FIELD)                                                                 \
    FIELD(std::string, cell, "gru", one_of({"gru", "lstm", "rnn"}),                               \
          "the encoder's and decoder's cell")                                                     \
    FIELD(int, embedding_size, 64, at_least(1), "E, the embeddings' size")                        \
    FIELD(int, hidden_size, 128, at_least(1), "the decoder's state size H")                       \
    FIELD(int, encoder_hidden_size, 0, at_least(0), "per direction; 0 = hidden_size")             \
    FIELD(bool, bidirectional, false, any_value(), "a bidirectional encoder")                     \
    FIELD(std::string, attention, "bahdanau",                                                     \
          one_of({"bahdanau", "luong_dot", "luong_general", "luong_concat", "none"}),             \
          "the attention")                                                                        \
    FIELD(int, attention_size, 128, at_least(1), "Bahdanau / Luong-concat attention size A")      \
    FIELD(bool, luong_scaled, false, any_value(), "luong_dot: divide scores by sqrt(d)")          \
    FIELD(bool, input_feeding, false, any_value(),                                                \
          "Luong: feed the attentional vector into the next step")                                \
    FIELD(bool, attention_bias, true, any_value(), "Bahdanau: the key projection W_k has a bias") \
    FIELD(std::string, output_layer, "plain", one_of({"plain", "deep"}),                          \
          "plain: the output projection reads o_t; deep: [o_t; c_t; emb(y_{t-1})]")               \
    FIELD(bool, attention_mask, true, any_value(),                                                \
          "study switch: false lets attention weigh PAD positions")                               \
    FIELD(double, position_bias, 0.0, number_at_least(0),                                         \
          "study switch: beta of the position bias -beta |t/r - s|")                              \
    FIELD(double, position_bias_ratio, 1.0, number_above(0),                                      \
          "r of the position bias, target tokens per source token")                               \
    FIELD(std::string, coverage, "none", one_of({"none", "subtract", "learned"}),                 \
          "coverage inside the attention (layers/attention.h)")                                   \
    FIELD(double, coverage_weight, 1.0, number_at_least(0), "beta of coverage \"subtract\"")
// clang-format on

namespace seqgrad {

struct RnnConfig {
    SEQGRAD_RNN_FIELDS(SEQGRAD_DECLARE_FIELD)

    int64_t encoder_size() const {
        return encoder_hidden_size > 0 ? encoder_hidden_size : hidden_size;
    }
    static const FieldTable<RnnConfig>& fields();
};

}  // namespace seqgrad
