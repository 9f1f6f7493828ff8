#include "seqgrad/layers/gru.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/autograd/kernels.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// ---- GRUCell -----------------------------------------------------------------------------

GRUCell::GRUCell(int64_t input_size, int64_t hidden_size, Rng& rng) {
    if (input_size < 1 || hidden_size < 1)
        throw Error(fmt::format("GRUCell: input_size {} and hidden_size {} must be >= 1",
                                input_size, hidden_size));
    const int64_t H = hidden_size;
    weight_ih = register_parameter("weight_ih", Tensor::empty({3 * H, input_size}));
    weight_hh = register_parameter("weight_hh", Tensor::empty({3 * H, H}));
    bias_ih = register_parameter("bias_ih", Tensor::empty({3 * H}));
    bias_hh = register_parameter("bias_hh", Tensor::empty({3 * H}));
    for (Tensor* p : {&weight_ih, &weight_hh, &bias_ih, &bias_hh}) init::uniform_fan_in(*p, H, rng);
}

// x [B,in], h [B,H] -> h' [B,H]: gi = x W_ihᵀ + b_ih (linear), then the fused cell
Tensor GRUCell::forward(const Tensor& x, const Tensor& h, const Tensor& step_mask) const {
    if (!use_fused) return forward_composed(x, h, step_mask);
    if (x.rank() != 2 || x.size(1) != input_size())
        throw Error(fmt::format("GRUCell({} -> {}): x {} must be [B, {}]", input_size(),
                                hidden_size(), x.shape().str(), input_size()));
    Tensor input_gates = linear(x, weight_ih, bias_ih);  // [B,3H]
    return gru_cell(input_gates, h, weight_hh, bias_hh, step_mask);
}

Tensor GRUCell::forward_composed(const Tensor& x, const Tensor& h, const Tensor& step_mask) const {
    if (x.rank() != 2 || x.size(1) != input_size())
        throw Error(fmt::format("GRUCell({} -> {}): x {} must be [B, {}]", input_size(),
                                hidden_size(), x.shape().str(), input_size()));
    return gru_cell_composed(x, h, weight_ih, weight_hh, bias_ih, bias_hh, step_mask);
}

// ---- GRU ---------------------------------------------------------------------------------

GRU::GRU(int64_t input_size, int64_t hidden_size, int num_layers, bool bidirectional,
         real dropout_between_layers, Rng& rng)
    : input_size_(input_size),
      hidden_size_(hidden_size),
      num_layers_(num_layers),
      directions_(bidirectional ? 2 : 1),
      dropout_(dropout_between_layers),
      rng_(rng) {
    if (input_size < 1 || hidden_size < 1 || num_layers < 1)
        throw Error(
            fmt::format("GRU: input_size {}, hidden_size {} and num_layers {} must all be >= 1",
                        input_size, hidden_size, num_layers));
    if (!(dropout_between_layers >= 0 && dropout_between_layers < 1))
        throw Error(fmt::format("GRU: dropout_between_layers must be in [0, 1), got {}",
                                dropout_between_layers));
    const int64_t H = hidden_size;
    for (int layer = 0; layer < num_layers; ++layer)
        for (int dir = 0; dir < directions_; ++dir) {
            const int64_t in = layer == 0 ? input_size : directions_ * H;
            const std::string suffix = fmt::format("_l{}{}", layer, dir == 1 ? "_reverse" : "");
            Weights w;
            w.weight_ih = register_parameter("weight_ih" + suffix, Tensor::empty({3 * H, in}));
            w.weight_hh = register_parameter("weight_hh" + suffix, Tensor::empty({3 * H, H}));
            w.bias_ih = register_parameter("bias_ih" + suffix, Tensor::empty({3 * H}));
            w.bias_hh = register_parameter("bias_hh" + suffix, Tensor::empty({3 * H}));
            for (Tensor* p : {&w.weight_ih, &w.weight_hh, &w.bias_ih, &w.bias_hh})
                init::uniform_fan_in(*p, H, rng);
            weights_.push_back(w);
        }
}

const GRU::Weights& GRU::weights(int layer, int direction) const {
    if (layer < 0 || layer >= num_layers_ || direction < 0 || direction >= directions_)
        throw Error(fmt::format("GRU::weights: no layer {} direction {} ({} layers, {} directions)",
                                layer, direction, num_layers_, directions_));
    return weights_[size_t(layer * directions_ + direction)];
}

// inputs [B,T,in], lengths [B], h0 [L*D,B,H] -> outputs [B,T,D*H], final_hidden [L*D,B,H]
//
// For each layer and direction:
//   gates = inputs W_ihᵀ + b_ih            [B,T,3H]  one product for all steps
//   for t = 0..T-1 (reverse: T-1..0):     h = gru_cell_step(gates, t, h, ..., mask_t)
// with mask_t[b] = (t < lengths[b]): a step past a sequence's end carries its state unchanged,
// so the forward direction ends at each sequence's last token and the reverse direction, which
// starts from h0 at t = T-1, really starts at t = lengths[b]-1. One graph node per step.
GRUOutput GRU::forward(const Tensor& inputs, const std::vector<int32_t>& lengths,
                       const Tensor& h0) const {
    const int64_t H = hidden_size_, D = directions_, L = num_layers_;
    auto describe = [&] {
        return fmt::format("GRU(input {}, hidden {}, {} layer{}{})", input_size_, H, L,
                           L > 1 ? "s" : "", D == 2 ? ", bidirectional" : "");
    };
    if (inputs.rank() != 3 || inputs.size(2) != input_size_ || inputs.size(1) < 1)
        throw Error(fmt::format("{}: inputs {} must be [B, T, {}] (batch first, T >= 1)",
                                describe(), inputs.shape().str(), input_size_));
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

    // The fused cell computes only the rows before the first sequence that has ended (see
    // autograd/ops_fused_gru.cpp): with lengths in decreasing order the ended sequences are the
    // tail of the batch at every step, so a step costs what its running sequences cost instead
    // of what the longest one does (docs/performance.md, "shrinking the batch"). A batch in
    // another order is sorted here — one row gather in, one per result out — and the results
    // come back in the caller's order.
    if (use_fused && sort_by_length && !std::is_sorted(lengths.rbegin(), lengths.rend()))
        return forward_sorted_by_length(inputs, lengths, h0);

    // mask_t [B]: undefined when every sequence runs at step t (no blend needed), and
    // `running[t]` = number of sequences still running (0: the step is skipped).
    std::vector<Tensor> step_masks(static_cast<size_t>(T));
    std::vector<int64_t> running(size_t(T), 0);
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t b = 0; b < B; ++b) running[t] += t < lengths[b];
        if (running[t] == B) continue;
        step_masks[t] = Tensor::empty({B});
        for (int64_t b = 0; b < B; ++b) step_masks[t].data()[b] = t < lengths[b] ? 1 : 0;
    }

    GRUOutput result;
    result.step_states.reserve(size_t(L * D * T));
    std::vector<Tensor> final_states;
    Tensor layer_input = inputs;  // [B,T,in_l]
    for (int64_t layer = 0; layer < L; ++layer) {
        std::vector<Tensor> states(size_t(D * T));  // [direction][t], each [B,H]
        for (int64_t dir = 0; dir < D; ++dir) {
            const Weights& w = weights_[size_t(layer * D + dir)];
            const int64_t k = layer * D + dir;
            Tensor h =
                h0.defined() ? reshape(slice(h0, 0, k, k + 1), {B, H}) : Tensor::zeros({B, H});
            Tensor gates;  // [B,T,3H], fused path only
            if (use_fused) gates = linear(layer_input, w.weight_ih, w.bias_ih);
            // every step multiplies by W_hh (a kernel may sum its gradient over the steps in one
            // product: autograd/kernels.h)
            kernels::SharedOverStepsScope shared({w.weight_hh});
            for (int64_t step = 0; step < T; ++step) {
                const int64_t t = dir == 0 ? step : T - 1 - step;
                if (running[t] > 0) {
                    if (use_fused) {
                        h = gru_cell_step(gates, t, h, w.weight_hh, w.bias_hh, step_masks[t]);
                    } else {
                        Tensor x_t =
                            reshape(slice(layer_input, 1, t, t + 1), {B, layer_input.size(2)});
                        h = gru_cell_composed(x_t, h, w.weight_ih, w.weight_hh, w.bias_ih,
                                              w.bias_hh, step_masks[t]);
                    }
                }
                states[size_t(dir * T + t)] = h;
            }
            final_states.push_back(h);
        }
        result.step_states.insert(result.step_states.end(), states.begin(), states.end());
        layer_input = gather_step_states(states, int(D), lengths);  // [B,T,D*H]
        if (layer + 1 < L)
            layer_input = dropout(layer_input, dropout_, training(), thread_rng(rng_));
    }
    result.outputs = layer_input;
    result.final_hidden = stack(final_states, 0);  // [L*D,B,H]
    return result;
}

// rows sorted by decreasing length (stable), forward, then every result back in row order
GRUOutput GRU::forward_sorted_by_length(const Tensor& inputs, const std::vector<int32_t>& lengths,
                                        const Tensor& h0) const {
    const int64_t B = inputs.size(0), H = hidden_size_;
    std::vector<int32_t> order(lengths.size()), back(lengths.size()), sorted_lengths;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return lengths[size_t(a)] > lengths[size_t(b)]; });
    for (size_t i = 0; i < order.size(); ++i) {
        back[size_t(order[i])] = int32_t(i);  // row b of the batch is row back[b] of the sorted
        sorted_lengths.push_back(lengths[size_t(order[i])]);
    }
    // [L*D, B, H]: the rows of every layer and direction's [B, H] picked by `rows`
    auto gather_states = [&](const Tensor& states, const std::vector<int32_t>& rows) {
        std::vector<Tensor> picked;
        for (int64_t k = 0; k < states.size(0); ++k)
            picked.push_back(gather_rows(reshape(slice(states, 0, k, k + 1), {B, H}), rows));
        return stack(picked, 0);
    };
    GRUOutput sorted = forward(gather_rows(inputs, order), sorted_lengths,
                               h0.defined() ? gather_states(h0, order) : Tensor());
    GRUOutput out;
    out.outputs = gather_rows(sorted.outputs, back);
    out.final_hidden = gather_states(sorted.final_hidden, back);
    for (const Tensor& state : sorted.step_states)
        out.step_states.push_back(gather_rows(state, back));
    return out;
}

}  // namespace seqgrad
