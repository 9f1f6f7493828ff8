// The recorded graph (the tape) of one sentence's teacher-forced loss, as `seqgrad explore`'s
// tape view shows it: every node the engine recorded, with its op, output shape, the norm of its
// value and of its gradient (after backward of that loss), grouped by module and time step
// (the TapeScope labels of autograd/tape_scope.h), and the nodes on the paths from the loss to
// the first source embedding, through attention and through the recurrence (a Transformer's:
// by layer, and through the cross-attention only).
// The JSON is described in docs/saliency.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqgrad/data/batching.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {

// The tape of `batch`'s (one sentence's) teacher-forced loss, from the model's forward pass with
// a ForwardRecord (models/model/forward_record.h):
// {"loss", "nodes": {"op", "shape", "value", "grad", "group", "inputs"}, "names", "groups",
//  "paths": {"embedding", "encoder_outputs", "attention", "recurrence"}}.
// The model's parameter gradients are zeroed before and after. A model without a recurrent
// encoder (the Transformer) gets groups by module and layer (the step is the layer; each
// stack's final norm is step L), "kind": "transformer", and one path, from the loss through the
// cross-attention (the memory) to the source embeddings; "recurrence" is empty.
nlohmann::json tape_json(const TranslationModel& model, const Batch& batch);

// The same for `source` against `target` (token ids, <eos> included) of a run, with
// "target": `target_name` and the target tokens' text ("target_tokens").
nlohmann::json tape_json(const LoadedRun& run, const std::string& source,
                         const std::vector<int32_t>& target, const std::string& target_name);

// The maths of every op in the tapes of `sentences` (each element's "tape", when it has one):
// {op: [[file, text], ...]}, from the table of apps/explore/op_maths.h.
nlohmann::json tape_maths(const nlohmann::json& sentences);

}  // namespace seqgrad
