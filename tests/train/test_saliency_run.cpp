// `seqgrad saliency` on tiny trained runs: the CSV's columns (an attention column only when the
// model has attention), one line per (step, source position, method), positions counting the
// source's <eos>; and the errors on bad options, before anything is loaded.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string error_of(const Argv& args) {
    try {
        cmd_saliency(args);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

// A dates model trained for a few steps (what it outputs does not matter here).
std::string tiny_run(const std::string& run_dir, const std::string& attention) {
    const nlohmann::json j = {
        {"data",
         {{"task", "dates"},
          {"dates_train", 200},
          {"dates_valid", 20},
          {"dates_test", 20},
          {"max_source_len", 40},
          {"max_target_len", 12}}},
        {"model",
         {{"embedding_size", 8},
          {"hidden_size", 16},
          {"attention_size", 8},
          {"attention", attention}}},
        {"train",
         {{"batch_size", 16}, {"max_steps", 3}, {"log_every", 5}, {"max_valid_decode", 5}}},
        {"decode", {{"max_length", 12}}},
        {"output", {{"run_dir", run_dir}, {"explore", 0}}}};
    TrainOptions quiet;
    quiet.quiet = true;
    train(Config::from_json(j), quiet);
    return run_dir;
}

}  // namespace

TEST_CASE("seqgrad saliency: bad options are errors naming the option, before loading the run") {
    CHECK(error_of(
              {"no-such-run", "march 3 2001", "--steps", "0", "--method", "integrated_gradients"})
              .find("--steps 0: integrated gradients need N >= 1 steps") != std::string::npos);
    CHECK(error_of({"no-such-run", "march 3 2001", "--method", "attention"})
              .find("--method attention: unknown saliency method (expected grad_norm, "
                    "grad_input or integrated_gradients)") != std::string::npos);
}

TEST_CASE("seqgrad saliency: the CSV of a run with attention and of one without") {
    testing::TempDir dir("saliency_run");
    for (const char* attention : {"bahdanau", "none"}) {
        CAPTURE(attention);
        const std::string run = tiny_run(dir.file(std::string("run_") + attention), attention);
        const std::string csv = dir.file("s.csv"), svg = dir.file("s.svg");
        REQUIRE(cmd_saliency({run, "march", "3", "2001", "--beam", "1", "--method",
                              "integrated_gradients", "--steps", "4", "--csv", csv, "--out",
                              svg}) == 0);
        const std::vector<std::string> lines = lines_of(csv);
        REQUIRE(lines.size() > 1);
        const bool with_attention = std::string(attention) != "none";
        CHECK(lines[0] ==
              std::string("step,output_token,source_position,source_token,method,value") +
                  (with_attention ? ",attention" : ""));
        // the source as the model reads it: "march 3 2001" in characters, then <eos>
        LoadedRun loaded = load_run(run);
        const size_t positions = loaded.task.encode_source("march 3 2001").size();
        CHECK(positions == 13);
        CHECK((lines.size() - 1) % (positions * 3) == 0);  // three methods per (step, position)
        CHECK(lines[1].rfind("1,", 0) == 0);
        CHECK(lines[1].find(",grad_norm,") != std::string::npos);
        CHECK(lines[3].find(",integrated_gradients,") != std::string::npos);
        CHECK(lines[3 * positions].find("13,<eos>,integrated_gradients") != std::string::npos);
        CHECK(std::filesystem::file_size(svg) > 0);
    }
}
