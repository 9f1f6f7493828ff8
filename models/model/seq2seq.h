// Seq2Seq: embedding -> recurrent encoder -> stacked recurrent decoder with attention -> output
// projection.
//
//   source ids [B,S] -> source_embedding -> [B,S,E] -> encoder -> encoder_outputs [B,S,K]
//                                              (K = He, or 2He if bidirectional; He per direction)
//   encoder and decoder cells: model.cell, "gru", "lstm" or "rnn" (layers/recurrent.h)
//   decoder layers l = 0..L-1, each a cell with state s^l (h, and c for an LSTM); s^l_0 comes
//   from the encoder's final state of layer l when the encoder has L layers, else of its top
//   layer; through the bridge tanh(W_b [h_fwd; h_bwd] + b_b) when bidirectional or He != H (an
//   LSTM's c through its own linear cell_bridge, no tanh: c is not bounded)
//   at each target step t, with y_{t-1} the previous target token (SOS first), h_t = top layer:
//     bahdanau:  c_t = attend(query = h_{t-1});  layer 0 reads [emb(y_{t-1}); c_t], layer l > 0
//                reads layer l-1's new h;  o_t = h_t
//     luong_*:   layer 0 reads [emb(y_{t-1}); ã_{t-1} if input feeding], the stack steps, then
//                c_t = attend(query = h_t);  o_t = ã_t = tanh(W_c [c_t; h_t])
//     none:      layer 0 reads emb(y_{t-1});  o_t = h_t
//   coverage (model.coverage, layers/attention.h): the attention also reads c_t = Σ_{t'<t} α_{t'},
//     [B,S], part of the decoder state: c_0 = 0, c_{t+1} = c_t + α_t
//   logits_t = out(o_t)  (output_layer "plain")  or  out([o_t; c_t; emb(y_{t-1})])  ("deep";
//   without attention [o_t; emb(y_{t-1})])
//   loss = cross-entropy over the real (non-PAD) target tokens, averaged; with a coverage loss
//   λ > 0 (See et al. 2017), in training mode, + λ · (1/N) Σ_t Σ_s min(α_{t,s}, c_{t,s}) over
//   the same N tokens.
//
// Under teacher forcing the logits of all steps are computed after the recurrence, in one large
// product over the real tokens only (padding never reaches the output projection).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seqgrad/data/batching.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/dropout.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/recurrent.h"
#include "seqgrad/models/model/model_config.h"
#include "seqgrad/models/model/step_model.h"
#include "seqgrad/models/model/translation_model.h"

namespace seqgrad {

// What the encoder hands to the decoder for one source batch.
struct EncodedSource {
    Tensor outputs;  // [B,S,K] encoder states (zero past each length)
    // The decoder's state before its first step, one per decoder layer (bottom first).
    std::vector<RecurrentState> initial_state;
    Tensor keys_projected;  // [B,S,*] attention's key projection, computed once per batch
    Tensor mask;            // [B,S]   1 at padded source positions
    std::vector<int32_t> lengths;
    // The encoder's own tensors, for a ForwardRecord (models/model/forward_record.h):
    Tensor embedded;                  // [B,S,E] source embeddings (before dropout)
    Tensor input;                     // [B,S,E] what the recurrence reads (after dropout)
    std::vector<Tensor> step_states;  // the encoder's RecurrentOutput::step_states
};

// The decoder's state between decoding steps (models/model/step_model.h), every tensor one row
// per hypothesis, [N, ...]. The output step t (for a position bias) is DecoderState::step.
struct Seq2SeqState : DecoderState {
    Tensor feed;             // [N,H] Luong's ã_{t-1} (input feeding), zeros before the first step
    Tensor encoder_outputs;  // [N,S,K] what the attention reads
    Tensor keys_projected;   // [N,S,*] the attention's key half (undefined without attention)
    Tensor mask;             // [N,S] 1 at padded source positions
    Tensor coverage;         // [N,S] c_t, zeros before the first step (undefined without coverage)
    std::vector<RecurrentState> layers;  // every decoder layer's h (and an LSTM's c), bottom first

    int64_t rows() const override { return encoder_outputs.size(0); }
    std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const override;
};

class Encoder : public Module {
  public:
    Encoder(const ModelConfig& config, int64_t source_vocab, Rng& rng, FusedLayers fused = {});
    EncodedSource forward(const std::vector<int32_t>& source_ids, int64_t batch, int64_t length,
                          const std::vector<int32_t>& lengths) const;
    // The same from given source embeddings [B,S,E] instead of ids (forward embeds, then calls
    // this): saliency differentiates an output's log-probability with respect to them, and
    // integrated gradients runs the encoder on scaled copies (apps/studies/saliency.h).
    EncodedSource forward_embedded(const Tensor& embedded,
                                   const std::vector<int32_t>& lengths) const;
    int64_t output_size() const { return output_size_; }

    Embedding embedding;
    // model.cell's layer (GRU, LSTM or RNN), registered as "gru", "lstm" or "rnn"
    std::unique_ptr<Recurrent> recurrent;
    Dropout dropout;
    // bidirectional or He != H: h_0 = tanh(bridge([h_fwd; h_bwd])) (undefined otherwise)
    std::unique_ptr<Linear> bridge;
    // the same for an LSTM's cell state, without tanh: c_0 = cell_bridge([c_fwd; c_bwd]). Its
    // own weights, because h and c live on different scales (h = o ⊙ tanh(c) is in (-1, 1), c
    // is not bounded), and no tanh, which would squash c into the range of h.
    std::unique_ptr<Linear> cell_bridge;

  private:
    // The decoder's initial state of each of its layers from the encoder's final states.
    std::vector<RecurrentState> decoder_initial_state(const RecurrentOutput& encoded,
                                                      int64_t batch) const;

    int64_t hidden_size_, output_size_;
    int layers_, decoder_layers_;
    bool bidirectional_;
};

class Decoder : public Module {
  public:
    Decoder(const ModelConfig& config, int64_t target_vocab, int64_t key_size, Rng& rng,
            FusedLayers fused = {});

    // One decoder step for every row.  embedded [N,E], state: one per layer, each [N,H]; feed
    // [N,H] (Luong input feeding; ignored otherwise).
    struct Step {
        std::vector<RecurrentState> state;  // every layer's new state
        Tensor output_state;       // o_t [N,H]: h_t, or Luong's ã_t (the next step's feed)
        Tensor projection_input;   // what `out` reads: o_t, or [o_t; c_t; emb] (deep output)
        Tensor attention_weights;  // [N,S] (undefined for none)
        Tensor attention_scores;   // [N,S] before the mask and softmax (undefined for none)
        Tensor coverage;           // c_{t+1} = c_t + α_t [N,S] (undefined without coverage)
        const Tensor& top_hidden() const { return state.back().h; }
    };
    // output_steps [N]: each row's output step t, needed only with a position bias. coverage
    // [N,S]: c_t, read only with model.coverage (undefined = 0, the first step).
    Step step(const Tensor& embedded, const std::vector<RecurrentState>& state, const Tensor& feed,
              const EncodedSource& source, const Tensor& output_steps = Tensor(),
              const Tensor& coverage = Tensor()) const;
    // model.coverage is not "none": the attention reads and the state carries c_t.
    bool has_coverage() const { return attention && attention->coverage_kind() != Coverage::none; }
    // The query the attention of step s read: h_{t-1} (Bahdanau, `before` = the states the step
    // started from) or h_t (Luong).
    const Tensor& attention_query(const std::vector<RecurrentState>& before, const Step& s) const;
    // Appends step s's tensors to a ForwardRecord (attention, scores, states, pre-activations).
    void record_step(const Step& s, const std::vector<RecurrentState>& before,
                     const Tensor& keys_projected, ForwardRecord& record) const;
    Tensor project_keys(const Tensor& encoder_outputs) const;
    // The weights every step multiplies by (for kernels::SharedOverStepsScope).
    std::vector<Tensor> step_weights() const;
    int num_layers() const { return int(cells.size()); }

    Embedding embedding;
    // model.cell's cells; layer 0 is "cell" (the keys of GRU checkpoints from before stacked
    // decoders), layer l > 0 "cell_l{l}".
    std::vector<std::unique_ptr<RecurrentCell>> cells;
    std::unique_ptr<Attention> attention;
    std::unique_ptr<Linear> combine;  // Luong: W_c, [c; h] -> H
    Dropout dropout;  // on the embeddings, between layers, and before the output projection
    Linear out;

  private:
    // the stack from layer 0's input; the new states of every layer
    std::vector<RecurrentState> stack_step(const Tensor& input,
                                           const std::vector<RecurrentState>& state) const;

    std::string attention_kind_;
    bool input_feeding_, deep_output_;
};

class Seq2Seq : public TranslationModel {
  public:
    // fused: the layers' fused ops or their composed twins (models/model/model_config.h)
    Seq2Seq(const ModelConfig& config, int64_t source_vocab, int64_t target_vocab, Rng& rng,
            FusedLayers fused = {});

    const ModelConfig& config() const override { return config_; }
    std::unique_ptr<DecoderState> start_decoding(const Batch& batch) const override {
        return initial_state(encode(batch));
    }
    Tensor source_token_embeddings(const std::vector<int32_t>& source_ids) const override {
        return encoder.embedding.forward(source_ids, {int64_t(source_ids.size())}).detach();
    }
    std::unique_ptr<DecoderState> start_decoding_embedded(
        const Tensor& embedded, const std::vector<int32_t>& lengths) const override {
        return initial_state(encode_embedded(embedded, lengths));
    }
    int64_t vocab_size() const override { return target_vocab_; }

    // in_order: the encoder runs the rows in the batch's order (no sorting by length), so that
    // EncodedSource::step_states are the recurrence's own tensors (for a ForwardRecord).
    EncodedSource encode(const Batch& batch, bool in_order = false) const;
    // encode() from given source embeddings [B,S,E] (Encoder::forward_embedded).
    EncodedSource encode_embedded(const Tensor& embedded,
                                  const std::vector<int32_t>& lengths) const;
    // Training forward: teacher forcing with probability options.teacher_forcing per token
    // (1 = always); otherwise the model's own previous argmax is fed. `rng` draws those choices
    // and dropout. Without a record the batch is sorted by target length first (the order of a
    // sum); with one, it runs in its own order (models/model/forward_record.h).
    LossOutput forward_loss(const Batch& batch, const LossOptions& options = {},
                            ForwardRecord* record = nullptr) const override;
    // The same from a source already encoded by encode(batch), in the batch's row order.
    LossOutput forward_loss(const Batch& batch, const EncodedSource& source,
                            const LossOptions& options = {}, ForwardRecord* record = nullptr) const;

    // Decoding (StepModel): one row per source sentence.
    std::unique_ptr<Seq2SeqState> initial_state(const EncodedSource& source) const;
    StepResult step(const std::vector<int32_t>& previous_tokens,
                    DecoderState& state) const override;

    Encoder encoder;
    Decoder decoder;
    Rng& rng() const { return rng_; }

  private:
    // The decoder's output states of the steps that ran, and their targets.
    struct DecodedSteps {
        Tensor states;                 // [Σ n_t, *], time-major: what `out` reads
        std::vector<int32_t> targets;  // [Σ n_t]
        // Σ_t Σ_s min(α_{t,s}, c_{t,s}) over the real target tokens (coverage loss on only)
        Tensor coverage_overlap;
    };
    DecodedSteps decode_teacher_forced(const Batch& batch, const EncodedSource& source,
                                       const LossOptions& options, ForwardRecord* record) const;

    // model.init "normal": every weight N(0, 0.01), every bias 0
    void init_normal(Rng& rng);

    ModelConfig config_;
    int64_t target_vocab_;
    Rng& rng_;
};

}  // namespace seqgrad
