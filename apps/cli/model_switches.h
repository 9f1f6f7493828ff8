// Where SEQGRAD_DISABLE reaches a model: the layer options it names (fused_gru, fused_lstm,
// fused_rnn, fused_attention; autograd/kernels/switches.h), as the FusedLayers a command builds
// its model with (models/model/model_config.h). The switches are read once, in main, and handed
// down; the layers, the model and its config never read them.
#pragma once

#include <string>

#include "seqgrad/autograd/kernels/switches.h"
#include "seqgrad/models/model/model_config.h"

namespace seqgrad {

// cells = the fused switch of `cell`'s type (model.cell: fused_gru, fused_lstm or fused_rnn);
// attention = fused_attention.
FusedLayers fused_layers(const std::string& cell, const Switches& switches);

}  // namespace seqgrad
