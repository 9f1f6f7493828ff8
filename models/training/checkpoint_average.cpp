#include "seqgrad/models/training/checkpoint_average.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "seqgrad/models/formats/checkpoint.h"

namespace seqgrad {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "step-";
constexpr const char* kSuffix = ".safetensors";

// The step of a kept checkpoint's file name "step-00001200.safetensors", or -1.
int64_t step_of(const std::string& name) {
    const std::string prefix = kPrefix, suffix = kSuffix;
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return -1;
    const std::string digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.size() > 18 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return -1;
    return std::stoll(digits);
}

}  // namespace

std::string kept_checkpoint_path(const std::string& run_dir, int64_t step) {
    return fmt::format("{}/checkpoints/{}{:08d}{}", run_dir, kPrefix, step, kSuffix);
}

std::vector<KeptCheckpoint> kept_checkpoints(const std::string& run_dir) {
    std::vector<KeptCheckpoint> kept;
    const fs::path folder = fs::path(run_dir) / "checkpoints";
    if (!fs::is_directory(folder)) return kept;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
        const int64_t step = step_of(entry.path().filename().string());
        if (step >= 0 && entry.is_regular_file())
            kept.push_back({step, kept_checkpoint_path(run_dir, step)});
    }
    std::sort(kept.begin(), kept.end(),
              [](const KeptCheckpoint& a, const KeptCheckpoint& b) { return a.step < b.step; });
    return kept;
}

void keep_checkpoint(const std::string& run_dir, int64_t step, const Module& model,
                     const nlohmann::json& metadata, int keep) {
    fs::create_directories(fs::path(run_dir) / "checkpoints");
    save_checkpoint(kept_checkpoint_path(run_dir, step), model, {}, metadata);
    const std::vector<KeptCheckpoint> kept = kept_checkpoints(run_dir);
    for (size_t i = 0; i + size_t(std::max(keep, 1)) < kept.size(); ++i)
        fs::remove(kept[i].path);
}

// θ_avg = (1/N) Σ_i θ_i: each tensor summed in double in the files' order, then divided by N
std::vector<std::pair<std::string, Tensor>> average_checkpoints(
    const std::vector<std::string>& paths) {
    if (paths.empty()) throw Error("average_checkpoints: no checkpoint to average");
    std::vector<std::pair<std::string, Tensor>> names;  // the first file's parameters, in order
    std::vector<std::vector<double>> sums;
    for (size_t f = 0; f < paths.size(); ++f) {
        const SafetensorsFile file = load_checkpoint(paths[f]);
        const std::vector<std::string> extra = checkpoint_extra_tensor_names(file);
        const std::set<std::string> extras(extra.begin(), extra.end());
        size_t seen = 0;
        for (const SafetensorsTensor& t : file.tensors) {
            if (extras.count(t.name)) continue;
            if (f == 0) {
                names.emplace_back(t.name, t.value);
                sums.emplace_back(t.value.data(), t.value.data() + t.value.numel());
                continue;
            }
            auto it = std::find_if(names.begin(), names.end(),
                                   [&](const auto& n) { return n.first == t.name; });
            if (it == names.end())
                throw Error(fmt::format(
                    "{}: tensor '{}' {} is not in {}, the first checkpoint averaged (every "
                    "checkpoint must hold the same parameters)",
                    paths[f], t.name, t.value.shape().str(), paths[0]));
            if (t.value.shape() != it->second.shape())
                throw Error(fmt::format("{}: tensor '{}' is {}, expected {} as in {}", paths[f],
                                        t.name, t.value.shape().str(), it->second.shape().str(),
                                        paths[0]));
            std::vector<double>& sum = sums[size_t(it - names.begin())];
            for (int64_t i = 0; i < t.value.numel(); ++i) sum[size_t(i)] += t.value.data()[i];
            ++seen;
        }
        if (f > 0 && seen != names.size())
            for (const auto& [name, value] : names)
                if (!file.find(name) || extras.count(name))
                    throw Error(fmt::format(
                        "{}: no tensor '{}' (expected {} as in {}, the first checkpoint averaged)",
                        paths[f], name, value.shape().str(), paths[0]));
    }
    std::vector<std::pair<std::string, Tensor>> averaged;
    const double n = double(paths.size());
    for (size_t k = 0; k < names.size(); ++k) {
        std::vector<real> mean(sums[k].size());
        for (size_t i = 0; i < mean.size(); ++i) mean[i] = real(sums[k][i] / n);
        averaged.emplace_back(names[k].first,
                              Tensor::from_vector(names[k].second.shape(), std::move(mean)));
    }
    return averaged;
}

std::string average_last_checkpoints(const std::string& run_dir, int last,
                                     const std::string& out) {
    if (!fs::is_directory(run_dir))
        throw Error(fmt::format(
            "{}: not a run directory (expected the output.run_dir of a `seqgrad train` run)",
            run_dir));
    const bool plain = !out.empty() && out.find('/') == std::string::npos && out != "." &&
                       out != ".." && out != "best" && out != "last";
    if (!plain)
        throw Error(fmt::format(
            "--out: expected a plain file name other than best and last (the checkpoint is "
            "written as RUN_DIR/NAME.safetensors), got \"{}\"",
            out));
    const std::vector<KeptCheckpoint> kept = kept_checkpoints(run_dir);
    if (last < 1 || size_t(last) > kept.size())
        throw Error(fmt::format(
            "{}/checkpoints: {} kept checkpoint{}, cannot average the last {} (train.average_last "
            "N keeps the last N checkpoints of a run as it trains; averaging needs 1 to {})",
            run_dir, kept.size(), kept.size() == 1 ? "" : "s", last, kept.size()));
    std::vector<std::string> paths;
    nlohmann::json steps = nlohmann::json::array(), files = nlohmann::json::array();
    for (size_t i = kept.size() - size_t(last); i < kept.size(); ++i) {
        paths.push_back(kept[i].path);
        steps.push_back(kept[i].step);
        files.push_back(fs::path(kept[i].path).filename().string());
    }
    const std::vector<std::pair<std::string, Tensor>> averaged = average_checkpoints(paths);
    nlohmann::json metadata{{"averaged_from", files}, {"averaged_steps", steps}};
    const nlohmann::json first = checkpoint_metadata(load_safetensors(paths.front()));
    if (first.is_object() && first.contains("config")) metadata["config"] = first["config"];
    const std::string path = run_dir + "/" + out + ".safetensors";
    save_checkpoint(path, averaged, {}, metadata);
    return path;
}

}  // namespace seqgrad
