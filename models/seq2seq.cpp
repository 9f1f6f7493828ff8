#include "seqgrad/models/seq2seq.h"

#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/kernels.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/loss.h"

namespace seqgrad {
namespace {

std::unique_ptr<Attention> make_attention(const ModelConfig& c, int64_t key_size, Rng& rng) {
    const int64_t H = c.hidden_size;
    if (c.attention == "bahdanau")
        return std::make_unique<BahdanauAttention>(H, key_size, c.attention_size, rng);
    if (c.attention == "luong_dot")
        return std::make_unique<LuongAttention>(LuongScore::dot, H, key_size, rng, c.luong_scaled,
                                                c.attention_size);
    if (c.attention == "luong_general")
        return std::make_unique<LuongAttention>(LuongScore::general, H, key_size, rng,
                                                c.luong_scaled, c.attention_size);
    if (c.attention == "luong_concat")
        return std::make_unique<LuongAttention>(LuongScore::concat, H, key_size, rng,
                                                /*scaled=*/false, c.attention_size);
    return nullptr;  // "none"
}

int64_t decoder_input_size(const ModelConfig& c, int64_t key_size) {
    int64_t size = c.embedding_size;
    if (c.attention == "bahdanau") size += key_size;
    bool luong = c.attention.rfind("luong", 0) == 0;
    if (luong && c.input_feeding) size += c.hidden_size;
    return size;
}

}  // namespace

// ---- encoder ---------------------------------------------------------------------------------

Encoder::Encoder(const ModelConfig& c, int64_t source_vocab, Rng& rng)
    : embedding(source_vocab, c.embedding_size, Vocab::PAD, rng),
      gru(c.embedding_size, c.hidden_size, c.encoder_layers, c.bidirectional, real(c.dropout), rng),
      dropout(real(c.dropout), rng),
      hidden_size_(c.hidden_size),
      output_size_(c.bidirectional ? 2 * c.hidden_size : c.hidden_size),
      layers_(c.encoder_layers),
      bidirectional_(c.bidirectional) {
    register_module("embedding", embedding);
    register_module("gru", gru);
    register_module("dropout", dropout);  // no parameters, but eval() must reach it
    if (bidirectional_) {
        bridge = std::make_unique<Linear>(2 * c.hidden_size, c.hidden_size, true, rng);
        register_module("bridge", *bridge);
    }
}

// source ids [B,S] -> embedded [B,S,E] -> GRU -> outputs [B,S,K], final state [B,H]
EncodedSource Encoder::forward(const std::vector<int32_t>& source_ids, int64_t B, int64_t S,
                               const std::vector<int32_t>& lengths) const {
    EncodedSource out;
    out.embedded = embedding.forward(source_ids, {B, S});
    GRUOutput g = gru.forward(dropout.forward(out.embedded), lengths);
    out.outputs = g.outputs;
    out.step_states = g.step_states;
    const int64_t H = hidden_size_;
    // h_n is [layers * directions, B, H]; the decoder starts from the last layer's state.
    if (!bidirectional_) {
        out.final_state = reshape(slice(g.final_hidden, 0, layers_ - 1, layers_), {B, H});
    } else {
        Tensor forward_final =
            reshape(slice(g.final_hidden, 0, 2 * layers_ - 2, 2 * layers_ - 1), {B, H});
        Tensor backward_final =
            reshape(slice(g.final_hidden, 0, 2 * layers_ - 1, 2 * layers_), {B, H});
        out.final_state = tanh(bridge->forward(concat({forward_final, backward_final}, 1)));
    }
    out.mask = padding_mask(lengths, S);
    out.lengths = lengths;
    return out;
}

// ---- decoder ---------------------------------------------------------------------------------

Decoder::Decoder(const ModelConfig& c, int64_t target_vocab, int64_t key_size, Rng& rng)
    : embedding(target_vocab, c.embedding_size, Vocab::PAD, rng),
      cell(decoder_input_size(c, key_size), c.hidden_size, rng),
      attention(make_attention(c, key_size, rng)),
      dropout(real(c.dropout), rng),
      out(c.hidden_size, target_vocab, true, rng),
      attention_kind_(c.attention),
      input_feeding_(c.input_feeding) {
    register_module("embedding", embedding);
    register_module("cell", cell);
    register_module("dropout", dropout);
    if (attention) {
        register_module("attention", *attention);
        attention->use_mask = c.attention_mask;  // the study switches (layers/attention.h)
        attention->position_bias = c.position_bias;
        attention->position_ratio = c.position_bias_ratio;
    }
    if (attention_kind_.rfind("luong", 0) == 0) {
        combine = std::make_unique<Linear>(key_size + c.hidden_size, c.hidden_size, false, rng);
        register_module("combine", *combine);
    }
    register_module("out", out);
}

Tensor Decoder::project_keys(const Tensor& encoder_outputs) const {
    return attention ? attention->project_keys(encoder_outputs) : Tensor();
}

// With SEQGRAD_DISABLE=cached_keys the keys are projected again at every step (what the
// key-only half of the score costs when it is not computed once per source batch).
Decoder::Step Decoder::step(const Tensor& embedded, const Tensor& hidden, const Tensor& feed,
                            const EncodedSource& source, const Tensor& output_steps) const {
    EncodedSource projected;
    const EncodedSource* src = &source;
    if (attention && !switches().cached_keys) {
        projected = source;
        projected.keys_projected = attention->project_keys(source.outputs);
        src = &projected;
    }
    Step s;
    if (attention_kind_ == "bahdanau") {
        // attend with the previous state, then feed the context into the GRU
        AttentionResult a =
            attention->forward(hidden, src->outputs, src->keys_projected, src->mask, output_steps);
        s.hidden = cell.forward(concat({embedded, a.context}, 1), hidden);
        s.output_state = s.hidden;
        s.attention_weights = a.weights;
    } else if (attention) {
        // Luong: GRU step first, attend with the new state, ã = tanh(W_c [c; h])
        Tensor input = input_feeding_ ? concat({embedded, feed}, 1) : embedded;
        s.hidden = cell.forward(input, hidden);
        AttentionResult a = attention->forward(s.hidden, src->outputs, src->keys_projected,
                                               src->mask, output_steps);
        s.output_state = tanh(combine->forward(concat({a.context, s.hidden}, 1)));
        s.attention_weights = a.weights;
    } else {
        s.hidden = cell.forward(embedded, hidden);
        s.output_state = s.hidden;
    }
    return s;
}

// ---- the whole model -------------------------------------------------------------------------

Seq2Seq::Seq2Seq(const ModelConfig& c, int64_t source_vocab, int64_t target_vocab, Rng& rng)
    : encoder(c, source_vocab, rng),
      decoder(c, target_vocab, c.bidirectional ? 2 * c.hidden_size : c.hidden_size, rng),
      config_(c),
      source_vocab_(source_vocab),
      target_vocab_(target_vocab),
      rng_(rng) {
    register_module("encoder", encoder);
    register_module("decoder", decoder);
}

EncodedSource Seq2Seq::encode(const Batch& batch) const {
    EncodedSource source =
        encoder.forward(batch.src_ids, batch.batch_size, batch.src_len, batch.src_lengths);
    if (switches().cached_keys) source.keys_projected = decoder.project_keys(source.outputs);
    return source;
}

// A batch sorted by decreasing target length lets the decoder drop each sequence as soon as it
// has ended (see below); sorting rows changes neither the loss (a mean over tokens) nor its
// gradient, only the order of the sum.
LossOutput Seq2Seq::forward_loss(const Batch& batch, double teacher_forcing,
                                 double label_smoothing) const {
    if (is_sorted_by_target_length(batch))
        return forward_loss(batch, encode(batch), teacher_forcing, label_smoothing);
    const Batch sorted = sort_by_target_length(batch);
    return forward_loss(sorted, encode(sorted), teacher_forcing, label_smoothing);
}

// Step t runs on the rows 0..n_t-1 only, where rows n_t..B-1 are those whose target has ended
// before t (all of them when the batch is sorted by target length, only a finished tail
// otherwise): their states would only feed padded positions, which the loss ignores. The
// states, encoder outputs, keys and mask of the first n_t rows are views (no copy), so a step
// costs what its running sequences cost, and the outputs of all steps, [n_0 + ... + n_{T-1}, H],
// are exactly the real target tokens, which go through the output projection in one product.
LossOutput Seq2Seq::forward_loss(const Batch& batch, const EncodedSource& source,
                                 double teacher_forcing, double label_smoothing) const {
    const Switches& on = switches();
    DecodedSteps steps = decode_teacher_forced(batch, source, teacher_forcing);
    LossOutput result;
    result.num_tokens = count_targets(steps.targets, Vocab::PAD);
    if (on.one_projection && on.fused_loss && on.real_tokens) {
        // [Σ n_t, H], time-major; the projection to the vocabulary and the loss as one op
        // (autograd/fused_loss.h): the [Σ n_t, V] logits exist once instead of twice
        const Tensor states = steps.output_states.size() == 1 ? steps.output_states[0]
                                                              : concat(steps.output_states, 0);
        result.loss = linear_cross_entropy(
            decoder.dropout.forward(states), decoder.out.weight, decoder.out.bias, steps.targets,
            Vocab::PAD, Reduction::mean, real(label_smoothing), &result.num_correct);
        return result;
    }
    // The same loss with some of the optimisations off (autograd/switches.h): a sum over the
    // real tokens of every step's (or all steps') loss, divided by their number.
    Tensor total;
    if (on.one_projection) {
        total = loss_sum(concat(steps.output_states, 0), steps.targets, label_smoothing,
                         &result.num_correct);
    } else {
        size_t first = 0;
        for (const Tensor& states : steps.output_states) {
            const size_t n = size_t(states.size(0));
            const std::vector<int32_t> targets(steps.targets.begin() + long(first),
                                               steps.targets.begin() + long(first + n));
            first += n;
            Tensor step_loss = loss_sum(states, targets, label_smoothing, &result.num_correct);
            total = total.defined() ? add(total, step_loss) : step_loss;
        }
    }
    result.loss = mul(total, real(1.0 / double(std::max<int64_t>(result.num_tokens, 1))));
    return result;
}

Tensor Seq2Seq::loss_sum(const Tensor& states, const std::vector<int32_t>& targets,
                         double label_smoothing, int64_t* num_correct) const {
    Tensor x = states;
    std::vector<int32_t> kept = targets;
    if (switches().real_tokens) {  // only the rows of real target tokens reach the projection
        std::vector<int32_t> rows;
        kept.clear();
        for (size_t i = 0; i < targets.size(); ++i)
            if (targets[i] != Vocab::PAD) rows.push_back(int32_t(i)), kept.push_back(targets[i]);
        if (rows.size() != targets.size()) x = gather_rows(states, rows);
    }
    x = decoder.dropout.forward(x);
    int64_t correct = 0;
    Tensor loss;
    if (switches().fused_loss) {
        loss = linear_cross_entropy(x, decoder.out.weight, decoder.out.bias, kept, Vocab::PAD,
                                    Reduction::sum, real(label_smoothing), &correct);
    } else {
        const Tensor logits = decoder.out.forward(x);
        loss =
            cross_entropy_composed(logits, kept, Vocab::PAD, Reduction::sum, real(label_smoothing));
        const int64_t V = logits.size(1);
        for (size_t i = 0; i < kept.size(); ++i) {
            const real* row = logits.data() + int64_t(i) * V;
            correct += kept[i] != Vocab::PAD && std::max_element(row, row + V) - row == kept[i];
        }
    }
    *num_correct += correct;
    return loss;
}

// The decoder over the batch with teacher forcing: each step's output states and targets.
Seq2Seq::DecodedSteps Seq2Seq::decode_teacher_forced(const Batch& batch,
                                                     const EncodedSource& source,
                                                     double teacher_forcing) const {
    const int64_t B = batch.batch_size, T = batch.tgt_len, H = config_.hidden_size;
    // row_end[b] = 1 + the last step with a real target in row b; running[t] = n_t (all rows
    // at every step with SEQGRAD_DISABLE=shrink_batch).
    std::vector<int64_t> row_end(size_t(B), 0), running(size_t(T), 0);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
            if (batch.tgt_out[size_t(b * T + t)] != Vocab::PAD) row_end[size_t(b)] = t + 1;
    for (int64_t t = 0, n = B; t < T; ++t) {
        while (switches().shrink_batch && n > 0 && row_end[size_t(n - 1)] <= t) --n;
        running[size_t(t)] = n;
    }

    Rng& rng = thread_rng(rng_);
    Tensor hidden = source.final_state;
    Tensor feed = Tensor::zeros({B, H});
    EncodedSource running_source = source;  // views of the first n_t rows
    DecodedSteps steps;
    steps.output_states.reserve(size_t(T));
    steps.targets.reserve(size_t(batch.num_target_tokens));
    std::vector<int32_t> previous, predicted(size_t(B), Vocab::SOS);
    // every step multiplies by these (a kernel may sum each one's gradient over the steps in one
    // product: autograd/kernels.h)
    kernels::SharedOverStepsScope shared(
        {decoder.cell.weight_ih, decoder.cell.weight_hh,
         decoder.attention ? decoder.attention->query_weight() : Tensor(),
         decoder.combine ? decoder.combine->weight : Tensor()});
    for (int64_t t = 0; t < T; ++t) {
        const int64_t n = running[size_t(t)];
        if (n == 0) break;
        if (n != hidden.size(0)) {
            hidden = slice(hidden, 0, 0, n);
            feed = slice(feed, 0, 0, n);
            running_source.outputs = slice(source.outputs, 0, 0, n);
            running_source.mask = slice(source.mask, 0, 0, n);
            if (source.keys_projected.defined())
                running_source.keys_projected = slice(source.keys_projected, 0, 0, n);
        }
        previous.resize(size_t(n));
        for (int64_t b = 0; b < n; ++b) {
            bool gold = t == 0 || teacher_forcing >= 1 || rng.uniform() < teacher_forcing;
            previous[size_t(b)] = gold ? batch.tgt_in[size_t(b * T + t)] : predicted[size_t(b)];
            steps.targets.push_back(batch.tgt_out[size_t(b * T + t)]);
        }
        Tensor embedded = decoder.dropout.forward(decoder.embedding.forward(previous, {n}));
        const Tensor output_steps =
            config_.position_bias != 0 ? Tensor::full({n}, real(t)) : Tensor();
        Decoder::Step s = decoder.step(embedded, hidden, feed, running_source, output_steps);
        hidden = s.hidden;
        feed = s.output_state;
        steps.output_states.push_back(s.output_state);
        if (teacher_forcing < 1) {  // the next input may be this step's own prediction
            NoGradGuard no_grad;
            Tensor logits = decoder.out.forward(s.output_state);
            const int64_t V = logits.size(1);
            for (int64_t b = 0; b < n; ++b) {
                const real* row = logits.data() + b * V;
                predicted[size_t(b)] = int32_t(std::max_element(row, row + V) - row);
            }
        }
    }
    return steps;
}

DecoderState Seq2Seq::initial_state(const EncodedSource& source) const {
    const int64_t B = source.outputs.size(0), H = config_.hidden_size;
    DecoderState state;
    Tensor keys = source.keys_projected.defined() ? source.keys_projected : Tensor::zeros({B, 1});
    state.tensors = {source.final_state, Tensor::zeros({B, H}), source.outputs, keys,
                     source.mask,        Tensor::zeros({B})};
    return state;
}

StepResult Seq2Seq::step(const std::vector<int32_t>& previous_tokens, DecoderState& state) const {
    const int64_t N = state.rows();
    if (int64_t(previous_tokens.size()) != N)
        throw Error(fmt::format("Seq2Seq::step: {} tokens for {} rows", previous_tokens.size(), N));
    EncodedSource source;
    source.outputs = state.tensors[2];
    source.keys_projected = decoder.attention ? state.tensors[3] : Tensor();
    source.mask = state.tensors[4];
    Tensor embedded = decoder.embedding.forward(previous_tokens, {N});
    Decoder::Step s =
        decoder.step(embedded, state.tensors[0], state.tensors[1], source, state.tensors[5]);
    state.tensors[0] = s.hidden;
    state.tensors[1] = s.output_state;
    state.tensors[5] = add(state.tensors[5], real(1));  // the next output step of every row
    StepResult result;
    result.log_probs = log_softmax(decoder.out.forward(s.output_state));
    result.attention = s.attention_weights;
    return result;
}

}  // namespace seqgrad
