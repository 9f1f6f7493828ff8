// Checkpoints: a model's parameters, extra tensors (optimizer state) and training progress in
// one safetensors file (see models/formats/safetensors.h), readable from Python as a state dict.
//
// What a checkpoint holds:
//   tensors       every model parameter under its hierarchical name
//                 ("encoder.gru.weight_ih_l0"), in named_parameters() order, then the extra
//                 tensors under the names the caller gives them ("optimizer.exp_avg.<param>")
//   __metadata__  "seqgrad": the caller's JSON (epoch, step, RNG state, config...), as text
//                 "seqgrad.extra_tensors": a JSON list of the extra tensors' names, so that
//                 load_parameters can tell them from parameters of some other model
//                 "format": "pt", which Hugging Face tools look for
// Values are stored in the native dtype of `real`, so a save/load round trip is bit-exact and
// a resumed run continues exactly where the saved one stopped; F16 (half the bytes of F32, each
// value rounded to the nearest half) when the caller asks for it, as the live page may.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/layers/module.h"
#include "seqgrad/models/formats/safetensors.h"

namespace seqgrad {

// Writes the checkpoint atomically (a crash never leaves a half-written file). Throws Error
// when an extra tensor's name clashes with a parameter or another extra tensor, when a
// parameter or extra tensor holds NaN or ±Inf (a diverged model never replaces a good file:
// the message names the tensor, the first bad index and how many values are bad), or when the
// file cannot be written. On any error the file at `path` is left as it was. `dtype`: as
// save_safetensors (F16 also refuses a value too large for a half, naming the tensor).
void save_checkpoint(const std::string& path, const Module& model,
                     const std::vector<std::pair<std::string, Tensor>>& extra_tensors,
                     const nlohmann::json& metadata, Dtype dtype = kNativeDtype);
// The same for parameters given by name, in this order (weights computed outside a model, e.g.
// the average of several checkpoints).
void save_checkpoint(const std::string& path,
                     const std::vector<std::pair<std::string, Tensor>>& parameters,
                     const std::vector<std::pair<std::string, Tensor>>& extra_tensors,
                     const nlohmann::json& metadata, Dtype dtype = kNativeDtype);

// Reads a checkpoint (load_safetensors) and refuses it when any tensor, parameter or extra
// (optimizer moments), holds NaN or ±Inf: the Error names the file, the tensor, the first bad
// index and how many values are bad. What every reader of a run's checkpoints uses.
SafetensorsFile load_checkpoint(const std::string& path);

// Copies the parameters stored in `checkpoint` into `model`. Names and shapes must match
// exactly; otherwise nothing is copied and the Error lists what differs (up to 10 lines):
//   missing: decoder.out.bias (model expects [5000])
//   unexpected: decoder.coverage.weight [12,3]
//   decoder.out.weight: given [6000,256], model expects [5000,256]
// The checkpoint's extra tensors are not parameters and are ignored here. Non-finite values are
// refused (Module::load_state).
void load_parameters(const SafetensorsFile& checkpoint, Module& model);

// A checkpoint written by `seqgrad train` records its config in its metadata ("config"); this
// throws an Error naming the file and both cells when that config's model.cell ("gru" when the
// checkpoint's config has no such key) is not `model_cell` (the model.cell of the model it is
// loaded into), e.g. an LSTM checkpoint loaded into a GRU model. A checkpoint without a recorded
// config passes (its parameter names are checked by load_parameters anyway).
void check_checkpoint_cell(const SafetensorsFile& checkpoint, const std::string& model_cell);

// The JSON given to save_checkpoint ({} for a plain safetensors file without it).
nlohmann::json checkpoint_metadata(const SafetensorsFile& checkpoint);
// The names of the extra tensors given to save_checkpoint, in order.
std::vector<std::string> checkpoint_extra_tensor_names(const SafetensorsFile& checkpoint);

// An Rng state as JSON: four decimal strings (a u64 does not fit exactly in a JSON number,
// which many readers treat as a double), e.g. ["1311768467463790320", ...].
nlohmann::json rng_state_to_json(const Rng& rng);
// The inverse; throws Error unless `state` is a list of four decimal u64 strings.
std::array<uint64_t, 4> rng_state_from_json(const nlohmann::json& state);

}  // namespace seqgrad
