// The long-range models, their gradient flow and their training: see
// apps/studies/longrange_model.h.
#include "apps/studies/longrange_model.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/loss.h"
#include "seqgrad/layers/positional_encoding.h"
#include "seqgrad/models/training/train_step.h"
#include "seqgrad/optim/adam.h"

namespace seqgrad {

namespace {

std::unique_ptr<Attention> make_long_range_attention(const std::string& kind, int64_t H, Rng& rng) {
    if (kind == "none") return nullptr;
    if (kind == "bahdanau") return std::make_unique<BahdanauAttention>(H, H, H, rng);
    if (kind == "luong_dot")
        return std::make_unique<LuongAttention>(LuongScore::dot, H, H, rng, false, H);
    if (kind == "luong_general")
        return std::make_unique<LuongAttention>(LuongScore::general, H, H, rng, false, H);
    if (kind == "luong_concat")
        return std::make_unique<LuongAttention>(LuongScore::concat, H, H, rng, false, H);
    throw Error(fmt::format(
        "long-range model: attention '{}': expected none, bahdanau, luong_dot, luong_general or "
        "luong_concat",
        kind));
}

int64_t input_channels(const std::string& task) {
    if (task == "adding") return 2;
    if (task == "copy_memory") return kCopyMemoryAlphabet + 2;
    throw Error(fmt::format("long-range model: task '{}': expected adding or copy_memory", task));
}

// y = norm1(z + SelfAttention(z, causal)),  z' = norm2(y + FF(y)): nn.TransformerEncoderLayer
// (post-norm, no dropout) with the causal mask its forward does not take
Tensor causal_layer(const TransformerEncoderLayer& layer, const Tensor& z) {
    Tensor y = layer.norm1.forward(z + layer.self_attn.forward(z, z, z, Tensor(), true).output);
    return layer.norm2.forward(y + layer.ff.forward(y));
}

}  // namespace

LongRangeModel::LongRangeModel(const std::string& task, const std::string& cell,
                               const std::string& attention_kind, int64_t hidden_size, Rng& rng,
                               int64_t heads, int num_layers)
    : task_(task), cell_(cell), attention_kind_(attention_kind), hidden_size_(hidden_size) {
    const int64_t C = input_channels(task), H = hidden_size;
    if (H < 1) throw Error(fmt::format("long-range model: hidden size {} must be >= 1", H));
    if (attention_kind == "transformer") {
        if (heads < 1 || H % heads != 0 || num_layers < 1)
            throw Error(
                fmt::format("long-range transformer: {} heads must divide the size {}, "
                            "and {} layers must be >= 1",
                            heads, H, num_layers));
        cell_ = "-";
        TransformerLayerOptions options;
        options.d_model = H;
        options.heads = heads;
        options.ff_size = 2 * H;
        options.dropout = 0;
        input = std::make_unique<Linear>(C, H, true, rng);
        register_module("input", *input);
        for (int k = 0; k < num_layers; ++k) {
            layers.push_back(std::make_unique<TransformerEncoderLayer>(options, rng));
            register_module(fmt::format("layers.{}", k), *layers.back());
        }
        out = std::make_unique<Linear>(H, task == "adding" ? 1 : kCopyMemoryAlphabet, true, rng);
        register_module("out", *out);
        return;
    }
    encoder = make_recurrent(parse_cell_type(cell), C, H, 1, false, real(0), rng);
    attention = make_long_range_attention(attention_kind, H, rng);
    const int64_t features = attention ? 2 * H : H;
    out = std::make_unique<Linear>(features, task == "adding" ? 1 : kCopyMemoryAlphabet, true, rng);
    register_module("encoder", *encoder);
    if (attention) register_module("attention", *attention);
    register_module("out", *out);
}

int64_t LongRangeModel::num_parameters() const {
    int64_t n = 0;
    for (const Tensor& p : parameters()) n += p.numel();
    return n;
}

LongRangeModel::Output LongRangeModel::forward(const LongRangeBatch& batch,
                                               bool inputs_grad) const {
    if (batch.task != task_)
        throw Error(fmt::format("long-range model for '{}' given a '{}' batch", task_, batch.task));
    const int64_t B = batch.batch, N = batch.steps;
    Output o;
    o.inputs = Tensor::from_vector({B, N, batch.channels}, batch.inputs, inputs_grad);
    std::vector<Tensor> predictions;  // one [B, outputs] per answer step
    if (is_transformer()) {
        const int64_t H = hidden_size_;
        o.outputs = input->forward(o.inputs) + sinusoidal_positions(0, N, H);  // e [B,N,H]
        Tensor z = o.outputs;
        for (const auto& layer : layers) z = causal_layer(*layer, z);
        for (int64_t a = 0; a < batch.answers; ++a) {
            const int64_t t = batch.answer_start + a;
            predictions.push_back(out->forward(reshape(slice(z, 1, t, t + 1), {B, H})));
        }
        return with_loss(batch, predictions, o);
    }
    RecurrentOutput r = encoder->forward(o.inputs, std::vector<int32_t>(size_t(B), int32_t(N)));
    o.outputs = r.outputs;
    o.step_states = r.step_states;
    Tensor keys, keys_projected;
    if (attention) {
        keys = slice(o.outputs, 1, 0, batch.memory);  // [B, memory, H]
        keys_projected = attention->project_keys(keys);
    }
    for (int64_t a = 0; a < batch.answers; ++a) {
        const Tensor& h = o.step_states[size_t(batch.answer_start + a)];  // [B, H]
        Tensor features = h;
        if (attention)
            features =
                concat({h, attention->forward(h, keys, keys_projected, Tensor()).context}, 1);
        predictions.push_back(out->forward(features));
    }
    return with_loss(batch, predictions, o);
}

LongRangeModel::Output& LongRangeModel::with_loss(const LongRangeBatch& batch,
                                                  const std::vector<Tensor>& predictions,
                                                  Output& o) const {
    const int64_t B = batch.batch;
    if (task_ == "adding") {
        // loss = mean_b (ŷ_b − y_b)²
        Tensor target = Tensor::from_vector({B, 1}, batch.sums);
        Tensor error = sub(predictions.front(), target);
        o.loss = mean(mul(error, error));
    } else {
        // answers stacked answer-major: row a*B + b is answer a of sequence b
        std::vector<int32_t> targets(size_t(batch.answers * B));
        for (int64_t a = 0; a < batch.answers; ++a)
            for (int64_t b = 0; b < B; ++b)
                targets[size_t(a * B + b)] = batch.symbols[size_t(b * batch.answers + a)];
        o.loss = cross_entropy(concat(predictions, 0), targets);
    }
    return o;
}

int64_t matched_hidden_size(const std::string& task, const std::string& cell,
                            const std::string& attention, int64_t budget, int64_t heads,
                            int layers) {
    const int64_t step = attention == "transformer" ? heads : 1;
    int64_t best = step, best_gap = -1;
    for (int64_t H = step; H <= 1024; H += step) {
        Rng rng(1);
        const int64_t gap = std::llabs(
            LongRangeModel(task, cell, attention, H, rng, heads, layers).num_parameters() - budget);
        if (best_gap < 0 || gap < best_gap) {
            best = H;
            best_gap = gap;
        } else if (gap > best_gap) {
            break;  // the count grows with H: past the closest one
        }
    }
    return best;
}

FlowMeasurement measure_long_range_flow(LongRangeModel& model, const LongRangeBatch& batch) {
    model.zero_grad();
    LongRangeModel::Output o = model.forward(batch, /*inputs_grad=*/true);
    WatchedPass watched{o.inputs, o.outputs, o.step_states, 1};
    watched.outputs.retain_grad();
    for (Tensor& h : watched.states) h.retain_grad();
    o.loss.backward();
    FlowMeasurement f;
    f.loss = double(o.loss.item());
    read_gradient_flow(watched, std::vector<int32_t>(size_t(batch.batch), int32_t(batch.steps)), f);
    return f;
}

LongRangeTraining train_long_range(LongRangeModel& model, const LongRangeTrainOptions& o,
                                   const std::function<void(int, double)>& on_step) {
    if (o.max_steps < 1 || o.window < 1 || o.batch_size < 1)
        throw Error(fmt::format("train_long_range: max steps {}, window {}, batch {} must be >= 1",
                                o.max_steps, o.window, o.batch_size));
    AdamOptions adam_options;
    adam_options.lr = o.lr;
    Adam adam(model.named_parameters(), adam_options);
    Rng rng(o.data_seed);
    model.train();
    LongRangeTraining result;
    double window_sum = 0;
    for (int step = 1; step <= o.max_steps; ++step) {
        LongRangeBatch batch = long_range_batch(model.task(), o.length, o.batch_size, rng);
        // models/training/train_step.h's step; the loss reads the long-range batch, not a Batch
        double value = 0;
        auto loss_and_gradient = [&](const Batch&) {
            LossOutput out{model.forward(batch).loss};
            value = double(out.loss.item());
            if (std::isfinite(value)) out.loss.backward();
            return out;
        };
        try {
            train_step(adam, Batch{}, loss_and_gradient, o.clip_norm, [&](const GradClip&) {
                if (on_step) on_step(step, value);
            });
        } catch (const NonFiniteError& e) {
            throw Error(fmt::format("train_long_range: {} at step {} ({} {}+{}, T = {})", e.what(),
                                    step, model.task(), model.cell(), model.attention_kind(),
                                    o.length));
        }
        result.losses.push_back(value);
        window_sum += value;
        if (step > o.window) window_sum -= result.losses[size_t(step - 1 - o.window)];
        result.steps_run = step;
        result.final_loss = window_sum / double(std::min(step, o.window));
        if (step >= o.window && result.final_loss < o.threshold) {
            result.reached_at = step;
            break;
        }
    }
    model.eval();
    return result;
}

}  // namespace seqgrad
