// Helpers shared by the Transformer suites (test_transformer_layers, test_transformer_torch,
// test_transformer_model).
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "recurrent_util.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/transformer.h"
#include "seqgrad/models/run/config.h"

namespace seqgrad::testing {

inline const std::string kTransformerReference =
    std::string(SEQGRAD_SOURCE_DIR) + "/tests/data/transformer_reference.json";

inline Tensor tensor_of(const nlohmann::json& j, bool requires_grad = false) {
    std::vector<real> values;
    for (double v : j.at("data")) values.push_back(real(v));
    Shape shape;
    for (int64_t s : j.at("shape").get<std::vector<int64_t>>()) shape.push_back(s);
    return Tensor::from_vector(shape, values, requires_grad);
}

inline nlohmann::json read_transformer_reference() {
    std::ifstream in(kTransformerReference);
    REQUIRE_MESSAGE(in.good(), "cannot open " << kTransformerReference);
    return nlohmann::json::parse(in);
}

// Loads `parameters` (PyTorch names) into m, every name and shape matching.
inline void load_reference(Module& m, const nlohmann::json& parameters) {
    StateDict weights;
    for (auto& [name, value] : parameters.items()) weights[name] = tensor_of(value);
    m.load_state(weights, kTransformerReference);
}

// Every parameter's gradient equals the reference's to tol; returns how many were compared.
inline size_t check_parameter_grads(const Module& m, const nlohmann::json& grads,
                                    double tol = 1e-12) {
    size_t checked = 0;
    for (auto& [name, p] : m.named_parameters()) {
        CAPTURE(name);
        REQUIRE(grads.contains(name));
        CHECK(max_abs_diff(p.grad(), tensor_of(grads.at(name))) <= tol);
        ++checked;
    }
    CHECK(checked == grads.size());
    return checked;
}

// A Transformer model small enough for gradcheck and exact comparisons: d_model 4, 2 heads,
// feed-forward 6, 2 + 2 layers, up to 16 positions, no dropout.
inline ModelConfig tiny_transformer_config(bool norm_first, const std::string& positional) {
    ModelConfig c;
    c.kind = "transformer";
    c.d_model = 4;
    c.heads = 2;
    c.ff_size = 6;
    c.encoder_layers = c.decoder_layers = 2;
    c.norm_first = norm_first;
    c.positional = positional;
    c.max_positions = 16;
    return c;
}

// nn.Transformer's encoder and decoder, both `layers` deep
class EncoderDecoder : public TransformerEncoderDecoder {
  public:
    EncoderDecoder(const TransformerLayerOptions& o, int layers, Rng& rng)
        : TransformerEncoderDecoder(o, layers, layers, rng) {}
};

}  // namespace seqgrad::testing
