// model.share_embeddings (models/model/transformer.h): "all" ties the source embedding, the target
// embedding and the output projection into one weight. In double: the tied model passes gradcheck;
// it equals an untied model whose three weights are set equal, in loss and in gradient (the tied
// weight's gradient is the sum of the three); a checkpoint holds the weight once, under
// source_embedding.weight, and loads back tied; the config reads true / false as "target" /
// "none"; a joint BPE vocabulary serves both sides, and vocabularies that differ are an error
// naming the key, both sizes and what to set.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "batch_util.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/model/transformer.h"
#include "seqgrad/models/run/task.h"
#include "test_util.h"
#include "transformer_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;
using nlohmann::json;

namespace {

ModelConfig shared_config(const std::string& share) {
    ModelConfig c = tiny_transformer_config(true, "learned");
    c.encoder_layers = 1;
    c.share_embeddings = share;
    return c;
}

double max_difference(const Tensor& a, const Tensor& b) {
    REQUIRE(a.shape() == b.shape());
    double worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, std::fabs(double(a.data()[i]) - double(b.data()[i])));
    return worst;
}

std::string temp_dir(const std::string& name) {
    const std::string dir =
        (std::filesystem::temp_directory_path() /
         ("seqgrad_test_shared_embeddings_" + std::to_string(::getpid()) + "_" + name))
            .string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace

TEST_CASE("share_embeddings \"all\": one parameter, and the tied model passes gradcheck") {
    Rng rng(3);
    Transformer model(shared_config("all"), 13, 13, rng);
    int embeddings = 0;
    for (const auto& [name, p] : model.named_parameters()) {
        CHECK(name != "target_embedding.weight");
        CHECK(name.rfind("out.", 0) != 0);
        embeddings += name == "source_embedding.weight";
    }
    CHECK(embeddings == 1);
    CHECK(!model.out);
    CHECK(model.target_embedding->weight.data() == model.source_embedding->weight.data());
    const Batch batch = mixed_length_batch(3);
    expect_gradcheck(
        [&](auto&) { return model.forward_loss(batch, LossOptions{1.0, 0.1}).loss; },
        model.parameters());
}

TEST_CASE("a tied model == an untied one with its three weights set equal, gradients summed") {
    Rng tied_rng(4), untied_rng(5);
    Transformer tied(shared_config("all"), 13, 13, tied_rng);
    Transformer untied(shared_config("none"), 13, 13, untied_rng);
    StateDict state = tied.state();
    const Tensor weight = state.at("source_embedding.weight");
    state["target_embedding.weight"] = weight;
    state["out.weight"] = weight;
    state["out.bias"] = state.at("out_bias");
    state.erase("out_bias");
    untied.load_state(state);

    const Batch batch = mixed_length_batch(6);
    for (bool padded : {false, true}) {
        CAPTURE(padded);
        tied.zero_grad();
        untied.zero_grad();
        LossOutput a = padded ? tied.forward_loss_padded(batch, 0.1)
                              : tied.forward_loss(batch, LossOptions{1.0, 0.1});
        LossOutput b = padded ? untied.forward_loss_padded(batch, 0.1)
                              : untied.forward_loss(batch, LossOptions{1.0, 0.1});
        CHECK(std::fabs(a.loss.item() - b.loss.item()) <= 1e-14);
        a.loss.backward();
        b.loss.backward();
        std::map<std::string, Tensor> untied_params;
        for (const auto& [name, p] : untied.named_parameters()) untied_params[name] = p;
        // the tied weight's gradient: the sum of the three uses' gradients
        Tensor sum = untied_params.at("source_embedding.weight").grad() +
                     untied_params.at("target_embedding.weight").grad() +
                     untied_params.at("out.weight").grad();
        CHECK(max_difference(tied.source_embedding->weight.grad(), sum) <= 1e-13);
        // each use contributes: none of the three gradients is zero
        for (const char* name : {"source_embedding.weight", "target_embedding.weight", "out.weight"})
            CHECK(max_difference(untied_params.at(name).grad(), Tensor::zeros({13, 4})) > 0);
        CHECK(max_difference(tied.out_bias.grad(), untied_params.at("out.bias").grad()) <= 1e-14);
        for (const auto& [name, p] : tied.named_parameters()) {
            if (name == "source_embedding.weight" || name == "out_bias") continue;
            CAPTURE(name);
            CHECK(max_difference(p.grad(), untied_params.at(name).grad()) <= 1e-14);
        }
    }
}

TEST_CASE("a tied checkpoint: the weight stored once as source_embedding.weight, loaded tied") {
    const std::string dir = temp_dir("checkpoint");
    Rng rng(7), other_rng(8);
    Transformer saved(shared_config("all"), 13, 13, rng);
    save_checkpoint(dir + "/tied.safetensors", saved, {}, json::object());
    const SafetensorsFile file = load_checkpoint(dir + "/tied.safetensors");
    int stored = 0;
    for (const SafetensorsTensor& t : file.tensors) {
        CHECK(t.name != "target_embedding.weight");
        CHECK(t.name != "out.weight");
        stored += t.name == "source_embedding.weight";
    }
    CHECK(stored == 1);
    Transformer loaded(shared_config("all"), 13, 13, other_rng);
    load_parameters(file, loaded);
    for (const auto& [name, p] : saved.state())
        CHECK(max_difference(p, loaded.state().at(name)) == 0);
    // still tied after loading: the target side and the projection read the loaded weight
    CHECK(loaded.target_embedding->weight.data() == loaded.source_embedding->weight.data());
    const Batch batch = mixed_length_batch(9);
    CHECK(saved.forward_loss(batch).loss.item() == loaded.forward_loss(batch).loss.item());
    // a model that ties only the target side expects its own target embedding
    Transformer target_only(shared_config("target"), 13, 13, other_rng);
    CHECK_THROWS_WITH_AS(load_parameters(file, target_only),
                         doctest::Contains("missing: target_embedding.weight"), Error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("model.share_embeddings: true / false are \"target\" / \"none\"; bad values name the key") {
    auto model_of = [](json share) {
        return Config::from_json(
                   {{"model", {{"kind", "transformer"}, {"share_embeddings", share}}}}, "c.json")
            .model;
    };
    CHECK(model_of(true).share_embeddings == "target");
    CHECK(model_of(false).share_embeddings == "none");
    CHECK(model_of("all").share_embeddings == "all");
    CHECK(Config::from_json(Config::from_json({{"model", {{"kind", "transformer"}}}}).to_json())
              .model.share_embeddings == "none");
    const Config all = Config::from_json(
        {{"model", {{"kind", "transformer"}, {"share_embeddings", "all"}}}}, "c.json");
    CHECK(Config::from_json(all.to_json()).model.share_embeddings == "all");
    CHECK_THROWS_WITH_AS(model_of("both"),
                         doctest::Contains("model.share_embeddings: expected one of \"none\", "
                                           "\"target\", \"all\""),
                         Error);
    CHECK_THROWS_WITH_AS(model_of(1), doctest::Contains("model.share_embeddings"), Error);
}

TEST_CASE("share_embeddings \"all\": a joint vocabulary with joint BPE; otherwise a clear error") {
    const std::string dir = temp_dir("vocab");
    write_file_atomically(dir + "/train.tsv",
                          "I'm hungry.\tIch habe Hunger.\nHe is very tired.\tEr ist sehr müde.\n"
                          "She is reading a book.\tSie liest ein Buch.\n");
    write_file_atomically(dir + "/valid.tsv", "We are hungry.\tWir haben Hunger.\n");
    auto config_of = [&](json data, const std::string& share) {
        json base = {{"task", "tsv"}, {"train", "train.tsv"}, {"valid", "valid.tsv"}};
        for (auto it = data.begin(); it != data.end(); ++it) base[it.key()] = it.value();
        Config c = Config::from_json(
            {{"data", base}, {"model", {{"kind", "transformer"}, {"share_embeddings", share}}}},
            dir + "/config.json");
        c.base_dir = dir;
        return c;
    };
    const Config joint = config_of({{"tokenizer", "bpe"}, {"bpe_merges", 20}}, "all");
    const Task task = prepare_task(joint, /*quiet=*/true);
    REQUIRE(task.source_vocab.size() == task.target_vocab.size());
    for (size_t id = 0; id < task.source_vocab.size(); ++id)
        CHECK(task.source_vocab.token(int32_t(id)) == task.target_vocab.token(int32_t(id)));
    // both sides' words are in it (every character at least)
    CHECK(task.source_vocab.contains("H"));
    CHECK(task.source_vocab.contains("ü@@"));
    for (const char* side : {"Ich habe Hunger.", "He is very tired."})
        for (int32_t id : task.encode_source(side)) CHECK(id != Vocab::UNK);
    Rng rng(1);
    CHECK(make_model(joint.model, int64_t(task.source_vocab.size()),
                     int64_t(task.target_vocab.size()), rng)
              ->vocab_size() == int64_t(task.source_vocab.size()));

    // word level: two vocabularies
    const Config words = config_of({{"tokenizer", "word"}}, "all");
    CHECK_THROWS_WITH_AS(
        prepare_task(words, true),
        doctest::Contains("model.share_embeddings \"all\": the source and target vocabularies of "
                          "the training data differ (source 14 tokens, target 15)"),
        Error);
    CHECK_THROWS_WITH_AS(prepare_task(words, true),
                         doctest::Contains("Set data.tokenizer \"bpe\" with data.bpe_joint true"),
                         Error);
    CHECK_NOTHROW(prepare_task(config_of({{"tokenizer", "word"}}, "target"), true));
    // BPE with codes of each side: each side keeps its own vocabulary, so also an error
    CHECK_THROWS_WITH_AS(
        prepare_task(config_of({{"tokenizer", "bpe"}, {"bpe_merges", 20}, {"bpe_joint", false}},
                               "all"),
                     true),
        doctest::Contains("data.bpe_joint false"), Error);
    // the model itself refuses two sizes
    CHECK_THROWS_WITH_AS(Transformer(shared_config("all"), 9, 11, rng),
                         doctest::Contains("the source vocabulary has 9 tokens and the target "
                                           "vocabulary 11"),
                         Error);
    std::filesystem::remove_all(dir);
}
