// TranslationModel: what training, decoding and the tools need from a translation model,
// whichever its architecture — the RNN encoder-decoder with attention (Seq2Seq,
// models/model/seq2seq.h) or the Transformer (models/model/transformer.h):
//   Module          named parameters (checkpoints, the optimizer, gradient reports), train/eval
//   forward_loss    the teacher-forced training loss of a batch (LossOptions), and on request
//                   a ForwardRecord of its named tensors (models/model/forward_record.h)
//   StepModel       one decoding step for N rows (greedy, beam search; models/decoding/)
//   start_decoding  the decoder state before the first step, one row per source sentence (the
//                   model's own DecoderState type, held through the base)
//   source_token_embeddings, start_decoding_embedded
//                   the source token embeddings the encoder reads, and decoding from given ones,
//                   so that gradients can reach them (saliency, apps/studies/saliency.h)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "seqgrad/data/batching.h"
#include "seqgrad/layers/module.h"
#include "seqgrad/models/model/forward_record.h"
#include "seqgrad/models/model/model_config.h"
#include "seqgrad/models/model/step_model.h"

namespace seqgrad {

struct LossOutput {
    Tensor loss;              // [] mean cross-entropy over real target tokens
    int64_t num_tokens = 0;   // real target tokens (EOS included)
    int64_t num_correct = 0;  // argmax predictions equal to the target (teacher-forced)
};

// What a training pass asks of the loss, whichever the model.
struct LossOptions {
    // Probability of feeding the gold previous token at each target position (1 = always);
    // otherwise the model's own argmax. The Transformer trains with 1 only.
    double teacher_forcing = 1;
    double label_smoothing = 0;  // ε of the smoothed cross-entropy
    // λ of See et al.'s coverage loss, + λ (1/N) Σ_t Σ_s min(α_ts, c_ts), in training mode only
    // (validation reports the cross-entropy); needs model.coverage (Seq2Seq), ignored otherwise.
    double coverage_loss = 0;
};

class TranslationModel : public Module, public StepModel {
  public:
    // Training forward; dropout and teacher forcing's choices draw from the model's generator.
    // record (optional): filled with the pass's named tensors (models/model/forward_record.h).
    virtual LossOutput forward_loss(const Batch& batch, const LossOptions& options = {},
                                    ForwardRecord* record = nullptr) const = 0;
    // Encodes the batch's sources: the state greedy_decode / beam_search start from.
    virtual std::unique_ptr<DecoderState> start_decoding(const Batch& batch) const = 0;
    virtual const ModelConfig& config() const = 0;

    // emb(ids): the source embedding's rows for one sentence, [S, E] (no gradient)
    virtual Tensor source_token_embeddings(const std::vector<int32_t>& source_ids) const = 0;
    // start_decoding from source token embeddings [B, S, E] in place of emb(ids), sentence b of
    // length lengths[b] (padded after it): the state is a function of `embedded`, with gradient.
    virtual std::unique_ptr<DecoderState> start_decoding_embedded(const Tensor& embedded,
                                                 const std::vector<int32_t>& lengths) const = 0;
};

// The model model.kind asks for ("rnn": Seq2Seq, "transformer": Transformer), its layers
// computing with their fused ops or their composed twins as `fused` says.
std::unique_ptr<TranslationModel> make_model(const ModelConfig& config, int64_t source_vocab,
                                             int64_t target_vocab, Rng& rng,
                                             FusedLayers fused = {});

}  // namespace seqgrad
