// RNN, GRU and LSTM against PyTorch's nn.RNN, nn.GRU and nn.LSTM in double: a padded (unsorted
// lengths), bidirectional, 2-layer batch with h0 (and c0) gives the same outputs, final states
// and gradients of a scalar loss (with respect to the inputs, h0, c0 and every parameter) to
// 1e-12, through the fused and the composed cells. The numbers come from
// tests/data/make_recurrent_reference.py (run once with PyTorch; this test never imports it).
#include <nlohmann/json.hpp>

#include <fstream>

#include "recurrent_util.h"

using namespace seqgrad;
using seqgrad::testing::max_abs_diff;

namespace {

const std::string kReference =
    std::string(SEQGRAD_SOURCE_DIR) + "/tests/data/recurrent_reference.json";

Tensor tensor_of(const nlohmann::json& j, bool requires_grad = false) {
    std::vector<int64_t> sizes = j.at("shape").get<std::vector<int64_t>>();
    std::vector<real> values;
    for (double v : j.at("data")) values.push_back(real(v));
    Shape shape;
    for (int64_t s : sizes) shape.push_back(s);
    return Tensor::from_vector(shape, values, requires_grad);
}

nlohmann::json read_reference() {
    std::ifstream in(kReference);
    REQUIRE_MESSAGE(in.good(), "cannot open " << kReference);
    return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("RNN, GRU, LSTM == PyTorch (float64, 2 layers, bidirectional, unsorted lengths, h0/c0)") {
    const nlohmann::json reference = read_reference();
    REQUIRE(reference.at("cases").size() == 3);
    for (const nlohmann::json& c : reference.at("cases"))
        for (bool fused : {true, false})
            for (bool sort_by_length : {true, false}) {
                const std::string cell = c.at("cell");
                CAPTURE(cell);
                CAPTURE(fused);
                CAPTURE(sort_by_length);
                const CellType type = parse_cell_type(cell);
                const bool lstm = type == CellType::lstm;
                Rng rng(1);
                auto layer = make_recurrent(type, c.at("input_size"), c.at("hidden_size"),
                                            c.at("num_layers"), c.at("bidirectional"), 0, rng);
                layer->use_fused = fused;
                layer->sort_by_length = sort_by_length;
                StateDict weights;
                for (auto& [name, value] : c.at("parameters").items())
                    weights[name] = tensor_of(value);
                layer->load_state(weights, kReference);
                Tensor x = tensor_of(c.at("x"), true), h0 = tensor_of(c.at("h0"), true);
                Tensor c0 = lstm ? tensor_of(c.at("c0"), true) : Tensor();
                const std::vector<int32_t> lengths = c.at("lengths");

                RecurrentOutput out = layer->forward(x, lengths, h0, c0);
                Tensor loss = sum(out.outputs * tensor_of(c.at("w_out"))) +
                              sum(out.final_hidden * tensor_of(c.at("w_h")));
                if (lstm) loss = loss + sum(out.final_cell * tensor_of(c.at("w_c")));
                loss.backward();

                CHECK(std::fabs(loss.item() - c.at("loss").get<double>()) <= 1e-12);
                CHECK(max_abs_diff(out.outputs, tensor_of(c.at("output"))) <= 1e-12);
                CHECK(max_abs_diff(out.final_hidden, tensor_of(c.at("h_n"))) <= 1e-12);
                if (lstm) {
                    CHECK(max_abs_diff(out.final_cell, tensor_of(c.at("c_n"))) <= 1e-12);
                    CHECK(max_abs_diff(c0.grad(), tensor_of(c.at("grad_c0"))) <= 1e-12);
                }
                CHECK(max_abs_diff(x.grad(), tensor_of(c.at("grad_x"))) <= 1e-12);
                CHECK(max_abs_diff(h0.grad(), tensor_of(c.at("grad_h0"))) <= 1e-12);
                const auto& grads = c.at("grad_parameters");
                size_t checked = 0;
                for (auto& [name, p] : layer->named_parameters()) {
                    CAPTURE(name);
                    REQUIRE(grads.contains(name));
                    CHECK(max_abs_diff(p.grad(), tensor_of(grads.at(name))) <= 1e-12);
                    ++checked;
                }
                CHECK(checked == grads.size());
                CHECK(checked == 16);
            }
}
