// The Transformer's own config keys (model.kind "transformer", models/model/transformer.h),
// declared once in the table below (models/formats/config_fields.h): FIELD(type, name, default,
// rule, doc). The keys both architectures read (kind, the depths, init, dropout) are in
// models/model/model_config.h.
#pragma once

#include <string>

#include "seqgrad/models/formats/config_fields.h"

// clang-format off
#define SEQGRAD_TRANSFORMER_FIELDS(FIELD)                                                         \
    FIELD(int, d_model, 256, at_least(1), "E, divisible by heads")                                \
    FIELD(int, heads, 8, at_least(1), "the attention heads h")                                    \
    FIELD(int, ff_size, 1024, at_least(1), "the feed-forward block's inner size F")               \
    FIELD(bool, norm_first, false, any_value(), "pre-norm instead of the original post-norm")     \
    FIELD(std::string, positional, "sinusoidal", one_of({"sinusoidal", "learned"}),               \
          "sinusoidal or learned positions")                                                      \
    FIELD(int, max_positions, 256, at_least(1), "learned positions: the table's rows")            \
    FIELD(std::string, share_embeddings, "none",                                                  \
          one_of_or_boolean({"none", "target", "all"}, "target", "none"),                         \
          "tied weights: \"target\", the target embedding and the output projection share one " \
          "weight [V_t, E]; \"all\", with one joint vocabulary, the source embedding too")       \
    FIELD(std::string, activation, "relu", one_of({"relu", "gelu"}),                              \
          "of the feed-forward block")
// clang-format on

namespace seqgrad {

struct TransformerConfig {
    SEQGRAD_TRANSFORMER_FIELDS(SEQGRAD_DECLARE_FIELD)

    static const FieldTable<TransformerConfig>& fields();
};

}  // namespace seqgrad
