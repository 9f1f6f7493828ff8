#include "seqgrad/models/model/transformer.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/attention.h"

namespace seqgrad {
namespace {

TransformerLayerOptions layer_options(const ModelConfig& c, FusedLayers fused) {
    TransformerLayerOptions o;
    o.d_model = c.d_model;
    o.heads = c.heads;
    o.ff_size = c.ff_size;
    o.dropout = real(c.dropout);
    o.norm_first = c.norm_first;
    o.activation = c.activation;
    o.fused_attention = fused.attention;
    return o;
}

// U(±√(6 / (fan_in + fan_out))) for a matrix [fan_out, fan_in] (Glorot and Bengio, 2010)
void xavier_uniform(Tensor& w, Rng& rng) {
    const double bound = std::sqrt(6.0 / double(w.size(0) + w.size(1)));
    init::uniform(w, -bound, bound, rng);
}

}  // namespace

Transformer::Transformer(const ModelConfig& config, int64_t source_vocab, int64_t target_vocab,
                         Rng& rng, FusedLayers fused)
    : source_positions(config.positional == "learned", config.max_positions, config.d_model, rng),
      target_positions(config.positional == "learned", config.max_positions, config.d_model, rng),
      transformer(layer_options(config, fused), config.encoder_layers, config.decoder_layers, rng),
      dropout(real(config.dropout), rng),
      config_(config),
      target_vocab_(target_vocab) {
    if (config.d_model % config.heads != 0)
        throw Error(fmt::format("model.d_model: {} is not divisible by model.heads {}",
                                config.d_model, config.heads));
    const int64_t E = config.d_model;
    const bool share_all = config.share_embeddings == "all";
    if (share_all && source_vocab != target_vocab)
        throw Error(fmt::format(
            "model.share_embeddings \"all\": one weight serves both vocabularies, but the source "
            "vocabulary has {} tokens and the target vocabulary {}; give both sides one joint "
            "vocabulary (data.tokenizer \"bpe\" with data.bpe_joint true) or set "
            "model.share_embeddings to \"target\"",
            source_vocab, target_vocab));
    source_embedding = std::make_unique<Embedding>(source_vocab, E, Vocab::PAD, rng);
    register_module("source_embedding", *source_embedding);
    if (share_all) {  // the target side reads the source's weight: one parameter, stored once
        target_embedding = std::make_unique<Embedding>(source_embedding->weight, Vocab::PAD);
    } else {
        target_embedding = std::make_unique<Embedding>(target_vocab, E, Vocab::PAD, rng);
        register_module("target_embedding", *target_embedding);
    }
    register_module("source_positions", source_positions);
    register_module("target_positions", target_positions);
    register_module("transformer", transformer);
    if (config.share_embeddings != "none") {
        out_bias = register_parameter("out_bias", Tensor::empty({target_vocab}));
        init::uniform_fan_in(out_bias, E, rng);
    } else {
        out = std::make_unique<Linear>(E, target_vocab, true, rng);
        register_module("out", *out);
    }
    register_module("dropout", dropout);
    for (auto& [name, p] : named_parameters())
        if (p.rank() == 2) xavier_uniform(p, rng);
    for (Embedding* e : {source_embedding.get(), target_embedding.get()})
        std::fill(e->weight.data() + Vocab::PAD * E, e->weight.data() + (Vocab::PAD + 1) * E,
                  real(0));
}

// √E · tokens + P[offset, offset + T), then dropout
Tensor Transformer::embed(const Tensor& tokens, const PositionalEncoding& positions,
                          int64_t offset) const {
    return dropout.forward(
        positions.forward(tokens * real(std::sqrt(double(config_.d_model))), offset));
}

// The same for packed sentences: ids [B,L] padded -> their real tokens end to end [1,N,E], each
// with the position it has in its own sentence
Tensor Transformer::embed_packed(const Embedding& embedding, const PositionalEncoding& positions,
                                 const std::vector<int32_t>& ids, int64_t L,
                                 const Packing& packing) const {
    std::vector<int32_t> tokens;
    tokens.reserve(size_t(packing.total()));
    for (int64_t b = 0; b < packing.sentences(); ++b)
        for (int64_t t = 0; t < packing.length(b); ++t) tokens.push_back(ids[size_t(b * L + t)]);
    Tensor x =
        embedding.forward(tokens, {1, packing.total()}) * real(std::sqrt(double(config_.d_model)));
    return dropout.forward(positions.forward(x, packing.positions()));
}

Tensor Transformer::project(const Tensor& h) const {
    return out ? out->forward(h) : linear(h, target_embedding->weight, out_bias);
}

TransformerForward Transformer::forward(const Batch& batch, bool weights) const {
    const int64_t B = batch.batch_size, S = batch.src_len, T = batch.tgt_len;
    const Tensor source_padding = padding_mask(batch.src_lengths, S);
    const Tensor target_padding = padding_mask(batch.tgt_lengths, T);
    TransformerForward f;
    std::vector<Tensor> decoder_weights;
    f.memory = transformer.encoder.forward(
        embed(source_embedding->forward(batch.src_ids, {B, S}), source_positions, 0),
        source_padding, weights ? &f.weights : nullptr);
    f.decoded = transformer.decoder.forward(
        embed(target_embedding->forward(batch.tgt_in, {B, T}), target_positions, 0), f.memory,
        target_padding, source_padding, weights ? &decoder_weights : nullptr);
    f.weights.insert(f.weights.end(), decoder_weights.begin(), decoder_weights.end());
    return f;
}

namespace {

void check_teacher_forcing(double teacher_forcing) {
    if (teacher_forcing != 1.0)
        throw Error(
            fmt::format("model.kind \"transformer\" trains with teacher forcing only "
                        "(every position at once): train.teacher_forcing must be 1, got {}",
                        teacher_forcing));
}

}  // namespace

// loss = mean over the real target tokens of cross-entropy(out(h_t), y_t), with h the decoder's
// output rows [N,E] of the N real target tokens, in the batch's order
LossOutput Transformer::loss_of_rows(const Tensor& h, const Batch& batch,
                                     double label_smoothing) const {
    std::vector<int32_t> targets;
    for (int32_t y : batch.tgt_out)
        if (y != Vocab::PAD) targets.push_back(y);
    LossOutput result;
    result.num_tokens = int64_t(targets.size());
    const Tensor weight = out ? out->weight : target_embedding->weight;
    const Tensor bias = out ? out->bias : out_bias;
    result.loss = linear_cross_entropy(h, weight, bias, targets, Vocab::PAD, Reduction::mean,
                                       real(label_smoothing), &result.num_correct);
    return result;
}

// The batch packed: sources [1,ΣS_i,E] and targets [1,ΣT_i,E] with no padding, each sentence
// attending to its own positions only (autograd/fused_dot_product_attention.h). The decoder's
// output rows are then exactly the real target tokens.
LossOutput Transformer::forward_loss(const Batch& batch, const LossOptions& options,
                                     ForwardRecord* record) const {
    check_teacher_forcing(options.teacher_forcing);
    if (record) return recorded_loss(batch, options.label_smoothing, *record);
    const double label_smoothing = options.label_smoothing;
    const Packing source = Packing::of_lengths(batch.src_lengths);
    const Packing target = Packing::of_lengths(batch.tgt_lengths);
    const Tensor memory = transformer.encoder.forward(
        embed_packed(*source_embedding, source_positions, batch.src_ids, batch.src_len, source),
        KeyMask::packed(source, source));
    const Tensor decoded = transformer.decoder.forward(
        embed_packed(*target_embedding, target_positions, batch.tgt_in, batch.tgt_len, target),
        memory, KeyMask::packed(target, target), KeyMask::packed(target, source));
    return loss_of_rows(reshape(decoded, {target.total(), config_.d_model}), batch,
                        label_smoothing);
}

// The padded pass of forward(), every tensor kept: x = √E · emb + P (the encoder's input),
// memory, every layer's weights, the decoder's output; loss = padded_loss. Its loss is the
// packed pass's to rounding (tests/unit/test_gradflow.cpp).
LossOutput Transformer::recorded_loss(const Batch& batch, double label_smoothing,
                                      ForwardRecord& record) const {
    const int64_t B = batch.batch_size, S = batch.src_len, T = batch.tgt_len;
    const Tensor source_padding = padding_mask(batch.src_lengths, S);
    {
        TapeScope scope("encoder");  // the explorer's tape: the source side
        record.source_embeddings = source_embedding->forward(batch.src_ids, {B, S});
        record.encoder_input = embed(record.source_embeddings, source_positions, 0);
        record.encoder_outputs = transformer.encoder.forward(record.encoder_input, source_padding,
                                                             &record.encoder_self_attention);
    }
    {
        TapeScope scope("decoder");
        std::vector<Tensor> weights;  // each layer's {self, cross}
        record.decoded = transformer.decoder.forward(
            embed(target_embedding->forward(batch.tgt_in, {B, T}), target_positions, 0),
            record.encoder_outputs, padding_mask(batch.tgt_lengths, T), source_padding, &weights);
        for (size_t l = 0; l + 1 < weights.size(); l += 2) {
            record.decoder_self_attention.push_back(weights[l]);
            record.decoder_cross_attention.push_back(weights[l + 1]);
        }
    }
    TapeScope scope("output");
    return padded_loss(record.decoded, batch, label_smoothing);
}

LossOutput Transformer::forward_loss_padded(const Batch& batch, double label_smoothing) const {
    return padded_loss(forward(batch).decoded, batch, label_smoothing);
}

LossOutput Transformer::padded_loss(const Tensor& decoded, const Batch& batch,
                                    double label_smoothing) const {
    std::vector<int32_t> rows;  // only the real target tokens reach the projection
    for (size_t i = 0; i < batch.tgt_out.size(); ++i)
        if (batch.tgt_out[i] != Vocab::PAD) rows.push_back(int32_t(i));
    return loss_of_rows(gather_rows(reshape(decoded, {-1, config_.d_model}), rows), batch,
                        label_smoothing);
}

std::unique_ptr<DecoderState> TransformerState::select(const std::vector<int32_t>& rows) const {
    auto selected = std::make_unique<TransformerState>(*this);  // step, flags; tensors below
    selected->memory_mask = select_rows(memory_mask, rows, "TransformerState");
    for (DecoderLayerCache& layer : selected->layers)
        for (KeysValues* kv : {&layer.memory, &layer.self})
            if (kv->keys.defined()) {
                kv->keys = select_rows(kv->keys, rows, "TransformerState");
                kv->values = select_rows(kv->values, rows, "TransformerState");
            }
    return selected;
}

std::unique_ptr<DecoderState> Transformer::start_decoding(const Batch& batch) const {
    return start_decoding_embedded(
        source_embedding->forward(batch.src_ids, {batch.batch_size, batch.src_len}),
        batch.src_lengths);
}

Tensor Transformer::source_token_embeddings(const std::vector<int32_t>& source_ids) const {
    return source_embedding->forward(source_ids, {int64_t(source_ids.size())}).detach();
}

std::unique_ptr<DecoderState> Transformer::start_decoding_embedded(
    const Tensor& embedded, const std::vector<int32_t>& lengths) const {
    if (embedded.rank() != 3 || embedded.size(2) != config_.d_model ||
        embedded.size(0) != int64_t(lengths.size()))
        throw Error(fmt::format(
            "Transformer::start_decoding_embedded: embedded {} for {} lengths: expected [{},S,{}]",
            embedded.shape().str(), lengths.size(), lengths.size(), config_.d_model));
    const Tensor source_padding = padding_mask(lengths, embedded.size(1));
    const Tensor memory =
        transformer.encoder.forward(embed(embedded, source_positions, 0), source_padding);
    auto state = std::make_unique<TransformerState>();
    state->memory_mask = source_padding;
    state->layers = transformer.decoder.start(memory);
    return state;
}

StepResult Transformer::step(const std::vector<int32_t>& previous_tokens,
                             DecoderState& base) const {
    TransformerState& state = state_of<TransformerState>(base, "Transformer::step");
    if (state.layers.size() != transformer.decoder.layers.size())
        throw Error(fmt::format("Transformer::step: a state of {} layers for a decoder of {}",
                                state.layers.size(), transformer.decoder.layers.size()));
    const int64_t N = int64_t(previous_tokens.size());
    if (state.rows() != N)
        throw Error(
            fmt::format("Transformer::step: {} tokens for a state of {} rows", N, state.rows()));
    const Tensor x =
        embed(target_embedding->forward(previous_tokens, {N, 1}), target_positions, state.step);
    StepResult result;
    Tensor top_cross;                                // [N,h,1,S]
    const bool layers = state.keep_layer_attention;  // every layer's weights: copies, on request
    const Tensor h = transformer.decoder.step(x, state.layers, state.memory_mask,
                                              layers ? &result.cross_attention : nullptr,
                                              layers ? &result.self_attention : nullptr,
                                              &top_cross);  // [N,1,E]
    result.log_probs = log_softmax(project(reshape(h, {N, config_.d_model})));
    const Tensor attention = average_heads(top_cross);  // [N,1,S]
    result.attention = reshape(attention, {N, attention.size(2)});
    ++state.step;
    return result;
}

}  // namespace seqgrad
