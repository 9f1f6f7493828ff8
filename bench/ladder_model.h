// The ladder model: Seq2Seq's training loss in the forms it had before each model-level rung of
// the performance ladder (docs/performance.md, rungs 2 and 4-7), so that bench/ladder.sh can
// measure what each rung buys. The model itself (models/model/seq2seq.cpp) has one loss path,
// every rung on; this file overrides its teacher-forced decode loop and its loss, on the same
// Seq2Seq and the same weights, with any of the rungs off. Every form gives the same loss and
// gradients (tests/unit/test_switches.cpp, tests/unit/test_model_options.cpp); only the time
// differs.
//
// Used by bench/train_throughput --ladder-off NAME,... (one thread of our own: --parallel blas).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/loss.h"
#include "seqgrad/models/model/seq2seq.h"

namespace seqgrad::bench {

// Each rung on (true) is what Seq2Seq does.
struct LadderOptions {
    // 2. the projection and the loss as one op, linear_cross_entropy; off:
    //    cross_entropy_composed(decoder.out.forward(h))
    bool fused_loss = true;
    // 4. only the rows of real target tokens reach the output projection; off: every decoder
    //    step runs on all B rows, the projection sees all B·T positions and the loss skips the
    //    padding by ignore_index (so sort_by_length is off too)
    bool real_tokens = true;
    // 5. one projection and loss over the output states of all steps; off: one per step
    bool one_projection = true;
    // 6. the keys' half of the attention score projected once per batch; off: at every step
    bool cached_keys = true;
    // 7. rows sorted by decreasing length: the encoder's fused cells skip its finished rows
    //    (Recurrent::sort_by_length) and the decoder drops each sequence when it ends; off:
    //    every row at every step
    bool sort_by_length = true;

    bool all_on() const {
        return fused_loss && real_tokens && one_projection && cached_keys && sort_by_length;
    }
};

// The options with the comma-separated rungs of `names` off ("" or "none": none off). Throws
// std::runtime_error naming an unknown name and the known ones.
inline LadderOptions parse_ladder_off(const std::string& names) {
    LadderOptions o;
    const std::pair<const char*, bool*> known[] = {{"fused_loss", &o.fused_loss},
                                                   {"real_tokens", &o.real_tokens},
                                                   {"one_projection", &o.one_projection},
                                                   {"cached_keys", &o.cached_keys},
                                                   {"sort_by_length", &o.sort_by_length}};
    std::stringstream in(names);
    std::string name;
    while (std::getline(in, name, ',')) {
        if (name.empty() || name == "none") continue;
        bool found = false;
        for (auto& [k, flag] : known)
            if (name == k) *flag = false, found = true;
        if (!found)
            throw std::runtime_error(
                fmt::format("--ladder-off: unknown rung '{}' (known: fused_loss, real_tokens, "
                            "one_projection, cached_keys, sort_by_length)",
                            name));
    }
    if (!o.real_tokens) o.sort_by_length = false;  // every row at every step
    return o;
}

class LadderModel {
  public:
    // Sets model.encoder's Recurrent::sort_by_length to options.sort_by_length.
    LadderModel(Seq2Seq& model, const LadderOptions& options) : model_(model), on_(options) {
        model.encoder.recurrent->sort_by_length = options.sort_by_length;
    }

    // Every rung on: model.forward_loss(batch). Otherwise the same loss (teacher forcing
    // throughout) with the rungs that are off undone.
    LossOutput forward_loss(const Batch& batch, double label_smoothing = 0) const {
        if (on_.all_on()) {
            LossOptions options;
            options.label_smoothing = label_smoothing;
            return model_.forward_loss(batch, options);
        }
        const Batch sorted =
            is_sorted_by_target_length(batch) ? batch : sort_by_target_length(batch);
        EncodedSource source = model_.encoder.forward(sorted.src_ids, sorted.batch_size,
                                                      sorted.src_len, sorted.src_lengths);
        if (on_.cached_keys) source.keys_projected = model_.decoder.project_keys(source.outputs);
        const Steps steps = decode(sorted, source);
        LossOutput result;
        result.num_tokens = count_targets(steps.targets, Vocab::PAD);
        if (on_.one_projection && on_.fused_loss && on_.real_tokens) {  // as Seq2Seq
            const Tensor h = steps.states.size() == 1 ? steps.states[0] : concat(steps.states, 0);
            result.loss =
                linear_cross_entropy(model_.decoder.dropout.forward(h), model_.decoder.out.weight,
                                     model_.decoder.out.bias, steps.targets, Vocab::PAD,
                                     Reduction::mean, real(label_smoothing), &result.num_correct);
            return result;
        }
        // the sum over the tokens of every step's (or all steps') loss, / the number of tokens
        Tensor total;
        if (on_.one_projection) {
            total = loss_sum(concat(steps.states, 0), steps.targets, label_smoothing,
                             &result.num_correct);
        } else {
            size_t first = 0;
            for (const Tensor& states : steps.states) {
                const size_t n = size_t(states.size(0));
                const std::vector<int32_t> targets(steps.targets.begin() + long(first),
                                                   steps.targets.begin() + long(first + n));
                first += n;
                Tensor step = loss_sum(states, targets, label_smoothing, &result.num_correct);
                total = total.defined() ? add(total, step) : step;
            }
        }
        result.loss = mul(total, real(1.0 / double(std::max<int64_t>(result.num_tokens, 1))));
        return result;
    }

  private:
    struct Steps {
        std::vector<Tensor> states;    // one [n_t, *] per step: what `out` reads
        std::vector<int32_t> targets;  // Σ n_t, time-major
    };

    // Seq2Seq::decode_teacher_forced with teacher forcing 1, its rows and keys as the rungs say
    Steps decode(const Batch& batch, const EncodedSource& source) const {
        const Decoder& decoder = model_.decoder;
        const int64_t B = batch.batch_size, T = batch.tgt_len;
        // n_t: the leading rows still running at step t (all B without sort_by_length)
        std::vector<int64_t> row_end(size_t(B), 0), running(size_t(T), 0);
        for (int64_t b = 0; b < B; ++b)
            for (int64_t t = 0; t < T; ++t)
                if (batch.tgt_out[size_t(b * T + t)] != Vocab::PAD) row_end[size_t(b)] = t + 1;
        for (int64_t t = 0, n = B; t < T; ++t) {
            while (on_.sort_by_length && n > 0 && row_end[size_t(n - 1)] <= t) --n;
            running[size_t(t)] = n;
        }
        std::vector<RecurrentState> state = source.initial_state;
        Tensor feed = Tensor::zeros({B, model_.config().hidden_size});
        EncodedSource rows = source;
        Steps steps;
        std::vector<int32_t> previous;
        kernels::SharedOverStepsScope shared(decoder.step_weights());
        for (int64_t t = 0; t < T && running[size_t(t)] > 0; ++t) {
            const int64_t n = running[size_t(t)];
            if (n != feed.size(0)) {
                for (RecurrentState& layer : state) {
                    layer.h = slice(layer.h, 0, 0, n);
                    if (layer.c.defined()) layer.c = slice(layer.c, 0, 0, n);
                }
                feed = slice(feed, 0, 0, n);
                rows.outputs = slice(source.outputs, 0, 0, n);
                rows.mask = slice(source.mask, 0, 0, n);
                if (source.keys_projected.defined())
                    rows.keys_projected = slice(source.keys_projected, 0, 0, n);
            }
            if (!on_.cached_keys) rows.keys_projected = decoder.project_keys(rows.outputs);
            previous.resize(size_t(n));
            for (int64_t b = 0; b < n; ++b) {
                previous[size_t(b)] = batch.tgt_in[size_t(b * T + t)];
                steps.targets.push_back(batch.tgt_out[size_t(b * T + t)]);
            }
            const Tensor embedded =
                decoder.dropout.forward(decoder.embedding.forward(previous, {n}));
            const Tensor output_steps =
                model_.config().position_bias != 0 ? Tensor::full({n}, real(t)) : Tensor();
            const Decoder::Step s = decoder.step(embedded, state, feed, rows, output_steps);
            state = s.state;
            feed = s.output_state;
            steps.states.push_back(s.projection_input);
        }
        return steps;
    }

    // Σ over the real target tokens of the cross-entropy of decoder.out(states), fused or
    // composed; *num_correct += the argmax hits
    Tensor loss_sum(const Tensor& states, const std::vector<int32_t>& targets,
                    double label_smoothing, int64_t* num_correct) const {
        const Decoder& decoder = model_.decoder;
        Tensor x = states;
        std::vector<int32_t> kept = targets;
        if (on_.real_tokens) {  // only the rows of real target tokens reach the projection
            std::vector<int32_t> rows;
            kept.clear();
            for (size_t i = 0; i < targets.size(); ++i)
                if (targets[i] != Vocab::PAD)
                    rows.push_back(int32_t(i)), kept.push_back(targets[i]);
            if (rows.size() != targets.size()) x = gather_rows(states, rows);
        }
        x = decoder.dropout.forward(x);
        if (on_.fused_loss) {
            int64_t correct = 0;
            Tensor loss =
                linear_cross_entropy(x, decoder.out.weight, decoder.out.bias, kept, Vocab::PAD,
                                     Reduction::sum, real(label_smoothing), &correct);
            *num_correct += correct;
            return loss;
        }
        const Tensor logits = decoder.out.forward(x);
        const int64_t V = logits.size(1);
        for (size_t i = 0; i < kept.size(); ++i) {
            const real* row = logits.data() + int64_t(i) * V;
            *num_correct +=
                kept[i] != Vocab::PAD && std::max_element(row, row + V) - row == kept[i];
        }
        return cross_entropy_composed(logits, kept, Vocab::PAD, Reduction::sum,
                                      real(label_smoothing));
    }

    Seq2Seq& model_;
    LadderOptions on_;
};

}  // namespace seqgrad::bench
