// Training with BPE subwords end to end (float, -O2): the merges are learned from the training
// split and saved in the run directory, a resumed run reads them back, and the trained model
// translates German into cased, detokenised English.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "seqgrad/data/bpe.h"
#include "seqgrad/data/reversible_tokenizer.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

Config deu_eng_config(const std::string& run_dir, int64_t max_steps) {
    const std::string data = std::string(SEQGRAD_SOURCE_DIR) + "/datasets/deu-eng/";
    nlohmann::json j = {
        {"data",
         {{"task", "tsv"},
          {"train", data + "train.tsv"},
          {"valid", data + "valid.tsv"},
          {"source_column", 1},
          {"tokenizer", "bpe"},
          {"bpe_merges", 500},
          {"max_source_len", 40},
          {"max_target_len", 40}}},
        {"model", {{"embedding_size", 32}, {"hidden_size", 64}, {"attention_size", 32}}},
        {"train",
         {{"batch_size", 64},
          {"epochs", 100},
          {"max_steps", max_steps},
          {"lr", 0.003},
          {"log_every", 50},
          {"validate_every", 100},
          {"patience", 0},
          {"max_valid_decode", 50}}},
        {"decode", {{"max_length", 30}}},
        {"output", {{"run_dir", run_dir}}}};
    return Config::from_json(j);
}

}  // namespace

TEST_CASE("a BPE run saves its codes, resumes with them, and writes real English") {
    const testing::TempDir run_dir("bpe");
    const std::string dir = run_dir.path.string();
    TrainOptions quiet;
    quiet.quiet = true;
    train(deu_eng_config(dir, 100), quiet);
    REQUIRE(std::filesystem::exists(dir + "/bpe.codes"));
    const BpeCodes codes = BpeCodes::load(dir + "/bpe.codes");
    CHECK(codes.size() == 500);
    TrainOptions resume = quiet;
    resume.resume = true;
    TrainSummary s = train(deu_eng_config(dir, 400), resume);
    CHECK(s.steps == 400);
    CHECK(BpeCodes::load(dir + "/bpe.codes").merges() == codes.merges());  // not relearned

    LoadedRun run = load_run(dir);
    DecodeOptions greedy = decode_options_from(run.config.decode);
    for (const char* german : {"Ich habe Hunger.", "Er ist sehr müde.", "Wir sind glücklich."}) {
        const std::string english = translate(*run.model, run.task, {german}, greedy)[0].text;
        INFO(german << " -> " << english);
        REQUIRE(english.size() > 2);
        CHECK(std::isupper(static_cast<unsigned char>(english[0])));  // cased
        CHECK(english.find("@@") == std::string::npos);               // subwords joined
        CHECK(english.find(kJoiner) == std::string::npos);            // detokenised
        const char last = english.back();
        CHECK((last == '.' || last == '!' || last == '?'));
        CHECK(english[english.size() - 2] != ' ');  // punctuation attached
    }
}
