// `seqgrad attention` on tiny trained runs: a Transformer's --layer / --head give that layer's
// cross-attention, one head or the mean over heads (the CSV against
// apps/attention/transformer_attention.h), out-of-range values are errors naming the option and the
// valid range, and an RNN run refuses both options (its output is unchanged otherwise).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "apps/attention/transformer_attention.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/model/transformer.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

std::string error_of(const Argv& args) {
    try {
        cmd_attention(args);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

// A dates model trained for a few steps (what it outputs does not matter here).
std::string tiny_run(const std::string& run_dir, const nlohmann::json& model) {
    const nlohmann::json j = {
        {"data",
         {{"task", "dates"},
          {"dates_train", 200},
          {"dates_valid", 20},
          {"dates_test", 20},
          {"max_source_len", 40},
          {"max_target_len", 12}}},
        {"model", model},
        {"train",
         {{"batch_size", 16}, {"max_steps", 3}, {"log_every", 5}, {"max_valid_decode", 5}}},
        {"decode", {{"max_length", 12}}},
        {"output", {{"run_dir", run_dir}, {"explore", 0}}}};
    TrainOptions quiet;
    quiet.quiet = true;
    train(Config::from_json(j), quiet);
    return run_dir;
}

// The weights of a CSV written by --csv: one line per output token (its first field) after the
// header.
std::vector<std::vector<double>> csv_weights(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<double>> rows;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::vector<double> row;
        std::stringstream fields(line.substr(line.find(',') + 1));  // (a date has no comma)
        for (std::string field; std::getline(fields, field, ',');) row.push_back(std::stod(field));
        rows.push_back(row);
    }
    return rows;
}

}  // namespace

TEST_CASE("seqgrad attention --layer / --head on a Transformer run, and on an RNN run") {
    testing::TempDir dir("attention_command");
    const std::string run = tiny_run(dir.file("transformer"), {{"kind", "transformer"},
                                                               {"layers", 2},
                                                               {"d_model", 8},
                                                               {"heads", 2},
                                                               {"ff_size", 16},
                                                               {"max_positions", 48}});
    const std::string sentence = "march 3 2001", csv = dir.file("a.csv"), svg = dir.file("a.svg");
    LoadedRun loaded = load_run(run);
    const auto& model = dynamic_cast<const Transformer&>(*loaded.model);

    // --layer 0 --head 1 is that head's cross-attention; --head mean (and the default) the mean.
    REQUIRE(cmd_attention({run, sentence, "--beam", "1", "--layer", "0", "--head", "1", "--csv",
                           csv, "--out", svg}) == 0);
    const std::vector<std::vector<double>> head = csv_weights(csv);
    REQUIRE(cmd_attention({run, sentence, "--beam", "1", "--layer", "0", "--head", "mean", "--csv",
                           csv, "--out", svg}) == 0);
    const std::vector<std::vector<double>> mean = csv_weights(csv);
    DecodeOptions options = decode_options_from(loaded.config.decode);
    options.beam_size = 1;
    const Translation t = translate(model, loaded.task, {sentence}, options)[0];
    const TransformerAttention all =
        transformer_attention(model, loaded.task.encode_source(sentence), t.nbest[0].tokens);
    const WeightRows expected_mean = mean_over_heads(all.cross[0]);
    REQUIRE(head.size() == all.cross[0][1].size());
    REQUIRE(mean.size() == head.size());
    double worst = 0;
    for (size_t r = 0; r < head.size(); ++r) {
        REQUIRE(head[r].size() == all.cross[0][1][r].size());
        for (size_t s = 0; s < head[r].size(); ++s) {
            worst = std::max(worst, std::fabs(head[r][s] - all.cross[0][1][r][s]));
            worst = std::max(worst, std::fabs(mean[r][s] - expected_mean[r][s]));
        }
    }
    CHECK(worst <= 1e-6);  // the CSV's 6 decimals

    CHECK(error_of({run, sentence, "--layer", "2"}) ==
          "--layer 2: expected 0 .. 1 (the model has 2 decoder layers)");
    CHECK(error_of({run, sentence, "--layer", "-1"}) ==
          "--layer -1: expected 0 .. 1 (the model has 2 decoder layers)");
    CHECK(error_of({run, sentence, "--head", "2"}) ==
          "--head 2: expected 0 .. 1 or mean (the model has 2 heads)");
    CHECK(error_of({run, sentence, "--head", "first"}) ==
          "--head first: expected 0 .. 1 or mean (the model has 2 heads)");

    const std::string rnn = tiny_run(dir.file("rnn"), {{"embedding_size", 8},
                                                       {"hidden_size", 16},
                                                       {"attention_size", 8},
                                                       {"attention", "bahdanau"}});
    CHECK(error_of({rnn, sentence, "--head", "0"}).find("--head: only for a Transformer run") == 0);
    CHECK(cmd_attention({rnn, sentence, "--out", svg}) == 0);
}
