#include "seqgrad/models/training/resume.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/training/signals.h"

namespace seqgrad {

using json = nlohmann::json;

json Progress::to_json() const {
    return json{
        {"step", step},
        {"epoch", epoch},
        {"batch_in_epoch", batch_in_epoch},
        {"best_valid_loss", std::isfinite(best_valid_loss) ? json(best_valid_loss) : json()},
        {"best_score", std::isfinite(best_score) ? json(best_score) : json()},
        {"bad_validations", bad_validations},
        {"epochs_completed", epochs_completed}};
}

Progress Progress::from_json(const json& j) {
    Progress p;
    p.step = j.at("step").get<int64_t>();
    p.epoch = j.at("epoch").get<uint64_t>();
    p.batch_in_epoch = j.at("batch_in_epoch").get<size_t>();
    p.best_valid_loss =
        j.at("best_valid_loss").is_null() ? INFINITY : j.at("best_valid_loss").get<double>();
    p.best_score = !j.contains("best_score")      ? -p.best_valid_loss
                   : j.at("best_score").is_null() ? -INFINITY
                                                  : j.at("best_score").get<double>();
    p.bad_validations = j.at("bad_validations").get<int>();
    p.epochs_completed = j.at("epochs_completed").get<int>();
    return p;
}

void save_training_checkpoint(const std::string& path, const TrainingState& s) {
    json meta{{"progress", s.progress.to_json()},
              {"rng", rng_state_to_json(s.rng)},
              {"optimizer", s.optimizer.state_json()},
              {"schedule", s.schedule.state_json()},
              {"config", s.config.to_json()}};
    WriteSection writing;
    save_checkpoint(path, s.model, s.optimizer.state_tensors(), meta);
}

void restore_training_checkpoint(const std::string& path, const TrainingState& s) {
    SafetensorsFile file = load_checkpoint(path);
    check_checkpoint_cell(file, s.config.model.cell);
    load_parameters(file, s.model);
    json meta = checkpoint_metadata(file);
    for (const char* key : {"progress", "rng", "optimizer", "schedule"})
        if (!meta.is_object() || !meta.contains(key))
            throw Error(fmt::format(
                "{}: cannot resume: the checkpoint has no training state ('{}' is missing "
                "from its seqgrad metadata); it holds weights only (`translate` and `eval` "
                "can use it, `train --resume` cannot)",
                path, key));
    try {
        s.progress = Progress::from_json(meta.at("progress"));
        s.rng.set_state(rng_state_from_json(meta.at("rng")));
        NamedTensors tensors;
        for (const auto& t : file.tensors) tensors.emplace_back(t.name, t.value);
        s.optimizer.load_state(tensors, meta.at("optimizer"));
        s.schedule.load_state(meta.at("schedule"));
    } catch (const nlohmann::json::exception& e) {
        throw Error(
            fmt::format("{}: cannot resume: the training state in its metadata is "
                        "malformed ({})",
                        path, e.what()));
    } catch (const Error& e) {
        throw Error(fmt::format("{}: cannot resume: {}", path, e.what()), e.kind());
    }
}

}  // namespace seqgrad
