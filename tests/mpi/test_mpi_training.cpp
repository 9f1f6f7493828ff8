// `mpiexec -n N seqgrad train` against the same training in one process: N ranks with one
// thread each must give the parameters and optimizer moments of N in-process shards
// (train.threads = N) bit for bit, a resume may change N, and a config error is reported once.
// This program is not itself run under mpiexec: it starts the runs (tests/CMakeLists.txt compiles
// in the paths of seqgrad and mpiexec as SEQGRAD_BIN and SEQGRAD_MPIEXEC).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "seqgrad/models/formats/safetensors.h"

using namespace seqgrad;
namespace fs = std::filesystem;

namespace {

// What Open MPI needs to run here (as root, more ranks than cores, in a container), for the
// runs this test starts only; other MPI implementations ignore these variables.
std::string mpiexec() {
    static const bool set = [] {
        for (const char* name : {"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
                                 "OMPI_MCA_rmaps_base_oversubscribe"})
            setenv(name, "1", 0);
        setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
        setenv("OPENBLAS_NUM_THREADS", "1", 0);
        return true;
    }();
    (void)set;
    return SEQGRAD_MPIEXEC;
}

const std::string kConfig = std::string(SEQGRAD_SOURCE_DIR) + "/configs/dates.json";

// A run of `steps` steps into dir (removed first), with `ranks` processes (0 = no mpiexec).
int train(const std::string& dir, int ranks, int threads, int steps, bool resume = false,
          const std::string& log = "", const std::string& config = kConfig) {
    if (!resume) fs::remove_all(dir);
    std::string command = ranks > 0 ? mpiexec() + " -n " + std::to_string(ranks) + " " : "";
    command += std::string(SEQGRAD_BIN) + " train ";
    command += resume ? "--resume " + dir : config + " --set output.run_dir=" + dir;
    command += " --set train.max_steps=" + std::to_string(steps) +
               " --set train.threads=" + std::to_string(threads) +
               " --set data.dates_train=3000 --set data.dates_valid=200 --set data.dates_test=100"
               " --set train.validate_every=20 --quiet";
    command += log.empty() ? " >/dev/null 2>&1" : " >" + log + " 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Every tensor (parameters, Adam's moments) of two checkpoints, compared byte for byte.
void check_same_tensors(const std::string& a, const std::string& b) {
    const SafetensorsFile fa = load_safetensors(a), fb = load_safetensors(b);
    REQUIRE(fa.tensors.size() == fb.tensors.size());
    CHECK(fa.tensors.size() > 20);
    for (const auto& t : fa.tensors) {
        CAPTURE(t.name);
        const Tensor& u = fb.at(t.name);
        REQUIRE(u.numel() == t.value.numel());
        CHECK(std::memcmp(u.data(), t.value.data(), size_t(u.numel()) * sizeof(real)) == 0);
    }
}

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const std::string kTmp = fs::temp_directory_path().string() + "/seqgrad_mpi_test";

}  // namespace

TEST_CASE("2 and 3 ranks give the bits of 2 and 3 in-process shards, best and last") {
    for (int n : {2, 3}) {
        CAPTURE(n);
        const std::string ranks = kTmp + "/ranks" + std::to_string(n);
        const std::string threads = kTmp + "/threads" + std::to_string(n);
        REQUIRE(train(ranks, n, 1, 40) == 0);
        REQUIRE(train(threads, 0, n, 40) == 0);
        check_same_tensors(ranks + "/last.safetensors", threads + "/last.safetensors");
        check_same_tensors(ranks + "/best.safetensors", threads + "/best.safetensors");
        // rank 0 alone wrote the metrics: one record per validation, not n
        const std::string metrics = read(ranks + "/metrics.jsonl");
        size_t validations = 0;
        for (size_t at = metrics.find("\"valid\""); at != std::string::npos;
             at = metrics.find("\"valid\"", at + 1))
            ++validations;
        CHECK(validations == 2);
    }
}

TEST_CASE("a Transformer on packed sentences: 2 ranks give the bits of 2 in-process shards") {
    // configs/dates.json with a small Transformer in place of its RNN model
    nlohmann::json config = nlohmann::json::parse(read(kConfig));
    config["model"] = {{"kind", "transformer"}, {"d_model", 32}, {"heads", 2},
                       {"ff_size", 64},         {"layers", 1},   {"max_positions", 64}};
    fs::create_directories(kTmp);
    const std::string path = kTmp + "/transformer.json";
    std::ofstream(path) << config.dump(2);
    const std::string ranks = kTmp + "/transformer_ranks", threads = kTmp + "/transformer_threads";
    REQUIRE(train(ranks, 2, 1, 30, false, "", path) == 0);
    REQUIRE(train(threads, 0, 2, 30, false, "", path) == 0);
    check_same_tensors(ranks + "/last.safetensors", threads + "/last.safetensors");
}

TEST_CASE("a resume may change the number of ranks and continues the in-process run") {
    const std::string ranks = kTmp + "/resume_ranks", threads = kTmp + "/resume_threads";
    REQUIRE(train(ranks, 2, 1, 20) == 0);
    REQUIRE(train(ranks, 3, 1, 40, /*resume=*/true) == 0);
    REQUIRE(train(threads, 0, 2, 20) == 0);
    REQUIRE(train(threads, 0, 3, 40, /*resume=*/true) == 0);
    check_same_tensors(ranks + "/last.safetensors", threads + "/last.safetensors");
}

TEST_CASE("a config error is reported once, by rank 0, and every rank exits non-zero") {
    fs::create_directories(kTmp);
    const std::string log = kTmp + "/bad_config.log";
    fs::remove_all(kTmp + "/bad");
    std::string command = mpiexec() + " -n 3 " + std::string(SEQGRAD_BIN) + " train " + kConfig +
                          " --set model.hidden_size=big --set output.run_dir=" + kTmp + "/bad >" +
                          log + " 2>&1";
    const int status = std::system(command.c_str());
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) != 0));
    const std::string out = read(log);
    INFO(out);
    size_t errors = 0;
    for (size_t at = out.find("model.hidden_size"); at != std::string::npos;
         at = out.find("model.hidden_size", at + 1))
        ++errors;
    CHECK(errors == 1);
    CHECK_FALSE(fs::exists(kTmp + "/bad"));
}
