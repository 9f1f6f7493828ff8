// train.best_metric: `best` is the checkpoint of the best validation by the chosen metric (here
// chrF of the greedy output), and early stopping counts validations without a better one.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;

TEST_CASE(
    "train.best_metric chrf: best is the validation of the highest chrF; patience counts by it") {
    testing::TempDir dir("best_metric");
    const std::string data = std::string(SEQGRAD_SOURCE_DIR) + "/datasets/deu-eng/";
    const std::string run = dir.file("run");
    const nlohmann::json j = {
        {"data",
         {{"task", "tsv"},
          {"train", data + "train.tsv"},
          {"valid", data + "valid.tsv"},
          {"source_column", 1},
          {"tokenizer", "word"},
          {"max_source_len", 20},
          {"max_target_len", 20}}},
        {"model", {{"embedding_size", 16}, {"hidden_size", 32}, {"attention_size", 16}}},
        {"train",
         {{"batch_size", 32},
          {"max_steps", 60},
          {"lr", 0.01},
          {"log_every", 50},
          {"validate_every", 4},
          {"patience", 2},
          {"best_metric", "chrf"},
          {"max_valid_decode", 40}}},
        {"decode", {{"max_length", 20}}},
        {"output", {{"run_dir", run}, {"explore", 0}}}};
    TrainOptions quiet;
    quiet.quiet = true;
    const TrainSummary summary = train(Config::from_json(j), quiet);

    std::vector<nlohmann::json> valid;
    std::ifstream metrics(run + "/metrics.jsonl");
    for (std::string line; std::getline(metrics, line);) {
        nlohmann::json r = nlohmann::json::parse(line);
        if (r["type"] == "valid") valid.push_back(r);
    }
    REQUIRE(valid.size() >= 2);
    size_t best = 0;  // the first validation of the highest chrF
    for (size_t i = 1; i < valid.size(); ++i)
        if (valid[i]["chrf"].get<double>() > valid[best]["chrf"].get<double>()) best = i;
    const nlohmann::json meta = checkpoint_metadata(load_checkpoint(run + "/best.safetensors"));
    CHECK(meta["progress"]["step"] == valid[best]["step"]);
    CHECK(meta["progress"]["best_score"].get<double>() == valid[best]["chrf"].get<double>());
    if (summary.stopped_early)
        CHECK(valid.size() == best + 1 + 2);
    else
        CHECK(valid.size() <= best + 2);
}
