// Seq2Seq: embedding -> GRU encoder -> GRU decoder with attention -> output projection.
//
//   source ids [B,S] -> source_embedding -> [B,S,E] -> encoder GRU -> encoder_outputs [B,S,K]
//                                                                   (K = H, or 2H if bidirectional)
//   decoder state h_0 = final encoder state (through a tanh bridge when bidirectional)
//   at each target step t, with y_{t-1} the previous target token (SOS first):
//     bahdanau:  c_t = attend(query = h_{t-1});  h_t = GRU([emb(y_{t-1}); c_t], h_{t-1})
//                logits_t = out(h_t)
//     luong_*:   h_t = GRU([emb(y_{t-1}); ã_{t-1} if input feeding], h_{t-1})
//                c_t = attend(query = h_t);  ã_t = tanh(W_c [c_t; h_t]);  logits_t = out(ã_t)
//     none:      h_t = GRU(emb(y_{t-1}), h_{t-1});  logits_t = out(h_t)
//   loss = cross-entropy over the real (non-PAD) target tokens, averaged.
//
// Under teacher forcing the logits of all steps are computed after the recurrence, in one large
// product over the real tokens only (padding never reaches the output projection).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seqgrad/autograd/switches.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/dropout.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/gru.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/models/config.h"
#include "seqgrad/models/step_model.h"

namespace seqgrad {

// What the encoder hands to the decoder for one source batch.
struct EncodedSource {
    Tensor outputs;         // [B,S,K] encoder states (zero past each length)
    Tensor final_state;     // [B,H]   initial decoder state
    Tensor keys_projected;  // [B,S,*] attention's key projection, computed once per batch
    Tensor mask;            // [B,S]   1 at padded source positions
    std::vector<int32_t> lengths;
    // For gradient-flow studies (apps/gradflow.cpp): call retain_grad() on these before
    // backward to read d(loss)/d(source embedding) and d(loss)/d(encoder state at step t).
    Tensor embedded;                  // [B,S,E] source embeddings (before dropout)
    std::vector<Tensor> step_states;  // the encoder GRU's GRUOutput::step_states
};

struct LossOutput {
    Tensor loss;              // [] mean cross-entropy over real target tokens
    int64_t num_tokens = 0;   // real target tokens (EOS included)
    int64_t num_correct = 0;  // argmax predictions equal to the target (teacher-forced)
};

class Encoder : public Module {
  public:
    Encoder(const ModelConfig& config, int64_t source_vocab, Rng& rng);
    EncodedSource forward(const std::vector<int32_t>& source_ids, int64_t batch, int64_t length,
                          const std::vector<int32_t>& lengths) const;
    int64_t output_size() const { return output_size_; }

    Embedding embedding;
    GRU gru;
    Dropout dropout;
    std::unique_ptr<Linear> bridge;  // bidirectional only: h_0 = tanh(bridge([h_fwd; h_bwd]))

  private:
    int64_t hidden_size_, output_size_;
    int layers_;
    bool bidirectional_;
};

class Decoder : public Module {
  public:
    Decoder(const ModelConfig& config, int64_t target_vocab, int64_t key_size, Rng& rng);

    // One decoder step for every row.  embedded [N,E], hidden [N,H], feed [N,H] (Luong input
    // feeding; ignored otherwise). Returns the new hidden state, the vector fed to the output
    // projection ([N,H]: h_t or ã_t) and the attention weights [N,S] (undefined for none).
    struct Step {
        Tensor hidden, output_state, attention_weights;
    };
    // output_steps [N]: each row's output step t, needed only with a position bias.
    Step step(const Tensor& embedded, const Tensor& hidden, const Tensor& feed,
              const EncodedSource& source, const Tensor& output_steps = Tensor()) const;
    Tensor project_keys(const Tensor& encoder_outputs) const;

    Embedding embedding;
    GRUCell cell;
    std::unique_ptr<Attention> attention;
    std::unique_ptr<Linear> combine;  // Luong: W_c, [c; h] -> H
    Dropout dropout;
    Linear out;

  private:
    std::string attention_kind_;
    bool input_feeding_;
};

class Seq2Seq : public Module, public StepModel {
  public:
    Seq2Seq(const ModelConfig& config, int64_t source_vocab, int64_t target_vocab, Rng& rng);

    const ModelConfig& config() const { return config_; }
    int64_t vocab_size() const override { return target_vocab_; }

    EncodedSource encode(const Batch& batch) const;
    // Training forward: teacher forcing with probability teacher_forcing per token (1 = always);
    // otherwise the model's own previous argmax is fed. `rng` draws those choices and dropout.
    LossOutput forward_loss(const Batch& batch, double teacher_forcing = 1.0,
                            double label_smoothing = 0.0) const;
    // The same from a source already encoded by encode(batch) (to inspect the encoder's tensors).
    LossOutput forward_loss(const Batch& batch, const EncodedSource& source,
                            double teacher_forcing = 1.0, double label_smoothing = 0.0) const;

    // Decoding (StepModel): one row per source sentence; state tensors are
    // {hidden, feed, encoder outputs, keys projected, mask, output step [N]}.
    DecoderState initial_state(const EncodedSource& source) const;
    StepResult step(const std::vector<int32_t>& previous_tokens,
                    DecoderState& state) const override;

    Encoder encoder;
    Decoder decoder;
    Rng& rng() const { return rng_; }

  private:
    // The decoder's output states [rows, H] of steps that ran, and their targets.
    struct DecodedSteps {
        std::vector<Tensor> output_states;  // one [n_t, H] per step
        std::vector<int32_t> targets;       // Σ n_t, time-major
    };
    DecodedSteps decode_teacher_forced(const Batch& batch, const EncodedSource& source,
                                       double teacher_forcing) const;
    // Σ over the real target tokens of the cross-entropy of decoder.out(states) (fused or
    // composed, autograd/switches.h); num_correct += the argmax hits.
    Tensor loss_sum(const Tensor& states, const std::vector<int32_t>& targets,
                    double label_smoothing, int64_t* num_correct) const;

    ModelConfig config_;
    int64_t source_vocab_, target_vocab_;
    Rng& rng_;
};

}  // namespace seqgrad
