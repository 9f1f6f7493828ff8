// ModelConfig: the "model" section of a config. The keys both architectures read are declared in
// the table below; each architecture's own keys live with it, the RNN's in
// models/model/seq2seq_config.h and the Transformer's in models/model/transformer_config.h (one
// table each, models/formats/config_fields.h). model.kind says which architecture's keys a config
// may set: a key of the other one is an error naming it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqgrad/models/formats/config_fields.h"
#include "seqgrad/models/model/seq2seq_config.h"
#include "seqgrad/models/model/transformer_config.h"

// clang-format off
#define SEQGRAD_SHARED_MODEL_FIELDS(FIELD)                                                        \
    FIELD(std::string, kind, "rnn", one_of({"rnn", "transformer"}),                               \
          "rnn: Seq2Seq (models/model/seq2seq.h); transformer: models/model/transformer.h")       \
    FIELD(int, encoder_layers, 1, between(1, 8), "the encoder's depth")                           \
    FIELD(int, decoder_layers, 1, between(1, 8), "the decoder's depth")                           \
    FIELD(std::string, init, "pytorch", one_of({"pytorch", "normal"}),                            \
          "pytorch: PyTorch's default initialisers; normal: every weight N(0, 0.01), bias 0")     \
    FIELD(double, dropout, 0.0, number_between(0, 0.95), "on embeddings and before the output")
// clang-format on

namespace seqgrad {

struct SharedModelConfig {
    SEQGRAD_SHARED_MODEL_FIELDS(SEQGRAD_DECLARE_FIELD)

    static const FieldTable<SharedModelConfig>& fields();
};

struct ModelConfig : SharedModelConfig, RnnConfig, TransformerConfig {
    // Reads and checks the "model" section of `root` (absent: every default); `source` names
    // the file in errors. "layers" sets both depths.
    static ModelConfig from_json(const nlohmann::json& root, const std::string& source);
    // The section from_json reads back: the shared keys and those of the kind's architecture.
    nlohmann::json to_json() const;
    // Every key the section may hold ("kind", ..., "layers"), for the README's list.
    static std::vector<std::string> keys();
};

// How the layers compute, not what: the fused cell and attention ops (what training runs) or,
// false, their composed twins (the textbook form); the same numbers either way. Not part of a
// config: a model's constructor takes it beside its config, from whoever builds the model (the
// train command: from SEQGRAD_DISABLE, read once in main; apps/cli/model_switches.h).
struct FusedLayers {
    bool cells = true;      // the recurrent cells (model.cell's fused op)
    bool attention = true;  // the attention's scores and context
};

}  // namespace seqgrad
