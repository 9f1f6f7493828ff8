#include "apps/explore/live/live_weights.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "seqgrad/data/file_io.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/formats/checkpoint.h"

namespace seqgrad {
namespace {

namespace fs = std::filesystem;

// A file in the temporary folder, removed when this goes out of scope.
struct TemporaryFile {
    std::string path;
    TemporaryFile() {
        static std::atomic<int> counter{0};
        path = (fs::temp_directory_path() /
                fmt::format("seqgrad_live_{}_{}.safetensors", ::getpid(), counter++))
                   .string();
    }
    ~TemporaryFile() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
};

// The best hypothesis' tokens of each source (empty when nothing was decoded).
std::vector<std::vector<int32_t>> best_tokens(const TranslationModel& model, const Task& task,
                                              const std::vector<std::string>& sources,
                                              const DecodeOptions& options) {
    std::vector<std::vector<int32_t>> tokens;
    for (const Translation& t : translate(model, task, sources, options))
        tokens.push_back(t.nbest.empty() ? std::vector<int32_t>{} : t.nbest[0].tokens);
    return tokens;
}

std::string megabytes(size_t bytes) {
    return fmt::format("{:.2f} MB", double(bytes) / 1e6);
}

}  // namespace

LiveWeights live_weights_from_name(const std::string& name) {
    if (name == "f32") return LiveWeights::f32;
    if (name == "f16") return LiveWeights::f16;
    if (name == "auto") return LiveWeights::automatic;
    throw Error(fmt::format("--live-weights: expected f32, f16 or auto, got \"{}\"", name),
                ErrorKind::value);
}

std::string live_weights_file(const LoadedRun& run, Dtype dtype) {
    // the parameters alone (a checkpoint also holds Adam's moments: three times the size)
    nlohmann::json metadata = checkpoint_metadata(load_checkpoint(run.checkpoint_path));
    if (!metadata.is_object()) metadata = nlohmann::json::object();
    TemporaryFile file;
    save_checkpoint(file.path, *run.model, {}, metadata, dtype);
    return read_file(file.path);
}

WeightsComparison compare_weights(const LoadedRun& run, const std::string& weights_file,
                                  const std::vector<std::string>& sources,
                                  const DecodeOptions& beam) {
    // the other weights in a model of the same config, read back as the page's engine reads them
    TemporaryFile file;
    write_file_atomically(file.path, weights_file);
    const SafetensorsFile checkpoint = load_checkpoint(file.path);
    Rng rng(run.config.train.seed);
    std::unique_ptr<TranslationModel> other = make_model(
        run.config.model, run.task.source_vocab.size(), run.task.target_vocab.size(), rng);
    check_checkpoint_cell(checkpoint, run.config.model.cell);
    load_parameters(checkpoint, *other);
    other->eval();

    DecodeOptions greedy = beam;
    greedy.beam_size = greedy.nbest = 1;
    WeightsComparison c;
    c.sentences = sources.size();
    const auto greedy_own = best_tokens(*run.model, run.task, sources, greedy),
               greedy_other = best_tokens(*other, run.task, sources, greedy),
               beam_own = best_tokens(*run.model, run.task, sources, beam),
               beam_other = best_tokens(*other, run.task, sources, beam);
    for (size_t i = 0; i < sources.size(); ++i) {
        const bool greedy_differs = greedy_own[i] != greedy_other[i],
                   beam_differs = beam_own[i] != beam_other[i];
        c.greedy_differ += greedy_differs;
        c.beam_differ += beam_differs;
        c.differ += greedy_differs || beam_differs;
    }
    return c;
}

LiveWeightsChoice choose_live_weights(const LoadedRun& run, LiveWeights choice,
                                      const std::vector<std::string>& sources,
                                      const DecodeOptions& beam) {
    LiveWeightsChoice r;
    r.file = live_weights_file(run, Dtype::F32);
    r.f32_bytes = r.file.size();
    if (choice == LiveWeights::f32) {
        r.note = fmt::format("weights: float32, {}", megabytes(r.f32_bytes));
        return r;
    }
    std::string half;
    try {
        half = live_weights_file(run, Dtype::F16);
    } catch (const Error& e) {
        if (choice == LiveWeights::f16) throw;
        r.note = fmt::format("weights: float32, {} (--live-weights auto: {})",
                             megabytes(r.f32_bytes), e.what());
        return r;
    }
    r.f16_bytes = half.size();
    r.compared = true;
    r.comparison = compare_weights(run, half, sources, beam);
    const WeightsComparison& c = r.comparison;
    const std::string outcome =
        c.differ == 0 ? fmt::format(
                            "the {} precomputed sentences decode to the same tokens with both, "
                            "greedy and beam {}",
                            c.sentences, beam.beam_size)
                      : fmt::format(
                            "{} of the {} precomputed sentences decode to other tokens with "
                            "float16 (greedy {}, beam {}: {})",
                            c.differ, c.sentences, c.greedy_differ, beam.beam_size, c.beam_differ);
    const bool use_half = choice == LiveWeights::f16 || c.differ == 0;
    if (use_half) {
        r.dtype = Dtype::F16;
        r.file = std::move(half);
    }
    r.note = fmt::format(
        "weights: {} ({} as float16, {} as float32); {}{}", use_half ? "float16" : "float32",
        megabytes(r.f16_bytes), megabytes(r.f32_bytes), outcome,
        use_half || choice != LiveWeights::automatic ? "" : "; --live-weights auto keeps float32");
    return r;
}

}  // namespace seqgrad
