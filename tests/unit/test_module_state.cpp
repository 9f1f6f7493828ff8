// Module::state() and Module::load_state(): setting parameters by name, the library's way to
// carry weights in and out without a file (issue 17).
#include <doctest/doctest.h>

#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/module.h"

using namespace seqgrad;

namespace {

struct TwoLayers : Module {
    Linear first, second;
    TwoLayers(Rng& rng) : first(3, 4, true, rng), second(4, 2, false, rng) {
        register_module("first", first);
        register_module("second", second);
    }
};

}  // namespace

TEST_CASE("state() copies every parameter by name; load_state() sets them all") {
    Rng rng_a(1), rng_b(2);
    TwoLayers a(rng_a), b(rng_b);
    StateDict state = a.state();
    CHECK(state.size() == 3);
    REQUIRE(state.count("first.weight"));
    CHECK(state.at("first.weight").shape() == Shape{4, 3});
    CHECK(state.at("second.weight").shape() == Shape{2, 4});
    state.at("first.bias").data()[0] = 42;  // a copy: the model is unchanged
    CHECK(a.first.bias.data()[0] != 42);

    b.load_state(state);
    CHECK(b.first.bias.data()[0] == 42);
    for (const auto& [name, value] : a.state()) {
        if (name == "first.bias") continue;
        const Tensor& mine = b.state().at(name);
        for (int64_t i = 0; i < value.numel(); ++i) CHECK(mine.data()[i] == value.data()[i]);
    }
}

TEST_CASE("load_state() refuses a mismatch, lists what differs and copies nothing") {
    Rng rng(3);
    TwoLayers model(rng);
    const StateDict before = model.state();
    StateDict state = before;
    state.erase("second.weight");
    state["first.weight"] = Tensor::zeros({4, 4});
    state["third.weight"] = Tensor::zeros({1});
    try {
        model.load_state(state, "weights.npz");
        FAIL("no error");
    } catch (const Error& e) {
        const std::string message = e.what();
        CHECK(message.find("weights.npz does not match the model (3 differences):") == 0);
        CHECK(message.find("\n  missing: second.weight (model expects [2,4])") !=
              std::string::npos);
        CHECK(message.find("\n  first.weight: given [4,4], model expects [4,3]") !=
              std::string::npos);
        CHECK(message.find("\n  unexpected: third.weight [1]") != std::string::npos);
    }
    CHECK(model.first.bias.data()[0] == before.at("first.bias").data()[0]);
}
