// Where SEQGRAD_DISABLE reaches a model: the layer options it names (fused_gru, fused_lstm,
// fused_rnn, fused_attention; autograd/kernels/switches.h), set on the ModelConfig a command
// builds its model from. The layers and the model never read the switches; they take these
// options from their constructors.
#pragma once

#include "seqgrad/autograd/kernels/switches.h"
#include "seqgrad/models/run/config.h"

namespace seqgrad {

// model.fused_cells = the fused switch of model.cell's type (fused_gru, fused_lstm or
// fused_rnn); model.fused_attention = fused_attention.
void apply_switches(ModelConfig& model, const Switches& switches);

}  // namespace seqgrad
