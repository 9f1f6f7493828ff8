// Config validation: every bad key names its path and what was expected.
#include <doctest/doctest.h>

#include <fstream>

#include "autograd/tensor.h"
#include "models/config.h"

using namespace seqgrad;
using nlohmann::json;

static std::string error_of(const json& j) {
    try {
        Config::from_json(j, "c.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

TEST_CASE("defaults parse and round-trip through to_json") {
    Config c = Config::from_json(json::object());
    CHECK(c.model.attention == "bahdanau");
    Config again = Config::from_json(c.to_json());
    CHECK(again.to_json() == c.to_json());
}

TEST_CASE("wrong types and impossible values name the key path and the expectation") {
    CHECK(error_of({{"model", {{"hidden_size", "big"}}}}) ==
          "c.json: model.hidden_size: expected a positive integer, got \"big\"");
    CHECK(error_of({{"model", {{"hidden_size", 0}}}}) ==
          "c.json: model.hidden_size: expected a positive integer, got 0");
    CHECK(error_of({{"train", {{"lr", -1}}}}) == "c.json: train.lr: expected a number > 0, got -1");
    CHECK(error_of({{"model", {{"attention", "luong"}}}}) ==
          "c.json: model.attention: expected one of \"bahdanau\", \"luong_dot\", "
          "\"luong_general\", \"luong_concat\", \"none\", got \"luong\"");
    CHECK(error_of({{"train", {{"teacher_forcing", 1.5}}}}) ==
          "c.json: train.teacher_forcing: expected a number in [0, 1], got 1.5");
    CHECK(error_of({{"model", {{"bidirectional", 1}}}}) ==
          "c.json: model.bidirectional: expected true or false, got 1");
    CHECK(error_of({{"model", 3}}) == "c.json: model: expected an object, got 3");
}

TEST_CASE("unknown keys and sections are errors") {
    CHECK(error_of({{"model", {{"hidden", 3}}}}).find("c.json: model.hidden: unknown key") == 0);
    CHECK(error_of({{"optimizer", {}}}).find("c.json: optimizer: unknown section") == 0);
}

TEST_CASE("a tsv task needs its files") {
    CHECK(error_of({{"data", {{"task", "tsv"}}}}).find("data.train and data.valid") !=
          std::string::npos);
}

TEST_CASE("--set overrides parse values as JSON, else as strings") {
    json j = json::object();
    apply_override(j, "train.lr=0.0005");
    apply_override(j, "model.attention=luong_dot");
    apply_override(j, "model.bidirectional=true");
    Config c = Config::from_json(j);
    CHECK(c.train.lr == 0.0005);
    CHECK(c.model.attention == "luong_dot");
    CHECK(c.model.bidirectional);
    CHECK_THROWS_AS(apply_override(j, "lr=3"), Error);
}

TEST_CASE("load: missing file, invalid JSON, relative paths resolved against the config folder") {
    CHECK_THROWS_WITH_AS(Config::load("/nonexistent/x.json"),
                         "/nonexistent/x.json: cannot open the config file", Error);
    std::string path = "test_config_tmp.json";
    {
        std::ofstream out(path);
        out << "{\"model\": {\"hidden_size\": 8,}}";
    }
    CHECK_THROWS_WITH_AS(Config::load(path), doctest::Contains("not valid JSON"), Error);
    {
        std::ofstream out(path);
        out << "{\"data\": {\"task\": \"tsv\", \"train\": \"a.tsv\", \"valid\": \"/abs/b.tsv\"}}";
    }
    Config c = Config::load(path, {"model.hidden_size=16"});
    CHECK(c.model.hidden_size == 16);
    CHECK(c.resolve(c.data.train) == "./a.tsv");
    CHECK(c.resolve(c.data.valid) == "/abs/b.tsv");
    std::remove(path.c_str());
}
