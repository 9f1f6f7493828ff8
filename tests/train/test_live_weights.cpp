// The live page's weights (apps/explore/live/live_weights.h) on a tiny trained date model: F16
// files hold each weight rounded to the nearest half and load back into the model; the comparison
// counts the sentences that decode otherwise (none for the same weights, some for other weights,
// every one for an output layer whose winner only float32 can tell apart); --live-weights auto
// keeps float32 when any differ or a weight is too large for a half, and f16 refuses the latter.
#include <doctest/doctest.h>
#include <fstream>
#include <string>

#include "apps/explore/live/live_weights.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;
using seqgrad::testing::TempDir;

namespace {

// A tiny date model trained for one short epoch into `dir`.
void train_date_run(const std::string& dir) {
    const nlohmann::json j = {
        {"data",
         {{"task", "dates"},
          {"dates_train", 1500},
          {"dates_valid", 50},
          {"dates_test", 30},
          {"max_source_len", 40},
          {"max_target_len", 12}}},
        {"model",
         {{"embedding_size", 16}, {"hidden_size", 32}, {"attention_size", 16}, {"dropout", 0}}},
        {"train", {{"batch_size", 32}, {"epochs", 1}, {"max_valid_decode", 20}, {"threads", 1}}},
        {"decode", {{"max_length", 12}, {"beam_size", 3}}},
        {"output", {{"run_dir", dir}, {"explore", 0}}}};
    TrainOptions quiet;
    quiet.quiet = true;
    train(Config::from_json(j), quiet);
}

SafetensorsFile load_bytes(const std::string& bytes, const std::string& dir) {
    const std::string path = dir + "/bytes.safetensors";
    std::ofstream(path, std::ios::binary) << bytes;
    return load_checkpoint(path);
}

}  // namespace

TEST_CASE("live weights: F16 files, the comparison, and what auto and f16 choose") {
    const TempDir temp("live_weights");
    const std::string dir = temp.file("run");
    train_date_run(dir);
    LoadedRun run = load_run(dir);
    std::vector<std::string> sources;
    for (const SentencePair& p : load_run(dir, "best", true).task.test) sources.push_back(p.source);
    REQUIRE(sources.size() == 30);
    DecodeOptions beam = decode_options_from(run.config.decode);
    REQUIRE(beam.beam_size == 3);

    // An F16 file: every parameter rounded to the nearest half, about half the bytes of F32.
    const std::string f32 = live_weights_file(run, Dtype::F32),
                      f16 = live_weights_file(run, Dtype::F16);
    const SafetensorsFile half = load_bytes(f16, dir);
    CHECK(half.tensors.at(0).stored_dtype == Dtype::F16);
    CHECK(f16.size() < f32.size() * 6 / 10);
    for (const auto& [name, p] : run.model->named_parameters()) {
        CAPTURE(name);
        const Tensor& stored = half.at(name);
        REQUIRE(stored.numel() == p.numel());
        for (int64_t i = 0; i < p.numel(); ++i)
            REQUIRE(stored.data()[i] == real(round_to_half(double(p.data()[i]))));
    }
    CHECK(checkpoint_metadata(half).contains("config"));  // the run's metadata goes along

    // The same weights: nothing differs. Other weights (another run's): sentences differ.
    const WeightsComparison same = compare_weights(run, f32, sources, beam);
    CHECK(same.sentences == 30);
    CHECK(same.differ == 0);
    {
        LoadedRun other = load_run(dir);
        for (auto& [name, p] : other.model->named_parameters())
            for (int64_t i = 0; i < p.numel(); ++i)
                p.data()[i] = real(0.37) * p.data()[i] - real(0.01);
        const WeightsComparison c =
            compare_weights(run, live_weights_file(other, Dtype::F32), sources, beam);
        CHECK(c.differ > 0);
        CHECK(c.differ >= std::max(c.greedy_differ, c.beam_differ));
        CHECK(c.differ <= c.greedy_differ + c.beam_differ);
    }
    const LiveWeightsChoice automatic =
        choose_live_weights(run, LiveWeights::automatic, sources, beam);
    REQUIRE(automatic.compared);
    CHECK(automatic.f16_bytes == f16.size());
    CHECK(automatic.f32_bytes == f32.size());
    CHECK((automatic.dtype == Dtype::F16) == (automatic.comparison.differ == 0));
    CHECK(choose_live_weights(run, LiveWeights::f32, sources, beam).compared == false);

    {  // an output layer only float32 tells apart: every sentence differs, auto keeps F32
        // Every logit is the output bias: the last token's is 1 + 2^-12 (a half rounds it to 1),
        // the one before it 1, the others -10. Float32 picks the last token at every step; with
        // halves the two tie, and decoding picks the smaller id.
        LoadedRun tied = load_run(dir);
        const int64_t V = tied.task.target_vocab.size();
        for (auto& [name, p] : tied.model->named_parameters()) {
            const bool output_weight = p.rank() == 2 && p.shape()[0] == V,
                       output_bias = p.rank() == 1 && p.shape()[0] == V &&
                                     name.find("bias") != std::string::npos;
            for (int64_t i = 0; i < p.numel(); ++i) {
                if (output_weight) p.data()[i] = 0;
                if (output_bias)
                    p.data()[i] = i == V - 1 ? real(1 + 1.0 / 4096) : i == V - 2 ? 1 : -10;
            }
        }
        const LiveWeightsChoice c =
            choose_live_weights(tied, LiveWeights::automatic, sources, beam);
        CHECK(c.comparison.greedy_differ == 30);
        CHECK(c.comparison.beam_differ == 30);
        CHECK(c.dtype == Dtype::F32);
        CHECK(c.file == live_weights_file(tied, Dtype::F32));
        CHECK(c.note.find("30 of the 30 precomputed sentences decode to other tokens") !=
              std::string::npos);
        CHECK(c.note.find("auto keeps float32") != std::string::npos);
        // f16 is what was asked: F16, with the comparison reported
        const LiveWeightsChoice forced = choose_live_weights(tied, LiveWeights::f16, sources, beam);
        CHECK(forced.dtype == Dtype::F16);
        CHECK(forced.comparison.differ == 30);
    }
    {  // a weight too large for a half: f16 names the tensor, auto keeps F32
        LoadedRun large = load_run(dir);
        const auto params = large.model->named_parameters();
        const std::string name = params.at(1).first;
        Tensor p = params.at(1).second;
        p.data()[0] = 1e5;
        std::string message;
        try {
            choose_live_weights(large, LiveWeights::f16, sources, beam);
        } catch (const Error& e) {
            message = e.what();
        }
        CHECK(message.find("tensor '" + name + "' holds 100000 at index 0") != std::string::npos);
        const LiveWeightsChoice c =
            choose_live_weights(large, LiveWeights::automatic, sources, beam);
        CHECK(c.dtype == Dtype::F32);
        CHECK_FALSE(c.compared);
        CHECK(c.note.find(name) != std::string::npos);
    }
    CHECK(live_weights_from_name("auto") == LiveWeights::automatic);
    CHECK_THROWS_WITH_AS(
        live_weights_from_name("bf16"),
        doctest::Contains("--live-weights: expected f32, f16 or auto, got \"bf16\""), Error);
}
