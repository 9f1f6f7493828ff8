// What refusing non-finite weights costs when a checkpoint is loaded: a 17 M-parameter
// checkpoint (parameters plus Adam's two moments, as `seqgrad train` writes it: 51 M values,
// 204 MB in float) read with load_safetensors alone and with load_checkpoint (the same read,
// then every value checked for NaN / ±Inf), alternating A B A B so that machine noise hits both
// alike; and the check alone over the same tensors.
//   usage: checkpoint_finite_check [--rounds N] [--dir DIR]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/layers/module.h"
#include "seqgrad/models/formats/safetensors.h"
#include "seqgrad/models/formats/checkpoint.h"

using namespace seqgrad;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 7;
    std::string dir = std::filesystem::temp_directory_path().string();
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::string(argv[i]) == "--rounds") rounds = std::stoi(argv[i + 1]);
        if (std::string(argv[i]) == "--dir") dir = argv[i + 1];
    }
    // 17.0 M parameters shaped like a word-level GRU seq2seq: 18k source and 12k target
    // words, 256-wide embeddings, 512-wide GRUs.
    const std::vector<std::pair<std::string, Shape>> shapes = {
        {"encoder.embedding.weight", {18000, 256}}, {"encoder.gru.weight_ih_l0", {1536, 256}},
        {"encoder.gru.weight_hh_l0", {1536, 512}},  {"decoder.embedding.weight", {12000, 256}},
        {"decoder.gru.weight_ih_l0", {1536, 768}},  {"decoder.gru.weight_hh_l0", {1536, 512}},
        {"decoder.out.weight", {12000, 512}},       {"decoder.out.bias", {12000}}};
    std::vector<std::pair<std::string, Tensor>> tensors;
    Rng rng(1);
    int64_t parameters = 0;
    for (const std::string prefix : {"", "optimizer.exp_avg.", "optimizer.exp_avg_sq."}) {
        for (const auto& [name, shape] : shapes) {
            Tensor t = Tensor::empty(shape);
            for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(rng.uniform(-0.1, 0.1));
            if (prefix.empty()) parameters += t.numel();
            tensors.emplace_back(prefix + name, t);
        }
    }
    const std::string path = dir + "/seqgrad_bench_finite_check.safetensors";
    save_safetensors(path, tensors, {});

    std::vector<double> plain, checked, check_only;
    for (int round = 0; round < rounds; ++round) {
        auto start = std::chrono::steady_clock::now();
        SafetensorsFile a = load_safetensors(path);
        plain.push_back(ms_since(start));
        start = std::chrono::steady_clock::now();
        SafetensorsFile b = load_checkpoint(path);
        checked.push_back(ms_since(start));
        start = std::chrono::steady_clock::now();
        int64_t bad = 0;
        for (const auto& t : b.tensors) bad += find_non_finite(t.value).count;
        check_only.push_back(ms_since(start));
        if (bad != 0 || a.tensors.size() != b.tensors.size()) return 1;
    }
    std::filesystem::remove(path);
    const double p = median(plain), c = median(checked), k = median(check_only);
    fmt::print(
        "checkpoint of {:.1f} M parameters + 2 Adam moments ({:.1f} M values, {} bytes each), "
        "medians of {} alternated rounds:\n"
        "  load_safetensors {:.1f} ms, load_checkpoint (with the check) {:.1f} ms: +{:.1f}% "
        "(checked/plain = {:.3f}); the check alone {:.1f} ms\n",
        double(parameters) / 1e6, 3 * double(parameters) / 1e6, sizeof(real), rounds, p, c,
        100 * (c - p) / p, c / p, k);
    return 0;
}
