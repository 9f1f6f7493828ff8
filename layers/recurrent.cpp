// The recurrent layers' one driver (Recurrent::forward), the cells' step, and the dispatch from a
// cell type to its ops. The cells' maths is in autograd/fused_{rnn,gru,lstm}.h.
#include "seqgrad/layers/recurrent.h"

#include <fmt/format.h>

#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/autograd/fused_lstm.h"
#include "seqgrad/autograd/fused_rnn.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"
#include "seqgrad/layers/gru.h"
#include "seqgrad/layers/length_order.h"
#include "seqgrad/layers/lstm.h"
#include "seqgrad/layers/rnn.h"

namespace seqgrad {

// ---- cell types ----------------------------------------------------------------------------

namespace {

struct CellInfo {
    CellType type;
    const char* name;        // in configs: "lstm"
    const char* layer_name;  // in errors: "LSTM"
    int64_t gates;           // per hidden unit
};
const CellInfo kCells[] = {{CellType::rnn, "rnn", "RNN", 1},
                           {CellType::gru, "gru", "GRU", 3},
                           {CellType::lstm, "lstm", "LSTM", 4}};

const CellInfo& info(CellType type) {
    for (const CellInfo& c : kCells)
        if (c.type == type) return c;
    throw Error(fmt::format("not a CellType: {}", int(type)));
}

}  // namespace

CellType parse_cell_type(const std::string& name) {
    for (const CellInfo& c : kCells)
        if (name == c.name) return c.type;
    throw Error(
        fmt::format("unknown cell type '{}' (expected \"rnn\", \"gru\" or \"lstm\")", name));
}

const char* cell_type_name(CellType type) {
    return info(type).name;
}

const char* cell_layer_name(CellType type) {
    return info(type).layer_name;
}

int64_t cell_gate_count(CellType type) {
    return info(type).gates;
}

namespace {

// hc [2,B,H] (lstm_cell*'s result) -> (h = hc[0], c = hc[1]), both views of hc
RecurrentState split_lstm_state(const Tensor& hc) {
    const int64_t B = hc.size(1), H = hc.size(2);
    return {reshape(slice(hc, 0, 0, 1), {B, H}), reshape(slice(hc, 0, 1, 2), {B, H})};
}

}  // namespace

// ---- one step --------------------------------------------------------------------------------

RecurrentState cell_step_composed(CellType type, const CellWeights& w, const Tensor& x,
                                  const RecurrentState& s, const Tensor& step_mask) {
    switch (type) {
        case CellType::rnn:
            return {rnn_cell_composed(x, s.h, w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh,
                                      step_mask),
                    Tensor()};
        case CellType::gru:
            return {gru_cell_composed(x, s.h, w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh,
                                      step_mask),
                    Tensor()};
        case CellType::lstm:
            return split_lstm_state(lstm_cell_composed(x, s.h, s.c, w.weight_ih, w.weight_hh,
                                                       w.bias_ih, w.bias_hh, step_mask));
    }
    throw Error("cell_step_composed: not a CellType");
}

RecurrentState cell_step_fused(CellType type, const CellWeights& w, const Tensor& all_input_gates,
                               int64_t t, const RecurrentState& s, const Tensor& step_mask) {
    switch (type) {
        case CellType::rnn:
            return {rnn_cell_step(all_input_gates, t, s.h, w.weight_hh, w.bias_hh, step_mask),
                    Tensor()};
        case CellType::gru:
            return {gru_cell_step(all_input_gates, t, s.h, w.weight_hh, w.bias_hh, step_mask),
                    Tensor()};
        case CellType::lstm:
            return split_lstm_state(
                lstm_cell_step(all_input_gates, t, s.h, s.c, w.weight_hh, w.bias_hh, step_mask));
    }
    throw Error("cell_step_fused: not a CellType");
}

// ---- RecurrentCell ---------------------------------------------------------------------------

RecurrentCell::RecurrentCell(CellType type, int64_t input_size, int64_t hidden_size, Rng& rng,
                             bool fused)
    : use_fused(fused), type_(type) {
    if (input_size < 1 || hidden_size < 1)
        throw Error(fmt::format("{}Cell: input_size {} and hidden_size {} must be >= 1",
                                cell_layer_name(type), input_size, hidden_size));
    const int64_t H = hidden_size, G = cell_gate_count(type) * H;
    weight_ih = register_parameter("weight_ih", Tensor::empty({G, input_size}));
    weight_hh = register_parameter("weight_hh", Tensor::empty({G, H}));
    bias_ih = register_parameter("bias_ih", Tensor::empty({G}));
    bias_hh = register_parameter("bias_hh", Tensor::empty({G}));
    for (Tensor* p : {&weight_ih, &weight_hh, &bias_ih, &bias_hh}) init::uniform_fan_in(*p, H, rng);
}

std::string RecurrentCell::describe() const {
    return fmt::format("{}Cell({} -> {})", cell_layer_name(type_), input_size(), hidden_size());
}

RecurrentState RecurrentCell::zero_state(int64_t batch) const {
    RecurrentState s{Tensor::zeros({batch, hidden_size()}), Tensor()};
    if (type_ == CellType::lstm) s.c = Tensor::zeros({batch, hidden_size()});
    return s;
}

// x [B,in], state [B,H] -> state' [B,H]: gi = x W_ihᵀ + b_ih (linear), then the fused cell
RecurrentState RecurrentCell::step(const Tensor& x, const RecurrentState& state,
                                   const Tensor& step_mask) const {
    if (!x.defined() || x.rank() != 2 || x.size(1) != input_size())
        throw Error(fmt::format("{}: x {} must be [B, {}]", describe(),
                                x.defined() ? x.shape().str() : "undefined", input_size()));
    if ((type_ == CellType::lstm) != state.c.defined())
        throw Error(fmt::format("{}: the state must {}have a cell state c", describe(),
                                type_ == CellType::lstm ? "" : "not "));
    if (!use_fused) return cell_step_composed(type_, weights(), x, state, step_mask);
    Tensor input_gates = linear(x, weight_ih, bias_ih);  // [B,G]
    return cell_step_fused(type_, weights(), reshape(input_gates, {x.size(0), 1, -1}), 0, state,
                           step_mask);
}

std::unique_ptr<RecurrentCell> make_cell(CellType type, int64_t input_size, int64_t hidden_size,
                                         Rng& rng, bool fused) {
    switch (type) {
        case CellType::rnn:
            return std::make_unique<RNNCell>(input_size, hidden_size, rng, fused);
        case CellType::gru:
            return std::make_unique<GRUCell>(input_size, hidden_size, rng, fused);
        case CellType::lstm:
            return std::make_unique<LSTMCell>(input_size, hidden_size, rng, fused);
    }
    throw Error("make_cell: not a CellType");
}

// ---- Recurrent -------------------------------------------------------------------------------

Recurrent::Recurrent(CellType type, int64_t input_size, int64_t hidden_size, int num_layers,
                     bool bidirectional, real dropout_between_layers, Rng& rng, bool fused)
    : use_fused(fused),
      type_(type),
      input_size_(input_size),
      hidden_size_(hidden_size),
      num_layers_(num_layers),
      directions_(bidirectional ? 2 : 1),
      dropout_(dropout_between_layers),
      rng_(rng) {
    if (input_size < 1 || hidden_size < 1 || num_layers < 1)
        throw Error(
            fmt::format("{}: input_size {}, hidden_size {} and num_layers {} must all be >= 1",
                        cell_layer_name(type), input_size, hidden_size, num_layers));
    if (!(dropout_between_layers >= 0 && dropout_between_layers < 1))
        throw Error(fmt::format("{}: dropout_between_layers must be in [0, 1), got {}",
                                cell_layer_name(type), dropout_between_layers));
    const int64_t H = hidden_size, G = cell_gate_count(type) * H;
    for (int layer = 0; layer < num_layers; ++layer)
        for (int dir = 0; dir < directions_; ++dir) {
            const int64_t in = layer == 0 ? input_size : directions_ * H;
            const std::string suffix = fmt::format("_l{}{}", layer, dir == 1 ? "_reverse" : "");
            Weights w;
            w.weight_ih = register_parameter("weight_ih" + suffix, Tensor::empty({G, in}));
            w.weight_hh = register_parameter("weight_hh" + suffix, Tensor::empty({G, H}));
            w.bias_ih = register_parameter("bias_ih" + suffix, Tensor::empty({G}));
            w.bias_hh = register_parameter("bias_hh" + suffix, Tensor::empty({G}));
            for (Tensor* p : {&w.weight_ih, &w.weight_hh, &w.bias_ih, &w.bias_hh})
                init::uniform_fan_in(*p, H, rng);
            weights_.push_back(w);
        }
}

const Recurrent::Weights& Recurrent::weights(int layer, int direction) const {
    if (layer < 0 || layer >= num_layers_ || direction < 0 || direction >= directions_)
        throw Error(fmt::format("{}::weights: no layer {} direction {} ({} layers, {} directions)",
                                cell_layer_name(type_), layer, direction, num_layers_,
                                directions_));
    return weights_[size_t(layer * directions_ + direction)];
}

std::string Recurrent::describe() const {
    return fmt::format("{}(input {}, hidden {}, {} layer{}{})", cell_layer_name(type_), input_size_,
                       hidden_size_, num_layers_, num_layers_ > 1 ? "s" : "",
                       directions_ == 2 ? ", bidirectional" : "");
}

// inputs [B,T,in], lengths [B] in 1..T, h0 and c0 (LSTM only) [L*D,B,H] or undefined
void Recurrent::check_forward(const Tensor& inputs, const std::vector<int32_t>& lengths,
                              const Tensor& h0, const Tensor& c0) const {
    const int64_t H = hidden_size_, D = directions_, L = num_layers_;
    const bool lstm = type_ == CellType::lstm;
    if (!inputs.defined() || inputs.rank() != 3 || inputs.size(2) != input_size_ ||
        inputs.size(1) < 1)
        throw Error(fmt::format("{}: inputs {} must be [B, T, {}] (batch first, T >= 1)",
                                describe(), inputs.defined() ? inputs.shape().str() : "undefined",
                                input_size_));
    const int64_t B = inputs.size(0), T = inputs.size(1);
    if (int64_t(lengths.size()) != B)
        throw Error(fmt::format("{}: {} lengths for inputs {} (batch of {})", describe(),
                                lengths.size(), inputs.shape().str(), B));
    for (size_t b = 0; b < lengths.size(); ++b)
        if (lengths[b] < 1 || lengths[b] > T)
            throw Error(fmt::format("{}: length {} of sequence {} is not in 1..{} (inputs {})",
                                    describe(), lengths[b], b, T, inputs.shape().str()));
    if (h0.defined() && h0.shape() != Shape{L * D, B, H})
        throw Error(fmt::format("{}: h0 {} must be [layers*directions, B, H] = [{},{},{}]",
                                describe(), h0.shape().str(), L * D, B, H));
    if (c0.defined() && !lstm)
        throw Error(fmt::format("{}: c0 is given, but only an LSTM has a cell state", describe()));
    if (c0.defined() && c0.shape() != Shape{L * D, B, H})
        throw Error(fmt::format("{}: c0 {} must be [layers*directions, B, H] = [{},{},{}]",
                                describe(), c0.shape().str(), L * D, B, H));
}

// inputs [B,T,in], lengths [B], h0, c0 [L*D,B,H] -> outputs [B,T,D*H], final states [L*D,B,H]
//
namespace {

// mask_t [B] for every step t: undefined when every sequence runs at step t (no blend needed),
// and running[t] = number of sequences still running (0: the step is skipped).
struct StepMasks {
    std::vector<Tensor> masks;
    std::vector<int64_t> running;
};

StepMasks step_masks_of(const std::vector<int32_t>& lengths, int64_t B, int64_t T) {
    StepMasks m{std::vector<Tensor>(static_cast<size_t>(T)), std::vector<int64_t>(size_t(T), 0)};
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t b = 0; b < B; ++b) m.running[t] += t < lengths[b];
        if (m.running[t] == B) continue;
        m.masks[t] = Tensor::empty({B});
        for (int64_t b = 0; b < B; ++b) m.masks[t].data()[b] = t < lengths[b] ? 1 : 0;
    }
    return m;
}

// One direction of one layer: the steps t = 0..T-1 (dir 1: T-1..0) from state `s`, step t's
// h into states[dir·T + t]; returns the last state. `gates` [B,T,G] on the fused path.
RecurrentState run_direction(CellType type, const CellWeights& w, bool fused,
                             const Tensor& layer_input, const Tensor& gates, RecurrentState s,
                             int64_t dir, const StepMasks& m, std::vector<Tensor>& states) {
    const int64_t B = layer_input.size(0), T = layer_input.size(1);
    // every step multiplies by W_hh (a kernel may sum its gradient over the steps in one
    // product: autograd/kernels/kernels.h)
    kernels::SharedOverStepsScope shared({w.weight_hh});
    for (int64_t step = 0; step < T; ++step) {
        const int64_t t = dir == 0 ? step : T - 1 - step;
        TapeScope scope(t);  // the explorer's tape: this op is step t's
        if (m.running[t] > 0) {
            if (fused) {
                s = cell_step_fused(type, w, gates, t, s, m.masks[t]);
            } else {
                Tensor x_t = reshape(slice(layer_input, 1, t, t + 1), {B, layer_input.size(2)});
                s = cell_step_composed(type, w, x_t, s, m.masks[t]);
            }
        }
        states[size_t(dir * T + t)] = s.h;
    }
    return s;
}

}  // namespace

// For each layer and direction:
//   gates = inputs W_ihᵀ + b_ih            [B,T,G]  one product for all steps (fused path)
//   for t = 0..T-1 (reverse: T-1..0):     state = cell step t (state, mask_t)
// with mask_t[b] = (t < lengths[b]): a step past a sequence's end carries its state unchanged,
// so the forward direction ends at each sequence's last token and the reverse direction, which
// starts from h0 at t = T-1, really starts at t = lengths[b]-1. One graph node per step.
RecurrentOutput Recurrent::forward(const Tensor& inputs, const std::vector<int32_t>& lengths,
                                   const Tensor& h0, const Tensor& c0) const {
    check_forward(inputs, lengths, h0, c0);
    // speed, not maths: the same loop on the rows sorted by decreasing length, whose finished
    // rows the fused cell skips (layers/length_order.h)
    if (use_fused && sort_by_length && !sorted_by_decreasing_length(lengths))
        return run_in_length_order(
            inputs, lengths, h0, c0,
            [this](const Tensor& x, const std::vector<int32_t>& n, const Tensor& h,
                   const Tensor& c) { return forward(x, n, h, c); });

    const int64_t H = hidden_size_, D = directions_, L = num_layers_;
    const int64_t B = inputs.size(0), T = inputs.size(1);
    const bool lstm = type_ == CellType::lstm;

    const StepMasks masks = step_masks_of(lengths, B, T);
    // layer·D + direction's slice of h0 or c0, or zeros
    auto initial = [&](const Tensor& s0, int64_t k) {
        return s0.defined() ? reshape(slice(s0, 0, k, k + 1), {B, H}) : Tensor::zeros({B, H});
    };

    RecurrentOutput result;
    result.step_states.reserve(size_t(L * D * T));
    std::vector<Tensor> final_h, final_c;
    Tensor layer_input = inputs;  // [B,T,in_l]
    for (int64_t layer = 0; layer < L; ++layer) {
        std::vector<Tensor> states(size_t(D * T));  // [direction][t], each [B,H]
        for (int64_t dir = 0; dir < D; ++dir) {
            const Weights& w = weights_[size_t(layer * D + dir)];
            const int64_t k = layer * D + dir;
            RecurrentState s{initial(h0, k), lstm ? initial(c0, k) : Tensor()};
            Tensor gates;  // [B,T,G], fused path only
            if (use_fused) gates = linear(layer_input, w.weight_ih, w.bias_ih);
            s = run_direction(type_, w, use_fused, layer_input, gates, s, dir, masks, states);
            final_h.push_back(s.h);
            if (lstm) final_c.push_back(s.c);
        }
        result.step_states.insert(result.step_states.end(), states.begin(), states.end());
        layer_input = gather_step_states(states, int(D), lengths);  // [B,T,D*H]
        if (layer + 1 < L)
            layer_input = dropout(layer_input, dropout_, training(), thread_rng(rng_));
    }
    result.outputs = layer_input;
    result.final_hidden = stack(final_h, 0);          // [L*D,B,H]
    if (lstm) result.final_cell = stack(final_c, 0);  // [L*D,B,H]
    return result;
}

std::unique_ptr<Recurrent> make_recurrent(CellType type, int64_t input_size, int64_t hidden_size,
                                          int num_layers, bool bidirectional,
                                          real dropout_between_layers, Rng& rng, bool fused) {
    switch (type) {
        case CellType::rnn:
            return std::make_unique<RNN>(input_size, hidden_size, num_layers, bidirectional,
                                         dropout_between_layers, rng, fused);
        case CellType::gru:
            return std::make_unique<GRU>(input_size, hidden_size, num_layers, bidirectional,
                                         dropout_between_layers, rng, fused);
        case CellType::lstm:
            return std::make_unique<LSTM>(input_size, hidden_size, num_layers, bidirectional,
                                          dropout_between_layers, rng, fused);
    }
    throw Error("make_recurrent: not a CellType");
}

}  // namespace seqgrad
