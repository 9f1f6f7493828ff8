// ForwardRecord: what a teacher-forced forward pass shows the tools that look inside a model
// (gradient flow, saliency, the explorer's views, `seqgrad attention`), by name, without them
// knowing the model's class.
//
//   TranslationModel::forward_loss(batch, options, &record)
//
// fills the fields the model has and leaves the others empty. Every tensor is the pass's own
// node, still in the graph: call retain_grad() on it before loss.backward() and its gradient is
// d(loss)/d(that tensor). Attention weights and pre-activations are values only (no gradient).
// Without a record (the default) nothing is kept and nothing is computed for it.
//
// A pass with a record keeps the batch's row order (row b of every tensor is sentence b), so
// the RNN model does not sort the batch by target length first: its loss equals the sorted
// pass's up to the order of the sum. The Transformer runs its padded pass (Transformer::forward)
// in place of the packed one, so that every tensor is [B, ...]; the same maths at every real
// position.
#pragma once

#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

struct ForwardRecord {
    // ---- every model ---------------------------------------------------------------------------
    Tensor source_embeddings;  // [B,S,E] emb(source ids), the token embeddings
    // [B,S,E] what the encoder's first layer reads: the RNN's embeddings (after dropout), the
    // Transformer's √E · emb + P (after dropout)
    Tensor encoder_input;
    Tensor encoder_outputs;  // [B,S,K] the RNN encoder's states, or the Transformer's memory

    // ---- the RNN encoder-decoder (Seq2Seq) -----------------------------------------------------
    // Every encoder step's h [B,He], index (layer * directions + direction) * S + t: the
    // recurrence's own tensors (the encoder runs the rows in the given order when recording).
    std::vector<Tensor> encoder_step_states;
    // One entry per decoder step t, over the n_t rows still running at t (the batch's first
    // n_t rows; the rows after them have no target left):
    std::vector<Tensor> attention;  // α_t [n_t,S] attention weights (none: empty)
    // e_t [n_t,S] the scores α_t is the softmax of, before the mask (with the position bias and
    // the coverage term, if on); padded positions hold the score they would have had
    std::vector<Tensor> attention_scores;
    std::vector<Tensor> decoder_states;   // h_t [n_t,H] the top decoder layer's new state
    std::vector<Tensor> decoder_outputs;  // o_t: what the output projection reads at t
    // The tanh inputs of the score MLP [n_t,S,A] (Bahdanau W_q h_{t-1} + W_k k_s (+ b_k), Luong
    // concat W_query h_t + W_key k_s); empty for the other scores.
    std::vector<Tensor> attention_pre_activations;

    // ---- the Transformer -----------------------------------------------------------------------
    std::vector<Tensor> encoder_self_attention;   // per layer [B,h,S,S]
    std::vector<Tensor> decoder_self_attention;   // per layer [B,h,T,T]
    std::vector<Tensor> decoder_cross_attention;  // per layer [B,h,T,S]
    Tensor decoded;  // [B,T,E] the decoder's output (after its final norm)
};

}  // namespace seqgrad
