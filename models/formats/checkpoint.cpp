#include "seqgrad/models/formats/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace seqgrad {
namespace {

constexpr const char* kMetadataKey = "seqgrad";
constexpr const char* kExtraTensorsKey = "seqgrad.extra_tensors";

// The JSON stored as text under `key` in the file's metadata, or `fallback` when absent.
nlohmann::json metadata_json(const SafetensorsFile& file, const std::string& key,
                             nlohmann::json fallback) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) return fallback;
    try {
        return nlohmann::json::parse(it->second);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
        throw Error(fmt::format("{}: metadata '{}' is not valid JSON ({})", file.path, key,
                                without_exception_id(e.what())));
    }
}

}  // namespace

void save_checkpoint(const std::string& path, const Module& model,
                     const std::vector<std::pair<std::string, Tensor>>& extra_tensors,
                     const nlohmann::json& metadata, Dtype dtype) {
    save_checkpoint(path, model.named_parameters(), extra_tensors, metadata, dtype);
}

void save_checkpoint(const std::string& path,
                     const std::vector<std::pair<std::string, Tensor>>& parameters,
                     const std::vector<std::pair<std::string, Tensor>>& extra_tensors,
                     const nlohmann::json& metadata, Dtype dtype) {
    std::vector<std::pair<std::string, Tensor>> tensors = parameters;
    nlohmann::json extra_names = nlohmann::json::array();
    for (const auto& [name, tensor] : extra_tensors) {
        tensors.emplace_back(name, tensor);
        extra_names.push_back(name);
    }
    for (const auto& [name, tensor] : tensors)
        if (std::string bad = non_finite_report(name, tensor); !bad.empty())
            throw Error(fmt::format(
                "cannot save '{}': {}: the model has diverged; the file was left as it was", path,
                bad));
    std::map<std::string, std::string> file_metadata = {
        {"format", "pt"},
        {kMetadataKey, metadata.dump()},
        {kExtraTensorsKey, extra_names.dump()},
    };
    save_safetensors(path, tensors, file_metadata, dtype);
}

SafetensorsFile load_checkpoint(const std::string& path) {
    SafetensorsFile file = load_safetensors(path);
    for (const SafetensorsTensor& t : file.tensors)
        if (std::string bad = non_finite_report(t.name, t.value); !bad.empty())
            throw Error(fmt::format(
                "{}: {}; refusing a checkpoint whose values are not finite (a damaged file, or a "
                "run that diverged before it was saved)",
                path, bad));
    return file;
}

nlohmann::json checkpoint_metadata(const SafetensorsFile& checkpoint) {
    return metadata_json(checkpoint, kMetadataKey, nlohmann::json::object());
}

std::vector<std::string> checkpoint_extra_tensor_names(const SafetensorsFile& checkpoint) {
    nlohmann::json names = metadata_json(checkpoint, kExtraTensorsKey, nlohmann::json::array());
    bool valid = names.is_array();
    for (const auto& name : names) valid = valid && name.is_string();
    if (!valid)
        throw Error(fmt::format("{}: metadata '{}' must be a list of tensor names", checkpoint.path,
                                kExtraTensorsKey));
    return names.get<std::vector<std::string>>();
}

void load_parameters(const SafetensorsFile& checkpoint, Module& model) {
    // The checkpoint's extra tensors (optimizer state) are not parameters: leave them out.
    std::vector<std::string> extra_names = checkpoint_extra_tensor_names(checkpoint);
    std::set<std::string> extras(extra_names.begin(), extra_names.end());
    StateDict state;
    for (const SafetensorsTensor& t : checkpoint.tensors)
        if (!extras.count(t.name)) state[t.name] = t.value;
    model.load_state(state, checkpoint.path);
}

void check_checkpoint_cell(const SafetensorsFile& checkpoint, const std::string& model_cell) {
    const nlohmann::json meta = checkpoint_metadata(checkpoint);
    if (!meta.is_object() || !meta.contains("config") || !meta["config"].is_object()) return;
    const nlohmann::json& config = meta["config"];
    std::string cell = "gru";  // checkpoints from before model.cell existed
    if (config.contains("model") && config["model"].is_object() && config["model"].contains("cell"))
        cell = config["model"]["cell"].is_string() ? config["model"]["cell"].get<std::string>()
                                                   : config["model"]["cell"].dump();
    if (cell != model_cell)
        throw Error(fmt::format(
            "{}: the checkpoint holds a model with model.cell \"{}\", the config asks for \"{}\" "
            "(a checkpoint only loads into a model with the cell it was trained with)",
            checkpoint.path, cell, model_cell));
}

nlohmann::json rng_state_to_json(const Rng& rng) {
    nlohmann::json state = nlohmann::json::array();
    for (uint64_t word : rng.state()) state.push_back(std::to_string(word));
    return state;
}

std::array<uint64_t, 4> rng_state_from_json(const nlohmann::json& state) {
    auto invalid = [&] {
        return Error(fmt::format("RNG state must be a list of four decimal u64 strings, got {}",
                                 state.dump()));
    };
    if (!state.is_array() || state.size() != 4) throw invalid();
    std::array<uint64_t, 4> words{};
    for (size_t i = 0; i < 4; ++i) {
        if (!state[i].is_string()) throw invalid();
        const std::string& text = state[i].get_ref<const std::string&>();
        const char* end = text.data() + text.size();
        auto [stop, error] = std::from_chars(text.data(), end, words[i]);
        if (text.empty() || error != std::errc() || stop != end) throw invalid();
    }
    return words;
}

}  // namespace seqgrad
