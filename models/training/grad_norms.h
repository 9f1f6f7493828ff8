// The gradient norms of the parameter groups a learner cares about: what `seqgrad train` logs
// every log_every steps and what `seqgrad gradflow` reports (apps/studies/gradflow.h).
#pragma once

#include "seqgrad/layers/module.h"

namespace seqgrad {

// ‖g‖ of each group of parameters, by name: Seq2Seq's, the long-range study models'
// (apps/studies/longrange_model.h), whose attention.* and out.* count as attention and output,
// and the Transformer's (models/model/transformer.h), whose cross-attention is its attention.
struct GroupGradNorms {
    double encoder = 0;    // encoder.*; transformer.encoder.*, source_embedding.*,
                           // source_positions.*
    double attention = 0;  // decoder.attention.*, attention.*; transformer.decoder.layers.*.
                           // multihead_attn.*
    double decoder = 0;    // every other parameter (decoder embedding, cell, Luong combine; the
                           // Transformer's decoder self-attention, feed-forward, norms)
    double output = 0;     // decoder.out.*, out.*, out_bias
    double total = 0;      // all parameters
};

// The norms of the gradients as they are times grad_scale, each value rounded as clip_grad_norm
// rounds it (g · real(grad_scale)): with the factor a clipped step applies, the clipped norms.
// Parameters without a gradient count as zero.
GroupGradNorms group_grad_norms(const Module& model, double grad_scale = 1);

}  // namespace seqgrad
