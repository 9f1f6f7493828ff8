// Checkpoint averaging (models/training/checkpoint_average.h): two known checkpoints average to
// their mean exactly; kept checkpoints rotate, named by step; the averaged file records what it
// averaged; bad input (no run directory, N out of range, a tensor missing, extra or of another
// shape, a bad --out) is an Error naming the file and what was expected.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "seqgrad/layers/linear.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/training/checkpoint_average.h"

using namespace seqgrad;
using nlohmann::json;

namespace {

std::string temp_dir(const std::string& name) {
    const std::string dir =
        (std::filesystem::temp_directory_path() /
         ("seqgrad_test_checkpoint_average_" + std::to_string(::getpid()) + "_" + name))
            .string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

using Named = std::vector<std::pair<std::string, Tensor>>;

Named two_tensors(std::vector<real> weight, std::vector<real> bias) {
    return {{"out.weight", Tensor::from_vector({2, 2}, std::move(weight))},
            {"out.bias", Tensor::from_vector({2}, std::move(bias))}};
}

}  // namespace

TEST_CASE("the average of two known checkpoints is their mean, exactly; extras are left out") {
    const std::string dir = temp_dir("mean");
    save_checkpoint(dir + "/a.safetensors", two_tensors({1, 2, -3.5, 0.25}, {8, 0}),
                    {{"optimizer.exp_avg.out.bias", Tensor::from_vector({2}, {5, 5})}}, json{});
    save_checkpoint(dir + "/b.safetensors", two_tensors({3, -2, 1.5, 0.75}, {-4, 1}), {}, json{});
    const Named mean = average_checkpoints({dir + "/a.safetensors", dir + "/b.safetensors"});
    REQUIRE(mean.size() == 2);  // the optimizer moment is not a parameter
    CHECK(mean[0].first == "out.weight");
    CHECK(mean[0].second.shape() == Shape{2, 2});
    CHECK(mean[0].second.to_vector() == std::vector<real>{2, 0, -1, 0.5});
    CHECK(mean[1].first == "out.bias");
    CHECK(mean[1].second.to_vector() == std::vector<real>{2, 0.5});
    // one checkpoint: itself
    CHECK(average_checkpoints({dir + "/b.safetensors"})[0].second.to_vector() ==
          std::vector<real>{3, -2, 1.5, 0.75});
    std::filesystem::remove_all(dir);
}

TEST_CASE("kept checkpoints rotate by step; the last N average into RUN_DIR/averaged") {
    const std::string dir = temp_dir("rotate");
    CHECK(kept_checkpoints(dir).empty());
    Rng rng(1);
    Linear layer(2, 2, true, rng);
    for (int64_t step : {100, 200, 300}) {
        std::fill(layer.weight.data(), layer.weight.data() + 4, real(step));
        std::fill(layer.bias.data(), layer.bias.data() + 2, real(-step));
        keep_checkpoint(dir, step, layer, json{{"step", step}, {"config", {{"a", 1}}}}, 2);
    }
    const std::vector<KeptCheckpoint> kept = kept_checkpoints(dir);
    REQUIRE(kept.size() == 2);
    CHECK(kept[0].step == 200);
    CHECK(kept[1].step == 300);
    CHECK(kept[1].path == dir + "/checkpoints/step-00000300.safetensors");
    CHECK(!std::filesystem::exists(dir + "/checkpoints/step-00000100.safetensors"));
    const std::string path = average_last_checkpoints(dir, 2);
    CHECK(path == dir + "/averaged.safetensors");
    const SafetensorsFile averaged = load_checkpoint(path);
    CHECK(averaged.at("weight").to_vector() == std::vector<real>{250, 250, 250, 250});
    CHECK(averaged.at("bias").to_vector() == std::vector<real>{-250, -250});
    const json meta = checkpoint_metadata(averaged);
    CHECK(meta["averaged_steps"] == json{200, 300});
    CHECK(meta["averaged_from"] ==
          json{"step-00000200.safetensors", "step-00000300.safetensors"});
    CHECK(meta["config"] == json{{"a", 1}});
    // the checkpoint loads into the model like any other
    Linear loaded(2, 2, true, rng);
    load_parameters(averaged, loaded);
    CHECK(loaded.bias.to_vector() == std::vector<real>{-250, -250});
    CHECK(average_last_checkpoints(dir, 1, "newest") == dir + "/newest.safetensors");
    CHECK(load_checkpoint(dir + "/newest.safetensors").at("bias").to_vector() ==
          std::vector<real>{-300, -300});
    std::filesystem::remove_all(dir);
}

TEST_CASE("averaging bad input: errors name the file and what was expected") {
    const std::string dir = temp_dir("errors");
    CHECK_THROWS_WITH_AS(average_last_checkpoints(dir + "/no_such_run", 2),
                         doctest::Contains("no_such_run: not a run directory"), Error);
    CHECK_THROWS_WITH_AS(average_last_checkpoints(dir, 1),
                         doctest::Contains("checkpoints: 0 kept checkpoints, cannot average the "
                                           "last 1 (train.average_last N keeps"),
                         Error);
    Rng rng(2);
    Linear layer(2, 2, true, rng);
    keep_checkpoint(dir, 4, layer, json::object(), 5);
    keep_checkpoint(dir, 8, layer, json::object(), 5);
    CHECK_THROWS_WITH_AS(average_last_checkpoints(dir, 3),
                         doctest::Contains("2 kept checkpoints, cannot average the last 3 "
                                           "(train.average_last N keeps the last N checkpoints of "
                                           "a run as it trains; averaging needs 1 to 2)"),
                         Error);
    CHECK_THROWS_WITH_AS(average_last_checkpoints(dir, 0),
                         doctest::Contains("cannot average the last 0"), Error);
    CHECK_THROWS_WITH_AS(average_last_checkpoints(dir, 2, "best"),
                         doctest::Contains("--out: expected a plain file name other than best"),
                         Error);
    CHECK_THROWS_WITH_AS(average_last_checkpoints(dir, 2, "../x"), doctest::Contains("--out"),
                         Error);

    const std::string a = dir + "/a.safetensors", b = dir + "/b.safetensors";
    save_checkpoint(a, two_tensors({1, 2, 3, 4}, {1, 2}), {}, json{});
    // another shape
    save_checkpoint(b, {{"out.weight", Tensor::zeros({2, 3})}, {"out.bias", Tensor::zeros({2})}},
                    {}, json{});
    const std::string shape = b + ": tensor 'out.weight' is [2,3], expected [2,2] as in " + a;
    CHECK_THROWS_WITH_AS(average_checkpoints({a, b}), shape.c_str(), Error);
    // a tensor the first does not hold
    save_checkpoint(b, {{"out.weight", Tensor::zeros({2, 2})}, {"out.scale", Tensor::zeros({2})}},
                    {}, json{});
    const std::string extra = b + ": tensor 'out.scale' [2] is not in " + a;
    CHECK_THROWS_WITH_AS(average_checkpoints({a, b}), doctest::Contains(extra.c_str()), Error);
    // a tensor missing
    save_checkpoint(b, {{"out.weight", Tensor::zeros({2, 2})}}, {}, json{});
    const std::string missing =
        b + ": no tensor 'out.bias' (expected [2] as in " + a + ", the first checkpoint averaged)";
    CHECK_THROWS_WITH_AS(average_checkpoints({a, b}), missing.c_str(), Error);
    CHECK_THROWS_WITH_AS(average_checkpoints({a, dir + "/none.safetensors"}),
                         doctest::Contains("none.safetensors"), Error);
    std::filesystem::remove_all(dir);
}
