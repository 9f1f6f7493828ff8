// Training under faults (issue 17): a second trainer on one run directory, a metrics file that
// cannot be written, temporaries left by kill -9, a resume from an older checkpoint, Ctrl-C
// during the final test, a checkpoint without training state, bad data before any write.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/training/run_lock.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;
namespace fs = std::filesystem;

namespace {

// 10 steps per epoch, a model small enough that a run takes a fraction of a second.
Config tiny_dates_config(const std::string& run_dir) {
    nlohmann::json j = {
        {"data",
         {{"task", "dates"},
          {"dates_train", 300},
          {"dates_valid", 50},
          {"dates_test", 50},
          {"max_source_len", 40},
          {"max_target_len", 12}}},
        {"model", {{"embedding_size", 8}, {"hidden_size", 16}, {"attention_size", 8}}},
        {"train", {{"batch_size", 32}, {"epochs", 2}, {"log_every", 3}, {"patience", 0}}},
        {"decode", {{"max_length", 12}}},
        {"output", {{"run_dir", run_dir}}}};
    return Config::from_json(j);
}

TrainOptions quiet() {
    TrainOptions o;
    o.quiet = true;
    return o;
}

std::vector<nlohmann::json> records(const std::string& run_dir) {
    std::ifstream in(run_dir + "/metrics.jsonl");
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
}

std::string error_of(const Config& c, const TrainOptions& o) {
    try {
        train(c, o);
    } catch (const std::exception& e) {  // Error, or the data layer's std::runtime_error
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("a second trainer on a locked run directory is refused before it writes anything") {
    const testing::TempDir run("faults_locked");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    fs::create_directories(dir);
    RunDirLock first(dir);
    const std::string message = error_of(tiny_dates_config(dir), quiet());
    CHECK(message.find(dir + ": the run directory is in use") != std::string::npos);
    CHECK(message.find("pid " + std::to_string(::getpid())) != std::string::npos);
    for (const char* f : {"config.json", "metrics.jsonl", "vocab.source.json", "last.safetensors"})
        CHECK_MESSAGE(!fs::exists(dir + "/" + f), f);
}

TEST_CASE("a metrics write that fails stops the run, naming the file, keeping a checkpoint") {
    const testing::TempDir run("faults_full");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    fs::create_directories(dir);
    fs::create_symlink("/dev/full", dir + "/metrics.jsonl");  // every write: ENOSPC
    const std::string message = error_of(tiny_dates_config(dir), quiet());
    CHECK(message.find(dir + "/metrics.jsonl: cannot write the train record of step 3: No space "
                             "left on device") != std::string::npos);
    CHECK(message.find("last.safetensors") != std::string::npos);
    CHECK(fs::exists(dir + "/last.safetensors"));
    fs::remove(dir + "/metrics.jsonl");
    TrainOptions resume = quiet();
    resume.resume = true;
    CHECK(train(tiny_dates_config(dir), resume).steps == 20);  // the kept checkpoint resumes
}

TEST_CASE("temporaries of a dead writer are removed when a run starts") {
    const testing::TempDir run("faults_stale");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    fs::create_directories(dir);
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    const std::string stale = dir + "/last.safetensors.tmp-" + std::to_string(child);
    std::ofstream(stale) << "half a checkpoint";
    Config c = tiny_dates_config(dir);
    c.train.max_steps = 2;
    train(c, quiet());
    CHECK_FALSE(fs::exists(stale));
    for (const auto& entry : fs::directory_iterator(dir))
        CHECK_MESSAGE(entry.path().string().find(".tmp") == std::string::npos, entry.path());
}

TEST_CASE("resuming from an older `last` records no step twice in metrics.jsonl") {
    const testing::TempDir run("faults_older");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    Config c = tiny_dates_config(dir);
    TrainOptions o = quiet();
    int validations = 0;
    o.on_validation = [&](const std::string& run_dir) {  // keep the checkpoint of epoch 1
        if (++validations == 1)
            fs::copy_file(run_dir + "/last.safetensors", run_dir + "/epoch1.safetensors");
    };
    train(c, o);
    const size_t full = records(dir).size();
    fs::rename(dir + "/epoch1.safetensors", dir + "/last.safetensors");  // "crash" after epoch 1
    TrainOptions resume = quiet();
    resume.resume = true;
    train(c, resume);
    const std::vector<nlohmann::json> after = records(dir);
    CHECK(after.size() == full);
    std::set<std::pair<std::string, int64_t>> seen;
    int tests = 0;
    for (const auto& r : after) {
        const bool first =
            seen.insert({r["type"].get<std::string>(), r["step"].get<int64_t>()}).second;
        CHECK_MESSAGE(first, r.dump());
        tests += r["type"] == "test";
    }
    CHECK(tests == 1);
}

TEST_CASE("Ctrl-C during the final validation or test skips the test: no test record") {
    const testing::TempDir run("faults_sigint");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    Config c = tiny_dates_config(dir);
    c.train.epochs = 1;
    TrainOptions o = quiet();
    o.on_validation = [](const std::string&) { stop_requested() = true; };
    TrainSummary s = train(c, o);
    stop_requested() = false;
    CHECK(s.interrupted);
    CHECK_FALSE(s.has_test);
    for (const auto& r : records(dir)) CHECK(r["type"] != "test");
}

TEST_CASE("--resume on a checkpoint without training state says so, naming the file") {
    const testing::TempDir run("faults_weights_only");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    Config c = tiny_dates_config(dir);
    c.train.max_steps = 1;
    train(c, quiet());
    SafetensorsFile last = load_safetensors(dir + "/last.safetensors");
    const std::vector<std::string> extra = checkpoint_extra_tensor_names(last);  // optimizer
    std::vector<std::pair<std::string, Tensor>> weights;
    for (const auto& t : last.tensors)
        if (std::find(extra.begin(), extra.end(), t.name) == extra.end())
            weights.emplace_back(t.name, t.value);
    save_safetensors(dir + "/last.safetensors", weights, {});
    TrainOptions resume = quiet();
    resume.resume = true;
    const std::string message = error_of(c, resume);
    CAPTURE(message);
    CHECK(message.find(dir + "/last.safetensors: cannot resume: the checkpoint has no training "
                             "state") != std::string::npos);
}

TEST_CASE("--resume refuses a checkpoint whose optimizer moments hold NaN or Inf") {
    const testing::TempDir run("faults_non_finite_moment");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    Config c = tiny_dates_config(dir);
    c.train.max_steps = 1;
    train(c, quiet());
    const std::string path = dir + "/last.safetensors";
    SafetensorsFile last = load_safetensors(path);
    const std::vector<std::string> extra = checkpoint_extra_tensor_names(last);
    REQUIRE_FALSE(extra.empty());
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const auto& t : last.tensors) tensors.emplace_back(t.name, t.value);
    Tensor& moment = tensors[last.tensors.size() - extra.size()].second;  // the first extra
    moment.data()[moment.numel() - 1] = std::numeric_limits<real>::infinity();
    save_safetensors(path, tensors, last.metadata);
    TrainOptions resume = quiet();
    resume.resume = true;
    const std::string message = error_of(c, resume);
    CAPTURE(message);
    CHECK(message.find(path + ": tensor '" + extra[0] + "'") != std::string::npos);
    CHECK(message.find("holds 1 non-finite value") != std::string::npos);
}

TEST_CASE("bad data is found before the run directory is created") {
    const testing::TempDir run("faults_bad_data");
    const std::string dir = run.file("run");  // not yet there, as a new run directory
    nlohmann::json j = {
        {"data", {{"task", "tsv"}, {"train", "/no/such.tsv"}, {"valid", "/no/v.tsv"}}},
        {"output", {{"run_dir", dir}}}};
    const std::string message = error_of(Config::from_json(j), quiet());
    CHECK(message.find("/no/such.tsv") != std::string::npos);
    CHECK_FALSE(fs::exists(dir));
}
