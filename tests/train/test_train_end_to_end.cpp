// Training end to end (float, -O2): the date task learns, a stopped and resumed run equals an
// uninterrupted one bit for bit, a NaN stops training with a clear message; `seqgrad eval`
// applies its decoding switches and writes its summary row.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "apps/cli/commands.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/training/checkpoint_average.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

Config small_dates_config(const std::string& run_dir) {
    nlohmann::json j = {
        {"data",
         {{"task", "dates"},
          {"dates_train", 3000},
          {"dates_valid", 200},
          {"dates_test", 300},
          {"max_source_len", 40},
          {"max_target_len", 12}}},
        {"model", {{"embedding_size", 16}, {"hidden_size", 64}, {"attention_size", 32}}},
        {"train",
         {{"batch_size", 32},
          {"epochs", 5},
          {"lr", 0.004},
          {"log_every", 20},
          {"patience", 0},
          {"max_valid_decode", 200}}},
        {"decode", {{"max_length", 12}}},
        {"output", {{"run_dir", run_dir}}}};
    return Config::from_json(j);
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

TEST_CASE("the date task learns: test accuracy far above chance after a short run") {
    const testing::TempDir run("dates");
    Config c = small_dates_config(run.path.string());
    TrainOptions quiet;
    quiet.quiet = true;
    std::vector<ProgressLine> progress;  // on_progress is called even when quiet
    quiet.on_progress = [&](const ProgressLine& line) { progress.push_back(line); };
    TrainSummary s = train(c, quiet);
    INFO("test accuracy " << s.test_metric << ", valid loss " << s.last_valid_loss);
    CHECK(s.has_test);
    CHECK(s.steps == 5 * 94);  // ceil(3000 / 32) batches per epoch
    // An exact 10-character match by chance is ~0%; a learned model gets most dates right.
    CHECK(s.test_metric > 50.0);
    CHECK(s.best_valid_loss < 0.5);
    // The run directory holds everything the README promises.
    for (const char* f : {"config.json", "vocab.source.json", "vocab.target.json", "metrics.jsonl",
                          "best.safetensors", "last.safetensors"})
        CHECK_MESSAGE(std::filesystem::exists(c.output.run_dir + "/" + f), f);
    int train_records = 0, valid_records = 0;
    for (const auto& line : read_lines(c.output.run_dir + "/metrics.jsonl")) {
        auto j = nlohmann::json::parse(line);
        if (j["type"] == "train") {
            ++train_records;
            CHECK(j.contains("grad_norm"));
            CHECK(j.contains("clipped"));
            CHECK(j["grad_norms"].contains("attention"));
            CHECK(j["grad_norms"]["encoder"].get<double>() > 0);
        }
        if (j["type"] == "valid") ++valid_records;
    }
    CHECK(train_records == 5 * 94 / 20);
    CHECK(valid_records == 5);
    REQUIRE(progress.size() == size_t(train_records));
    CHECK(progress.front().step == 20);
    CHECK(progress.back().step == 460);
    CHECK(progress.back().total_steps == 5 * 94);
    CHECK(progress.back().loss < progress.front().loss);
}

TEST_CASE(
    "train(N) equals train(k) + resume + train(N - k), bit for bit, on 1 and 2 threads, "
    "and with batches by tokens") {
    // 2 threads: data parallel, one generator per shard; batch_tokens: batches of 300 tokens
    for (const auto& [threads, batch_tokens] : {std::pair{1, 0}, {2, 0}, {1, 300}}) {
        CAPTURE(threads);
        CAPTURE(batch_tokens);
        auto config = [threads = threads, batch_tokens = batch_tokens](const std::string& dir,
                                                                       int64_t max_steps) {
            Config c = small_dates_config(dir);
            c.data.dates_train = 300;  // 10 batches per epoch: the stop falls inside epoch 2
            c.model.hidden_size = 16;
            c.model.dropout = 0.2;          // draws from the run's generator...
            c.train.teacher_forcing = 0.7;  // ...and so does this: both must resume exactly
            c.train.max_steps = max_steps;
            c.train.epochs = 100;
            c.train.threads = threads;
            c.train.batch_tokens = batch_tokens;
            c.train.validate_every = 4;  // kept checkpoints at steps 4, 8, ..., 24: the last 3
            c.train.average_last = 3;
            return c;
        };
        TrainOptions quiet;
        quiet.quiet = true;
        const std::string name = std::to_string(threads) + "_" + std::to_string(batch_tokens);
        const testing::TempDir straight_dir("straight" + name), resumed_dir("resumed" + name);
        const std::string straight = straight_dir.path.string(),
                          resumed = resumed_dir.path.string();
        train(config(straight, 25), quiet);
        train(config(resumed, 13), quiet);
        TrainOptions resume = quiet;
        resume.resume = true;
        TrainSummary s = train(config(resumed, 25), resume);
        CHECK(s.steps == 25);

        // last, the kept checkpoints (rotated: the resumed run kept 4, 8, 12 before it stopped)
        // and their average
        std::vector<std::string> files{"last.safetensors", "averaged.safetensors"};
        for (const KeptCheckpoint& k : kept_checkpoints(straight))
            files.push_back("checkpoints/" + std::filesystem::path(k.path).filename().string());
        CHECK(files.size() == 2 + 3);
        CHECK(kept_checkpoints(resumed).size() == 3);
        CHECK(kept_checkpoints(resumed).front().step == 16);
        for (const std::string& file : files) {
            CAPTURE(file);
            SafetensorsFile a = load_safetensors(straight + "/" + file);
            SafetensorsFile b = load_safetensors(resumed + "/" + file);
            REQUIRE(a.tensors.size() == b.tensors.size());
            REQUIRE(a.tensors.size() > 10);
            for (size_t i = 0; i < a.tensors.size(); ++i) {
                CAPTURE(a.tensors[i].name);
                REQUIRE(a.tensors[i].name == b.tensors[i].name);
                const Tensor &x = a.tensors[i].value, &y = b.tensors[i].value;
                REQUIRE(x.numel() == y.numel());
                CHECK(std::memcmp(x.data(), y.data(), sizeof(real) * x.numel()) == 0);
            }
        }
    }
}

TEST_CASE("a loss that becomes NaN stops training, naming the step and the last good checkpoint") {
    const testing::TempDir run("nan");
    Config c = small_dates_config(run.path.string());
    c.data.dates_train = 300;
    // the first update throws the weights near the float maximum, so the next products overflow
    // to inf (at 1e30 the plain loops of the reference kernels saturate tanh and σ, and the loss
    // stays finite)
    c.train.lr = 1e38;
    c.train.clip_norm = 0;
    TrainOptions quiet;
    quiet.quiet = true;
    try {
        train(c, quiet);
        FAIL("training with lr 1e30 did not stop");
    } catch (const Error& e) {
        std::string message = e.what();
        CHECK(message.find("step ") != std::string::npos);
        CHECK(
            (message.find("nan") != std::string::npos || message.find("inf") != std::string::npos));
        CHECK(message.find("last.safetensors") != std::string::npos);
    }
}

TEST_CASE("seqgrad eval: the decoding switches reach its summary row; bad values are errors") {
    const testing::TempDir run("eval");
    Config c = small_dates_config(run.path.string());
    c.train.epochs = 1;
    TrainOptions quiet;
    quiet.quiet = true;
    train(c, quiet);
    const std::string dir = c.output.run_dir, csv = dir + "/summary.csv";
    for (const char* beam : {"1", "3"}) {
        std::vector<std::string> argv{dir,           "--beam",
                                      beam,          "--length-penalty",
                                      "average",     "--alpha",
                                      "1",           "--coverage",
                                      "0.2",         "--no-repeat-ngram",
                                      "2",           "--limit",
                                      "20",          "--summary-csv",
                                      csv,           "--out",
                                      dir + "/h.txt"};
        if (std::string(beam) == "3") argv.push_back("--attention-stats");
        CHECK(cmd_eval(argv) == 0);
    }
    const std::vector<std::string> lines = read_lines(csv);
    REQUIRE(lines.size() == 3);  // header + 2 rows
    CHECK(lines[0].rfind("checkpoint,test,sentences,beam,alpha,length_penalty,coverage,", 0) == 0);
    CHECK(lines[1].find(",20,1,1,average,0.2,2,") != std::string::npos);
    CHECK(lines[2].find(",20,3,1,average,0.2,2,") != std::string::npos);
    // the dropped-words share only with --attention-stats: a share in [0, 1], else empty
    CHECK(lines[1].back() == ',');
    const double dropped = std::stod(lines[2].substr(lines[2].rfind(',') + 1));
    CHECK(dropped >= 0);
    CHECK(dropped <= 1);
    CHECK_THROWS_WITH(cmd_eval({dir, "--length-penalty", "short"}),
                      "--length-penalty: expected none, average or gnmt, got \"short\"");
    CHECK_THROWS_WITH(cmd_eval({dir, "--coverage", "-1"}), "--coverage: expected B >= 0, got -1");
    CHECK_THROWS_WITH(cmd_eval({dir, "--no-repeat-ngram", "-2"}),
                      "--no-repeat-ngram: expected N >= 0, got -2");
}

TEST_CASE("train.average_last and seqgrad average: eval, translate and explore read the average") {
    const testing::TempDir run("average");
    Config c = small_dates_config(run.path.string());
    c.data.dates_train = 300;
    c.train.epochs = 3;  // a validation, and a kept checkpoint, per epoch
    c.train.average_last = 2;
    TrainOptions quiet;
    quiet.quiet = true;
    TrainSummary s = train(c, quiet);
    const std::string dir = c.output.run_dir;
    CHECK(s.has_average);
    CHECK(s.averaged_checkpoints == 2);
    CHECK(std::isfinite(s.average_valid_loss));
    REQUIRE(kept_checkpoints(dir).size() == 2);
    CHECK(kept_checkpoints(dir).back().step == s.steps);
    CHECK(std::filesystem::exists(dir + "/averaged.safetensors"));

    CHECK(cmd_average({dir, "--last", "1", "--out", "newest"}) == 0);
    // the newest kept checkpoint alone: its parameters exactly
    SafetensorsFile newest = load_safetensors(dir + "/newest.safetensors");
    SafetensorsFile kept = load_checkpoint(kept_checkpoints(dir).back().path);
    REQUIRE(newest.tensors.size() == kept.tensors.size());
    for (size_t i = 0; i < kept.tensors.size(); ++i)
        CHECK(std::memcmp(newest.tensors[i].value.data(), kept.tensors[i].value.data(),
                          sizeof(real) * kept.tensors[i].value.numel()) == 0);
    CHECK(cmd_average({dir, "--last", "2"}) == 0);
    CHECK(checkpoint_metadata(load_checkpoint(dir + "/averaged.safetensors"))["averaged_steps"]
              .size() == 2);
    CHECK(cmd_eval({dir, "--checkpoint", "averaged", "--limit", "10", "--out", dir + "/h.txt"}) ==
          0);
    CHECK(read_lines(dir + "/h.txt").size() == 10);
    {
        std::ofstream input(dir + "/in.txt");
        input << "march 3 2001\n";
    }
    CHECK(cmd_translate({dir, "--checkpoint", "averaged", "--input", dir + "/in.txt"}) == 0);
    CHECK(cmd_explore({dir, "--checkpoint", "averaged", "--limit", "2", "--out",
                       dir + "/explore.html"}) == 0);
    CHECK(std::filesystem::file_size(dir + "/explore.html") > 1000);
    CHECK_THROWS_WITH_AS(cmd_average({dir, "--last", "3"}),
                         doctest::Contains("2 kept checkpoints, cannot average the last 3"), Error);
    CHECK_THROWS_WITH_AS(cmd_eval({dir, "--checkpoint", "nosuch"}),
                         doctest::Contains("nosuch.safetensors: no such checkpoint"), Error);
    std::filesystem::remove_all(dir);
}
