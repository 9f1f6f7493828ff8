// Config validation: every bad key names its path and what was expected.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "seqgrad/autograd/tensor.h"
#include "seqgrad/models/run/config.h"

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

TEST_CASE("issue 17: every JSON failure while loading names the file or the --set key") {
    std::string path = "test_config_overflow_tmp.json";
    {
        std::ofstream out(path);
        out << R"({"train": {"lr": 1e400}})";  // nlohmann throws out_of_range.406, not parse_error
    }
    CHECK_THROWS_WITH_AS(Config::load(path), doctest::Contains((path + ": not valid JSON").c_str()),
                         Error);
    {
        std::ofstream out(path);
        out << R"({"train": {"lr": 0.01}, "model": 5})";
    }
    // --set into a section that is not an object: a message naming the key, not a type_error
    CHECK_THROWS_WITH_AS(Config::load(path, {"model.hidden_size=3"}),
                         doctest::Contains("--set model.hidden_size: section model is not an "
                                           "object"),
                         Error);
    // a --set value that is not valid UTF-8 names the key, and is refused before any use
    CHECK_THROWS_WITH_AS(Config::load(path, {"output.run_dir=runs/\xff\xfe"}),
                         doctest::Contains("--set output.run_dir: expected UTF-8 text"), Error);
    std::remove(path.c_str());
    json top = json::array();
    CHECK_THROWS_WITH_AS(apply_override(top, "train.lr=1"),
                         doctest::Contains("the config is not a JSON object"), Error);
    // a string that is not UTF-8 in a JSON object built in code (the file parser rejects them)
    CHECK(error_of({{"output", {{"run_dir", "runs/\xc3"}}}}) ==
          "c.json: output.run_dir: expected a UTF-8 string, byte 6 is not valid UTF-8");
}

TEST_CASE("issue 17: a data key the chosen task never reads is an error naming key and task") {
    CHECK(error_of({{"data", {{"task", "dates"}, {"train", "x.tsv"}}}}) ==
          "c.json: data.train: not read by data.task \"dates\" (the dates task generates its "
          "pairs); remove the key, or set data.task to \"tsv\" to train on files");
    CHECK(error_of({{"data", {{"train", "x.tsv"}}}}).find("data.train: not read") !=
          std::string::npos);  // dates is the default task
    CHECK(error_of({{"data", {{"columns", 3}}}}).find("data.columns: not read") !=
          std::string::npos);
    CHECK(error_of(
              {{"data", {{"task", "tsv"}, {"train", "a"}, {"valid", "b"}, {"dates_train", 5}}}}) ==
          "c.json: data.dates_train: not read by data.task \"tsv\" (only the dates task "
          "generates pairs); remove the key");
    // A key at its default is fine: a run directory's config.json lists every key.
    Config dates = Config::from_json(json::object());
    CHECK_NOTHROW(Config::from_json(dates.to_json()));
    json tsv = {{"data", {{"task", "tsv"}, {"train", "a"}, {"valid", "b"}, {"columns", 3}}}};
    Config c = Config::from_json(tsv);
    CHECK(c.data.columns == 3);
    CHECK_NOTHROW(Config::from_json(c.to_json()));
    CHECK(error_of({{"data", {{"task", "tsv"}, {"train", "a"}, {"valid", "b"}, {"columns", 1}}}})
              .find("data.columns: expected an integer in [2, 64]") != std::string::npos);
}

TEST_CASE("config: train.best_metric") {
    nlohmann::json j = {{"train", {{"best_metric", "chrf"}}}};
    CHECK_THROWS_WITH_AS(Config::from_json(j, "c.json"),
                         "c.json: train.best_metric \"chrf\": the dates task measures exact-match "
                         "accuracy, not chrf; expected \"loss\"",
                         Error);
    j["data"] = {{"task", "tsv"}, {"train", "t.tsv"}, {"valid", "v.tsv"}};
    CHECK(Config::from_json(j).train.best_metric == "chrf");
    CHECK(Config::from_json(Config::from_json(j).to_json()).train.best_metric == "chrf");
    j["train"]["best_metric"] = "accuracy";
    CHECK_THROWS_WITH_AS(Config::from_json(j, "c.json"),
                         doctest::Contains("train.best_metric: expected one of \"loss\", \"bleu\", "
                                           "\"chrf\""),
                         Error);
}

// The README's configuration table (its first column: the keys; its second: their defaults, one
// per key) against the tables the keys are declared in (Config::keys, models/formats/
// config_fields.h).
namespace {

struct ReadmeRow {
    std::vector<std::string> keys, defaults;
};

// The `...` spans of one table cell.
std::vector<std::string> code_spans(const std::string& cell) {
    std::vector<std::string> spans;
    for (size_t open = cell.find('`'); open != std::string::npos;) {
        const size_t close = cell.find('`', open + 1);
        if (close == std::string::npos) break;
        spans.push_back(cell.substr(open + 1, close - open - 1));
        open = cell.find('`', close + 1);
    }
    return spans;
}

std::vector<ReadmeRow> readme_config_rows() {
    std::ifstream in(std::string(SEQGRAD_SOURCE_DIR) + "/README.md");
    REQUIRE(in);
    std::vector<ReadmeRow> rows;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("## ", 0) == 0) inside = line == "## Configuration";
        if (!inside || line.rfind("| `", 0) != 0) continue;
        const size_t second = line.find(" | ", 2), third = line.find(" | ", second + 3);
        if (second == std::string::npos || third == std::string::npos) continue;
        rows.push_back({code_spans(line.substr(2, second - 2)),
                        code_spans(line.substr(second + 3, third - second - 3))});
    }
    return rows;
}

}  // namespace

TEST_CASE("the README's configuration table lists exactly the keys the field tables declare") {
    std::set<std::string> declared, documented;
    for (const std::string& key : Config::keys()) declared.insert(key);
    CHECK(declared.size() > 80);
    for (const ReadmeRow& row : readme_config_rows())
        for (const std::string& key : row.keys) documented.insert(key);
    std::string missing, extra;
    for (const auto& key : declared)
        if (!documented.count(key)) missing += " " + key;
    for (const auto& key : documented)
        if (!declared.count(key)) extra += " " + key;
    INFO("declared, not in the README:", missing);
    INFO("in the README, not declared:", extra);
    CHECK(missing.empty());
    CHECK(extra.empty());
}

TEST_CASE("the README's defaults are the field tables' defaults") {
    json defaults = Config().to_json();
    ModelConfig transformer;
    transformer.kind = "transformer";
    defaults["model"].update(transformer.to_json());
    defaults["model"]["kind"] = "rnn";
    int compared = 0;
    for (const ReadmeRow& row : readme_config_rows()) {
        if (row.keys.size() != row.defaults.size()) continue;  // a default given in words
        for (size_t i = 0; i < row.keys.size(); ++i) {
            const std::string& key = row.keys[i];
            const size_t dot = key.find('.');
            const json& section = defaults[key.substr(0, dot)];
            if (!section.contains(key.substr(dot + 1))) continue;  // model.layers
            const json documented = json::parse(row.defaults[i], nullptr, false);
            INFO(key, ": the README says ", row.defaults[i]);
            CHECK(documented == section[key.substr(dot + 1)]);
            ++compared;
        }
    }
    CHECK(compared > 70);
}
