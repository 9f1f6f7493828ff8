// Transformer: the encoder-decoder of Vaswani et al. (2017) for translation, beside Seq2Seq.
//
//   source ids [B,S] -> x = √E · source_embedding(ids) + P_src[0..S) -> dropout     [B,S,E]
//   memory = transformer.encoder(x, source padding mask)                           [B,S,E]
//   target input ids [B,T] (SOS y_1 .. y_{T-1}) -> y = √E · target_embedding + P_tgt -> dropout
//   h = transformer.decoder(y, memory, causal mask, target padding, memory padding)  [B,T,E]
//   logits = out(h) over the real target tokens only                             [N,V_t]
//   loss = mean cross-entropy (label smoothing as train.label_smoothing)
//
// Training packs the batch (forward_loss): the sentences' real tokens end to end, sources
// [1,ΣS_i,E] and targets [1,ΣT_i,E], with each sentence's positions counted from 0 and its
// attention kept inside the sentence (KeyMask::packed). The maths is the padded pass's at every
// real position; no work is spent on padding. forward() and decoding run the padded batch.
//
// transformer.* is nn.Transformer(batch_first=True)'s state dict exactly (layers/transformer.h):
// transformer.encoder.layers.0.self_attn.in_proj_weight, ..., transformer.decoder.norm.bias.
// P is sinusoidal (no parameters) or learned (source_positions.embedding.weight [P,E] and
// target_positions.embedding.weight). model.share_embeddings ties weights (Press and Wolf, 2017):
//   "target": the output projection's weight is target_embedding.weight [V_t,E] (its bias is
//             out_bias [V_t]);
//   "all":    one vocabulary for both sides (V_s = V_t), and source embedding, target embedding
//             and output projection are one weight, stored once as source_embedding.weight
//             (PyTorch's named_parameters() lists a tied weight under its first name only);
//             target_embedding reads it and is not a parameter of its own.
// The gradient of a tied weight is the sum of its uses' gradients.
//
// Initialisation (model.init "pytorch"): every matrix — embeddings, positions, projections —
// Xavier-uniform, as nn.Transformer's own reset and the tutorial model of
// bentrevett/pytorch-seq2seq do; biases as PyTorch's Linear, LayerNorm 1 and 0.
//
// Decoding is incremental (StepModel): each decoder layer caches its self-attention's keys and
// values and the memory's, so step t attends over t cached positions instead of re-running the
// prefix (TransformerState).
#pragma once

#include <memory>

#include "seqgrad/layers/dropout.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/positional_encoding.h"
#include "seqgrad/layers/transformer.h"
#include "seqgrad/models/model/translation_model.h"

namespace seqgrad {

// The decoder's state between decoding steps (models/model/step_model.h), one row per
// hypothesis. The position of the next token is DecoderState::step.
struct TransformerState : DecoderState {
    Tensor memory_mask;  // [N,S] 1 at padded source positions
    // One per decoder layer: memory keys and values [N,h,S,d] (computed once), self keys and
    // values [N,h,t,d] of the t positions so far (undefined before the first step).
    std::vector<DecoderLayerCache> layers;

    int64_t rows() const override { return memory_mask.size(0); }
    std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const override;
};

// The teacher-forced pass's tensors, for tests and tools.
struct TransformerForward {
    Tensor memory;                // [B,S,E]
    Tensor decoded;               // [B,T,E], the decoder's output (after its final norm)
    std::vector<Tensor> weights;  // with weights: encoder layers' self [B,h,S,S], then each
                                  // decoder layer's self [B,h,T,T] and cross [B,h,T,S]
};

class Transformer : public TranslationModel {
  public:
    // fused.attention: the attention's fused ops or their composed twins (model_config.h)
    Transformer(const ModelConfig& config, int64_t source_vocab, int64_t target_vocab, Rng& rng,
                FusedLayers fused = {});

    const ModelConfig& config() const override { return config_; }
    int64_t vocab_size() const override { return target_vocab_; }

    // The loss on the packed batch; with a record, on the padded one (forward_record.h).
    LossOutput forward_loss(const Batch& batch, const LossOptions& options = {},
                            ForwardRecord* record = nullptr) const override;
    // The same loss from the padded pass (forward()), padding included in every product: for
    // tests and the performance ladder.
    LossOutput forward_loss_padded(const Batch& batch, double label_smoothing = 0.0) const;
    // The loss of the padded decoder output decoded [B,T,E]: its real target tokens' rows.
    LossOutput padded_loss(const Tensor& decoded, const Batch& batch,
                           double label_smoothing = 0.0) const;
    // The encoder and the teacher-forced decoder (no loss).
    TransformerForward forward(const Batch& batch, bool weights = false) const;
    // √E · tokens + P[offset ..), then dropout: the token embeddings tokens [B,T,E] as the
    // encoder (source_positions) or the decoder (target_positions) reads them.
    Tensor embed(const Tensor& tokens, const PositionalEncoding& positions, int64_t offset) const;
    // logits [N,V] = out(h) for rows h [N,E]
    Tensor project(const Tensor& h) const;

    std::unique_ptr<DecoderState> start_decoding(const Batch& batch) const override;
    Tensor source_token_embeddings(const std::vector<int32_t>& source_ids) const override;
    // The encoder reads √E · embedded + P, as from token ids.
    std::unique_ptr<DecoderState> start_decoding_embedded(
        const Tensor& embedded, const std::vector<int32_t>& lengths) const override;
    // attention: the top decoder layer's cross-attention weights of this step, averaged over
    // heads [N,S]; self_attention and cross_attention: every decoder layer's, per head, when the
    // state asks (DecoderState::keep_layer_attention)
    StepResult step(const std::vector<int32_t>& previous_tokens,
                    DecoderState& state) const override;

    std::unique_ptr<Embedding> source_embedding, target_embedding;
    PositionalEncoding source_positions, target_positions;
    TransformerEncoderDecoder transformer;
    std::unique_ptr<Linear> out;  // undefined when share_embeddings is not "none"
    Tensor out_bias;              // [V_t], when share_embeddings is not "none"
    Dropout dropout;              // on the embedded inputs

  private:
    // Packed: ids [B,L] padded -> the real tokens [1,N,E], positions within each sentence.
    Tensor embed_packed(const Embedding& embedding, const PositionalEncoding& positions,
                        const std::vector<int32_t>& ids, int64_t L, const Packing& packing) const;
    // The padded pass with its tensors in `record` (encoder, decoder, output under TapeScopes).
    LossOutput recorded_loss(const Batch& batch, double label_smoothing,
                             ForwardRecord& record) const;
    // The mean cross-entropy of out(h) for h [N,E], the rows of the N real target tokens.
    LossOutput loss_of_rows(const Tensor& h, const Batch& batch, double label_smoothing) const;

    ModelConfig config_;
    int64_t target_vocab_;
};

}  // namespace seqgrad
