#include "seqgrad/models/model/model_config.h"

#include <fmt/format.h>

#include "seqgrad/autograd/error.h"

namespace seqgrad {

using nlohmann::json;

const FieldTable<SharedModelConfig>& SharedModelConfig::fields() {
    using Section = SharedModelConfig;
    static const FieldTable<Section> table = {SEQGRAD_SHARED_MODEL_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

const FieldTable<RnnConfig>& RnnConfig::fields() {
    using Section = RnnConfig;
    static const FieldTable<Section> table = {SEQGRAD_RNN_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

const FieldTable<TransformerConfig>& TransformerConfig::fields() {
    using Section = TransformerConfig;
    static const FieldTable<Section> table = {SEQGRAD_TRANSFORMER_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

namespace {

// A key of the architecture model.kind does not name is an error.
template <class Section>
void check_not_given(const SectionReader& r, const FieldTable<Section>& table,
                     const std::string& why) {
    for (const Field<Section>& f : table)
        if (r.given(f.key)) throw Error(fmt::format("{}: model.{}: {}", r.source(), f.key, why));
}

// model.layers sets both stacks' depths; the Transformer's keys only with kind "transformer", the
// RNN's only with kind "rnn"; d_model divisible by heads.
void check_kind_keys(const SectionReader& r, ModelConfig& m, int layers) {
    const std::string& source = r.source();
    if (layers > 0) {
        if (r.given("encoder_layers") || r.given("decoder_layers"))
            throw Error(
                fmt::format("{}: model.layers: give either model.layers or "
                            "model.encoder_layers / model.decoder_layers, not both",
                            source));
        m.encoder_layers = m.decoder_layers = layers;
    }
    const bool transformer = m.kind == "transformer";
    if (!transformer)
        check_not_given(r, TransformerConfig::fields(),
                        fmt::format("only read with model.kind \"transformer\" (the kind is "
                                    "\"{}\")",
                                    m.kind));
    else
        check_not_given(r, RnnConfig::fields(),
                        "not read with model.kind \"transformer\" (its sizes are model.d_model, "
                        "model.heads, model.ff_size)");
    if (transformer && m.init != "pytorch")
        throw Error(
            fmt::format("{}: model.init: \"{}\" is for RNN models; a Transformer starts "
                        "from Xavier-uniform weights (model.init \"pytorch\")",
                        source, m.init));
    if (transformer && m.d_model % m.heads != 0)
        throw Error(
            fmt::format("{}: model.d_model: {} is not divisible by model.heads {} (each "
                        "head gets d_model / heads dims)",
                        source, m.d_model, m.heads));
}

// The attention's keys: attention_bias false only with Bahdanau; the mask and the position bias
// only with an attention; model.coverage needs an attention to act in; model.coverage_weight is β
// of "subtract" only.
void check_attention_keys(const SectionReader& r, const ModelConfig& m) {
    const std::string& source = r.source();
    if (r.given("attention_bias") && !m.attention_bias && m.attention != "bahdanau")
        throw Error(fmt::format(
            "{}: model.attention_bias: only read with model.attention \"bahdanau\" (the "
            "attention is \"{}\"); remove the key or set model.attention to \"bahdanau\"",
            source, m.attention));
    if (m.attention == "none" && (!m.attention_mask || m.position_bias != 0))
        throw Error(fmt::format(
            "{}: model.attention_mask / model.position_bias: only with attention (model."
            "attention is \"none\")",
            source));
    if (m.coverage != "none" && m.attention == "none")
        throw Error(fmt::format(
            "{}: model.coverage \"{}\" needs an attention to act in (model.attention is "
            "\"none\"); set model.attention or model.coverage \"none\"",
            source, m.coverage));
    if (r.given("coverage_weight") && m.coverage_weight != RnnConfig().coverage_weight &&
        m.coverage != "subtract")
        throw Error(fmt::format(
            "{}: model.coverage_weight: β of model.coverage \"subtract\" only (model.coverage "
            "is \"{}\"); remove the key or set model.coverage to \"subtract\"",
            source, m.coverage));
}

}  // namespace

ModelConfig ModelConfig::from_json(const json& root, const std::string& source) {
    ModelConfig m;
    SectionReader r(root, "model", source);
    r.read(SharedModelConfig::fields(), static_cast<SharedModelConfig&>(m));
    r.read(RnnConfig::fields(), static_cast<RnnConfig&>(m));
    int layers = 0;
    r.read("layers", layers, between(1, 8));
    r.read(TransformerConfig::fields(), static_cast<TransformerConfig&>(m));
    r.finish();
    check_kind_keys(r, m, layers);
    check_attention_keys(r, m);
    return m;
}

json ModelConfig::to_json() const {
    json j = json::object();
    fields_as_json(SharedModelConfig::fields(), static_cast<const SharedModelConfig&>(*this), j);
    if (kind == "transformer") {
        fields_as_json(TransformerConfig::fields(), static_cast<const TransformerConfig&>(*this),
                       j);
    } else {
        j.erase("kind");  // "rnn", the default kind, is not written
        fields_as_json(RnnConfig::fields(), static_cast<const RnnConfig&>(*this), j);
    }
    return j;
}

std::vector<std::string> ModelConfig::keys() {
    std::vector<std::string> keys;
    for (const auto& f : SharedModelConfig::fields()) keys.push_back(f.key);
    for (const auto& f : RnnConfig::fields()) keys.push_back(f.key);
    for (const auto& f : TransformerConfig::fields()) keys.push_back(f.key);
    keys.push_back("layers");
    return keys;
}

}  // namespace seqgrad
