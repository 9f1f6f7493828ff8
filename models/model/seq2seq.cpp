#include "seqgrad/models/model/seq2seq.h"

#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/loss.h"

namespace seqgrad {
namespace {

std::unique_ptr<Attention> make_attention_kind(const ModelConfig& c, bool fused, int64_t key_size,
                                               Rng& rng) {
    const int64_t H = c.hidden_size;
    if (c.attention == "bahdanau")
        return std::make_unique<BahdanauAttention>(H, key_size, c.attention_size, rng,
                                                   c.attention_bias, fused);
    if (c.attention == "luong_dot")
        return std::make_unique<LuongAttention>(LuongScore::dot, H, key_size, rng, c.luong_scaled,
                                                c.attention_size, fused);
    if (c.attention == "luong_general")
        return std::make_unique<LuongAttention>(LuongScore::general, H, key_size, rng,
                                                c.luong_scaled, c.attention_size, fused);
    if (c.attention == "luong_concat")
        return std::make_unique<LuongAttention>(LuongScore::concat, H, key_size, rng,
                                                /*scaled=*/false, c.attention_size, fused);
    return nullptr;  // "none"
}

// model.attention's layer, with model.coverage turned on in it
std::unique_ptr<Attention> make_attention(const ModelConfig& c, bool fused, int64_t key_size,
                                          Rng& rng) {
    std::unique_ptr<Attention> attention = make_attention_kind(c, fused, key_size, rng);
    const Coverage coverage = parse_coverage(c.coverage);
    if (coverage != Coverage::none) {
        if (!attention)
            throw Error(fmt::format(
                "Seq2Seq: model.coverage \"{}\" needs an attention (model.attention is \"none\")",
                c.coverage));
        attention->set_coverage(coverage, c.coverage_weight, rng);
    }
    return attention;
}

int64_t decoder_input_size(const ModelConfig& c, int64_t key_size) {
    int64_t size = c.embedding_size;
    if (c.attention == "bahdanau") size += key_size;
    bool luong = c.attention.rfind("luong", 0) == 0;
    if (luong && c.input_feeding) size += c.hidden_size;
    return size;
}

// what the output projection reads: o_t [H], or [o_t; c_t; emb(y_{t-1})] (deep)
int64_t projection_input_size(const ModelConfig& c, int64_t key_size) {
    if (c.output_layer != "deep") return c.hidden_size;
    return c.hidden_size + (c.attention == "none" ? 0 : key_size) + c.embedding_size;
}

// layer 0 reads the decoder's input, layer l > 0 the state of layer l-1
std::vector<std::unique_ptr<RecurrentCell>> make_decoder_cells(const ModelConfig& c, bool fused,
                                                               int64_t key_size, Rng& rng) {
    std::vector<std::unique_ptr<RecurrentCell>> cells;
    for (int l = 0; l < c.decoder_layers; ++l) {
        const int64_t in = l == 0 ? decoder_input_size(c, key_size) : c.hidden_size;
        cells.push_back(make_cell(parse_cell_type(c.cell), in, c.hidden_size, rng, fused));
    }
    return cells;
}

bool has_bridge(const ModelConfig& c) {
    return c.bidirectional || c.encoder_size() != c.hidden_size;
}

}  // namespace

// ---- encoder ---------------------------------------------------------------------------------

Encoder::Encoder(const ModelConfig& c, int64_t source_vocab, Rng& rng, FusedLayers fused)
    : embedding(source_vocab, c.embedding_size, Vocab::PAD, rng),
      recurrent(make_recurrent(parse_cell_type(c.cell), c.embedding_size, c.encoder_size(),
                               c.encoder_layers, c.bidirectional, real(c.dropout), rng,
                               fused.cells)),
      dropout(real(c.dropout), rng),
      hidden_size_(c.encoder_size()),
      output_size_(c.bidirectional ? 2 * c.encoder_size() : c.encoder_size()),
      layers_(c.encoder_layers),
      decoder_layers_(c.decoder_layers),
      bidirectional_(c.bidirectional) {
    register_module("embedding", embedding);
    register_module(cell_type_name(recurrent->type()), *recurrent);
    register_module("dropout", dropout);  // no parameters, but eval() must reach it
    if (has_bridge(c)) {
        bridge = std::make_unique<Linear>(output_size_, c.hidden_size, true, rng);
        register_module("bridge", *bridge);
        if (recurrent->type() == CellType::lstm) {
            cell_bridge = std::make_unique<Linear>(output_size_, c.hidden_size, true, rng);
            register_module("cell_bridge", *cell_bridge);
        }
    }
}

// source ids [B,S] -> embedded [B,S,E] -> encoder -> outputs [B,S,K], decoder initial states
EncodedSource Encoder::forward(const std::vector<int32_t>& source_ids, int64_t B, int64_t S,
                               const std::vector<int32_t>& lengths) const {
    return forward_embedded(embedding.forward(source_ids, {B, S}), lengths);
}

EncodedSource Encoder::forward_embedded(const Tensor& embedded,
                                        const std::vector<int32_t>& lengths) const {
    if (embedded.rank() != 3 || embedded.size(0) != int64_t(lengths.size()))
        throw Error(
            fmt::format("Encoder::forward_embedded: embeddings of shape {} for {} lengths "
                        "(expected [B,S,E] with B = {})",
                        embedded.shape().str(), lengths.size(), lengths.size()));
    const int64_t B = embedded.size(0), S = embedded.size(1);
    EncodedSource out;
    out.embedded = embedded;
    out.input = dropout.forward(out.embedded);
    RecurrentOutput r = recurrent->forward(out.input, lengths);
    out.outputs = r.outputs;
    out.step_states = r.step_states;
    out.initial_state = decoder_initial_state(r, B);
    out.mask = padding_mask(lengths, S);
    out.lengths = lengths;
    return out;
}

// Decoder layer l starts from encoder layer l's final state when both stacks have as many
// layers, else every decoder layer from the encoder's top layer. final_hidden and final_cell
// are [L*D,B,He] (PyTorch's h_n, c_n); with a bridge, h_0 = tanh(bridge([h_fwd; h_bwd])) and
// c_0 = cell_bridge([c_fwd; c_bwd]) (one bridge of each for all layers).
std::vector<RecurrentState> Encoder::decoder_initial_state(const RecurrentOutput& encoded,
                                                           int64_t B) const {
    const int D = bidirectional_ ? 2 : 1;
    const int64_t He = hidden_size_;
    auto layer_state = [&](const Tensor& final, int layer) {
        std::vector<Tensor> directions;
        for (int d = 0; d < D; ++d)
            directions.push_back(
                reshape(slice(final, 0, layer * D + d, layer * D + d + 1), {B, He}));
        return D == 1 ? directions[0] : concat(directions, 1);  // [B, D*He]
    };
    std::vector<RecurrentState> state(static_cast<size_t>(decoder_layers_));
    for (int l = 0; l < decoder_layers_; ++l) {
        if (decoder_layers_ != layers_ && l > 0) {  // every layer from the top one: computed once
            state[size_t(l)] = state[0];
            continue;
        }
        const int from = decoder_layers_ == layers_ ? l : layers_ - 1;
        Tensor h = layer_state(encoded.final_hidden, from);
        state[size_t(l)].h = bridge ? tanh(bridge->forward(h)) : h;
        if (encoded.final_cell.defined()) {
            Tensor c = layer_state(encoded.final_cell, from);
            state[size_t(l)].c = cell_bridge ? cell_bridge->forward(c) : c;
        }
    }
    return state;
}

// ---- decoder ---------------------------------------------------------------------------------

Decoder::Decoder(const ModelConfig& c, int64_t target_vocab, int64_t key_size, Rng& rng,
                 FusedLayers fused)
    : embedding(target_vocab, c.embedding_size, Vocab::PAD, rng),
      cells(make_decoder_cells(c, fused.cells, key_size, rng)),
      attention(make_attention(c, fused.attention, key_size, rng)),
      dropout(real(c.dropout), rng),
      out(projection_input_size(c, key_size), target_vocab, true, rng),
      attention_kind_(c.attention),
      input_feeding_(c.input_feeding),
      deep_output_(c.output_layer == "deep") {
    register_module("embedding", embedding);
    for (size_t l = 0; l < cells.size(); ++l)
        register_module(l == 0 ? "cell" : fmt::format("cell_l{}", l), *cells[l]);
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

std::vector<Tensor> Decoder::step_weights() const {
    std::vector<Tensor> weights;
    for (const auto& cell : cells)
        for (const Tensor& w : cell->step_weights()) weights.push_back(w);
    if (attention) weights.push_back(attention->query_weight());
    if (combine) weights.push_back(combine->weight);
    return weights;
}

// layer 0 reads `input`, layer l > 0 reads layer l-1's new h (after dropout, as PyTorch's
// stacked recurrent layers do)
std::vector<RecurrentState> Decoder::stack_step(const Tensor& input,
                                                const std::vector<RecurrentState>& state) const {
    if (state.size() != cells.size())
        throw Error(fmt::format("Decoder::step: {} layer states for a decoder of {} layers",
                                state.size(), cells.size()));
    std::vector<RecurrentState> next(cells.size());
    Tensor x = input;
    for (size_t l = 0; l < cells.size(); ++l) {
        next[l] = cells[l]->step(x, state[l]);
        if (l + 1 < cells.size()) x = dropout.forward(next[l].h);
    }
    return next;
}

// The attention reads source.keys_projected, the keys' half of the score, projected once per
// source batch (Seq2Seq::encode) and not again at every step.
Decoder::Step Decoder::step(const Tensor& embedded, const std::vector<RecurrentState>& state,
                            const Tensor& feed, const EncodedSource& source,
                            const Tensor& output_steps, const Tensor& coverage) const {
    Step s;
    Tensor context;
    if (attention_kind_ == "bahdanau") {
        // attend with the top layer's previous state, then feed the context into layer 0
        AttentionResult a =
            attention->forward(state.back().h, source.outputs, source.keys_projected, source.mask,
                               output_steps, coverage);
        s.state = stack_step(concat({embedded, a.context}, 1), state);
        s.output_state = s.top_hidden();
        s.attention_weights = a.weights;
        s.attention_scores = a.scores;
        context = a.context;
    } else if (attention) {
        // Luong: the stack steps first, attend with the top layer's new state, ã = tanh(W_c [c; h])
        Tensor input = input_feeding_ ? concat({embedded, feed}, 1) : embedded;
        s.state = stack_step(input, state);
        AttentionResult a =
            attention->forward(s.top_hidden(), source.outputs, source.keys_projected, source.mask,
                               output_steps, coverage);
        s.output_state = tanh(combine->forward(concat({a.context, s.top_hidden()}, 1)));
        s.attention_weights = a.weights;
        s.attention_scores = a.scores;
        context = a.context;
    } else {
        s.state = stack_step(embedded, state);
        s.output_state = s.top_hidden();
    }
    // c_{t+1} = c_t + α_t
    if (has_coverage())
        s.coverage = coverage.defined() ? add(coverage, s.attention_weights) : s.attention_weights;
    // deep output (Bahdanau et al. 2015): the projection also reads c_t and emb(y_{t-1})
    s.projection_input = !deep_output_       ? s.output_state
                         : context.defined() ? concat({s.output_state, context, embedded}, 1)
                                             : concat({s.output_state, embedded}, 1);
    return s;
}

const Tensor& Decoder::attention_query(const std::vector<RecurrentState>& before,
                                       const Step& s) const {
    return attention_kind_ == "bahdanau" ? before.back().h : s.top_hidden();
}

void Decoder::record_step(const Step& s, const std::vector<RecurrentState>& before,
                          const Tensor& keys_projected, ForwardRecord& record) const {
    if (s.attention_weights.defined()) {
        record.attention.push_back(s.attention_weights);
        record.attention_scores.push_back(s.attention_scores);
    }
    record.decoder_states.push_back(s.top_hidden());
    record.decoder_outputs.push_back(s.projection_input);
    if (attention) {
        Tensor x = attention->pre_activations(attention_query(before, s), keys_projected);
        if (x.defined()) record.attention_pre_activations.push_back(x);
    }
}

// ---- the whole model -------------------------------------------------------------------------

Seq2Seq::Seq2Seq(const ModelConfig& c, int64_t source_vocab, int64_t target_vocab, Rng& rng,
                 FusedLayers fused)
    : encoder(c, source_vocab, rng, fused),
      decoder(c, target_vocab, encoder.output_size(), rng, fused),
      config_(c),
      target_vocab_(target_vocab),
      rng_(rng) {
    register_module("encoder", encoder);
    register_module("decoder", decoder);
    if (c.init == "normal") init_normal(rng);
}

// As the PyTorch tutorial of this model does: every parameter whose name says "weight" from
// N(0, 0.01), every other (the biases) 0. The embeddings' PAD rows stay zero (they never get a
// gradient, Embedding's padding_idx).
void Seq2Seq::init_normal(Rng& rng) {
    for (auto& [name, p] : named_parameters()) {
        const std::string leaf = name.substr(name.find_last_of('.') + 1);
        if (leaf.find("weight") != std::string::npos) {
            init::normal(p, 0.0, 0.01, rng);
        } else {
            std::fill(p.data(), p.data() + p.numel(), real(0));
        }
    }
    for (Embedding* e : {&encoder.embedding, &decoder.embedding})
        std::fill(e->weight.data() + int64_t(Vocab::PAD) * e->embedding_dim(),
                  e->weight.data() + int64_t(Vocab::PAD + 1) * e->embedding_dim(), real(0));
}

EncodedSource Seq2Seq::encode(const Batch& batch, bool in_order) const {
    if (in_order && encoder.recurrent->sort_by_length) {
        // sort_by_length off for this pass (it is speed, not maths: layers/recurrent.h)
        struct Restore {
            Recurrent& recurrent;
            ~Restore() { recurrent.sort_by_length = true; }
        } restore{*encoder.recurrent};
        encoder.recurrent->sort_by_length = false;
        return encode(batch);
    }
    EncodedSource source =
        encoder.forward(batch.src_ids, batch.batch_size, batch.src_len, batch.src_lengths);
    source.keys_projected = decoder.project_keys(source.outputs);  // once per batch
    return source;
}

EncodedSource Seq2Seq::encode_embedded(const Tensor& embedded,
                                       const std::vector<int32_t>& lengths) const {
    EncodedSource source = encoder.forward_embedded(embedded, lengths);
    source.keys_projected = decoder.project_keys(source.outputs);  // once per batch
    return source;
}

// A batch sorted by decreasing target length lets the decoder drop each sequence as soon as it
// has ended (decode_teacher_forced); sorting rows changes neither the loss (a mean over tokens)
// nor its gradient, only the order of the sum.
LossOutput Seq2Seq::forward_loss(const Batch& batch, const LossOptions& options,
                                 ForwardRecord* record) const {
    if (record) {  // the batch's own order, the encoder's steps its own tensors
        EncodedSource source;
        {
            TapeScope scope("encoder");  // the explorer's tape: the source side
            source = encode(batch, /*in_order=*/true);
        }
        record->source_embeddings = source.embedded;
        record->encoder_input = source.input;
        record->encoder_outputs = source.outputs;
        record->encoder_step_states = source.step_states;
        TapeScope scope("output");  // the decoder's steps label their own ops
        return forward_loss(batch, source, options, record);
    }
    if (is_sorted_by_target_length(batch)) return forward_loss(batch, encode(batch), options);
    const Batch sorted = sort_by_target_length(batch);
    return forward_loss(sorted, encode(sorted), options);
}

// encode -> teacher-forced decode -> the mean cross-entropy over the N real target tokens:
//   h    = the decoder's output states of all steps, [N, *] (what `out` reads)
//   loss = (1/N) Σ_i −log softmax(out(h_i))[y_i] = cross_entropy(decoder.out(h), y)
// computed by linear_cross_entropy (autograd/fused_loss.h): the projection to the vocabulary
// and the loss as one op, so the [N, V] logits exist once, and the backward is two products.
// The composed twin, cross_entropy_composed(decoder.out.forward(h), y) (layers/loss.h), gives
// the same numbers.
LossOutput Seq2Seq::forward_loss(const Batch& batch, const EncodedSource& source,
                                 const LossOptions& options, ForwardRecord* record) const {
    const DecodedSteps decoded = decode_teacher_forced(batch, source, options, record);
    LossOutput result;
    result.num_tokens = count_targets(decoded.targets, Vocab::PAD);
    result.loss =
        linear_cross_entropy(decoder.dropout.forward(decoded.states), decoder.out.weight,
                             decoder.out.bias, decoded.targets, Vocab::PAD, Reduction::mean,
                             real(options.label_smoothing), &result.num_correct);
    // + λ (1/N) Σ_t Σ_s min(α_{t,s}, c_{t,s}): See et al.'s coverage loss, per token as the CE
    if (decoded.coverage_overlap.defined() && result.num_tokens > 0)
        result.loss = add(
            result.loss,
            mul(decoded.coverage_overlap, real(options.coverage_loss / double(result.num_tokens))));
    return result;
}

namespace {

// n_t of every step t: how many leading rows still have a target at t. Rows n_t..B-1 have all
// ended before t: every row has, when the batch is sorted by decreasing target length; in
// another order only a finished tail of the batch counts (the other finished rows run on, and
// their PAD targets are ignored by the loss).
std::vector<int64_t> running_rows(const Batch& batch) {
    const int64_t B = batch.batch_size, T = batch.tgt_len;
    std::vector<int64_t> row_end(size_t(B), 0), running(size_t(T), 0);  // row_end: 1 + last t
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
            if (batch.tgt_out[size_t(b * T + t)] != Vocab::PAD) row_end[size_t(b)] = t + 1;
    for (int64_t t = 0, n = B; t < T; ++t) {
        while (n > 0 && row_end[size_t(n - 1)] <= t) --n;
        running[size_t(t)] = n;
    }
    return running;
}

// Keeps the first n rows of the decoder's state, its feed and the source it attends over:
// slices of the leading dim, which are views (no copy).
void keep_first_rows(int64_t n, const EncodedSource& source, std::vector<RecurrentState>& state,
                     Tensor& feed, Tensor& coverage, EncodedSource& rows) {
    for (RecurrentState& layer : state) {
        layer.h = slice(layer.h, 0, 0, n);
        if (layer.c.defined()) layer.c = slice(layer.c, 0, 0, n);
    }
    feed = slice(feed, 0, 0, n);
    if (coverage.defined()) coverage = slice(coverage, 0, 0, n);
    rows.outputs = slice(source.outputs, 0, 0, n);
    rows.mask = slice(source.mask, 0, 0, n);
    if (source.keys_projected.defined())
        rows.keys_projected = slice(source.keys_projected, 0, 0, n);
}

// predicted[b] = argmax of out(projection_input[b]) (no graph): a row's own guess
void predict(const Linear& out, const Tensor& projection_input, std::vector<int32_t>& predicted) {
    NoGradGuard no_grad;
    const Tensor logits = out.forward(projection_input);
    const int64_t V = logits.size(1);
    for (int64_t b = 0; b < logits.size(0); ++b) {
        const real* row = logits.data() + b * V;
        predicted[size_t(b)] = int32_t(std::max_element(row, row + V) - row);
    }
}

// Σ_b Σ_s min(α[b,s], c[b,s]) over the rows b whose target is real (targets[b] != PAD):
// min(α, c) = α − relu(α − c); at a tie α = c the gradient goes to α (relu'(0) = 0).
Tensor coverage_overlap(const Tensor& weights, const Tensor& coverage, const int32_t* targets) {
    const int64_t n = weights.size(0);
    Tensor per_row = sum(sub(weights, relu(sub(weights, coverage))), 1);  // [n]
    bool all_real = true;
    for (int64_t b = 0; b < n; ++b) all_real = all_real && targets[b] != Vocab::PAD;
    if (!all_real) {  // rows that run on past their end (an unsorted batch) count 0
        Tensor real_rows = Tensor::empty({n});
        for (int64_t b = 0; b < n; ++b) real_rows.data()[b] = targets[b] != Vocab::PAD;
        per_row = mul(per_row, real_rows);
    }
    return sum(per_row);
}

}  // namespace

// The decoder over the batch, step by step, with teacher forcing. Step t runs on the rows
// 0..n_t-1 only (running_rows): the states of the rows whose target has ended would only feed
// padded positions, which the loss ignores. So a step costs what its running sequences cost,
// and the output states of all steps, [n_0 + ... + n_{T-1}, *], are (for a batch sorted by
// target length) exactly the real target tokens, which go through the output projection in one
// product.
Seq2Seq::DecodedSteps Seq2Seq::decode_teacher_forced(const Batch& batch,
                                                     const EncodedSource& source,
                                                     const LossOptions& options,
                                                     ForwardRecord* record) const {
    const double teacher_forcing = options.teacher_forcing;
    const int64_t B = batch.batch_size, T = batch.tgt_len;
    const std::vector<int64_t> running = running_rows(batch);
    Rng& rng = thread_rng(rng_);
    std::vector<RecurrentState> state = source.initial_state;
    Tensor feed = Tensor::zeros({B, config_.hidden_size});  // Luong's ã_{t-1} (input feeding)
    EncodedSource rows = source;                            // the running rows' source
    Tensor coverage;  // c_t [n_t, S] (model.coverage; undefined = 0 before the first step)
    const bool with_coverage_loss =
        decoder.has_coverage() && options.coverage_loss > 0 && training();
    std::vector<Tensor> output_states;  // one [n_t, *] per step
    DecodedSteps decoded;
    decoded.targets.reserve(size_t(batch.num_target_tokens));
    std::vector<int32_t> previous, predicted(size_t(B), Vocab::SOS);
    // every step multiplies by these (a kernel may sum each one's gradient over the steps in one
    // product: autograd/kernels/kernels.h)
    kernels::SharedOverStepsScope shared(decoder.step_weights());
    for (int64_t t = 0; t < T && running[size_t(t)] > 0; ++t) {
        TapeScope scope("decoder", t);  // the explorer's tape: these ops are step t's
        const int64_t n = running[size_t(t)];
        if (n != feed.size(0)) keep_first_rows(n, source, state, feed, coverage, rows);
        previous.resize(size_t(n));
        for (int64_t b = 0; b < n; ++b) {
            const bool gold = t == 0 || teacher_forcing >= 1 || rng.uniform() < teacher_forcing;
            previous[size_t(b)] = gold ? batch.tgt_in[size_t(b * T + t)] : predicted[size_t(b)];
            decoded.targets.push_back(batch.tgt_out[size_t(b * T + t)]);
        }
        const Tensor embedded = decoder.dropout.forward(decoder.embedding.forward(previous, {n}));
        const Tensor output_steps =
            config_.position_bias != 0 ? Tensor::full({n}, real(t)) : Tensor();
        const Decoder::Step s = decoder.step(embedded, state, feed, rows, output_steps, coverage);
        if (with_coverage_loss && coverage.defined()) {  // c_0 = 0: nothing overlaps at t = 0
            const Tensor overlap =
                coverage_overlap(s.attention_weights, coverage,
                                 &decoded.targets[decoded.targets.size() - size_t(n)]);
            decoded.coverage_overlap = decoded.coverage_overlap.defined()
                                           ? add(decoded.coverage_overlap, overlap)
                                           : overlap;
        }
        if (record) decoder.record_step(s, state, rows.keys_projected, *record);
        state = s.state;
        feed = s.output_state;
        coverage = s.coverage;
        output_states.push_back(s.projection_input);
        // the next input may be this step's own prediction
        if (teacher_forcing < 1) predict(decoder.out, s.projection_input, predicted);
    }
    decoded.states = output_states.size() == 1 ? output_states[0] : concat(output_states, 0);
    return decoded;
}

}  // namespace seqgrad
