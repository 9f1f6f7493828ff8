// Gradient flow through an encoder-decoder: see apps/studies/gradflow.h.
#include "apps/studies/gradflow.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "apps/plot/plot.h"
#include "apps/studies/gradflow_longrange.h"
#include "apps/studies/longrange_tasks.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/data/dates.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/run/task.h"
#include "seqgrad/models/training/train_step.h"
#include "seqgrad/optim/adam.h"

namespace seqgrad {

// ---- measuring one batch ---------------------------------------------------------------------

double row_norm_sq(const real* grad, int64_t offset, int64_t n) {
    if (!grad) return 0;
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(grad[offset + i]) * double(grad[offset + i]);
    return s;
}

namespace {

// The attention diagnostics of FlowMeasurement, from the record of the measured pass. For each
// decoder step t and each row whose target at t is real (not PAD), over the row's valid source
// positions s:
//   saturation: the share of |pre-activation| > 3 in the score MLP,
//               bahdanau  x = W_q h_{t-1} + W_k k_s + b_k   (query = previous state)
//               concat    x = W_query h_t + W_key k_s        (query = new state)
//   entropy:    −Σ_s w_s ln w_s of the attention weights
void attention_diagnostics(const ForwardRecord& record, const Batch& batch, FlowMeasurement& m) {
    const int64_t T = batch.tgt_len, S = batch.src_len;
    int64_t saturated = 0, pre_total = 0, entropy_count = 0;
    double entropy_sum = 0, ratio_sum = 0;
    auto real_target = [&](int64_t b, size_t t) {
        return batch.tgt_out[size_t(b * T) + t] != Vocab::PAD;
    };
    for (size_t t = 0; t < record.attention_pre_activations.size(); ++t) {
        const Tensor& x = record.attention_pre_activations[t];  // [n_t,S,A]
        const int64_t A = x.size(2);
        for (int64_t b = 0; b < x.size(0); ++b) {
            if (!real_target(b, t)) continue;
            // the row's valid positions s < length are its first length · A values
            const int64_t valid = batch.src_lengths[size_t(b)] * A;
            saturated += count_saturated(x.data() + b * S * A, valid);
            pre_total += valid;
        }
    }
    for (size_t t = 0; t < record.attention.size(); ++t) {
        const Tensor& weights = record.attention[t];  // [n_t,S]
        for (int64_t b = 0; b < weights.size(0); ++b) {
            if (!real_target(b, t)) continue;
            const int64_t length = batch.src_lengths[size_t(b)];
            double h = 0;
            for (int64_t s = 0; s < length; ++s) {
                const double w = weights.data()[b * S + s];
                if (w > 0) h -= w * std::log(w);
            }
            entropy_sum += h;
            if (length > 1) ratio_sum += h / std::log(double(length));
            entropy_count++;
        }
    }
    if (pre_total > 0) m.saturation = double(saturated) / double(pre_total);
    if (entropy_count > 0) {
        m.entropy = entropy_sum / double(entropy_count);
        m.entropy_ratio = ratio_sum / double(entropy_count);
    }
}

// The watched tensors of a recorded pass, gradient retained.
WatchedPass watch(const ForwardRecord& record, int64_t S) {
    WatchedPass w{record.encoder_input, record.encoder_outputs, {}, 1};
    w.input.retain_grad();
    w.outputs.retain_grad();
    if (record.encoder_step_states.empty()) return w;  // no recurrence
    // step_states index (layer * D + direction) * S + t; D = K / He
    const int64_t He = record.encoder_step_states[0].size(1);
    w.directions = int(w.outputs.size(2) / He);
    const int64_t top = int64_t(record.encoder_step_states.size()) / (S * w.directions) - 1;
    for (int d = 0; d < w.directions; ++d)
        for (int64_t t = 0; t < S; ++t) {
            Tensor h = record.encoder_step_states[size_t((top * w.directions + d) * S + t)];
            h.retain_grad();
            w.states.push_back(h);
        }
    return w;
}

// Row b at position t: adds ‖dL/dh_t‖ and its split to m's sums (a recurrent encoder), or
// ‖dL/d memory_t‖ (the Transformer: no split, direct and recurrent stay NaN).
void add_hidden(const WatchedPass& w, int64_t b, int64_t t, int64_t S, FlowMeasurement& m) {
    const real* direct = w.outputs.grad_data();  // nullptr without attention
    const int64_t K = w.outputs.size(2);
    if (w.states.empty()) {
        m.hidden[size_t(t)] += std::sqrt(row_norm_sq(direct, (b * S + t) * K, K));
        return;
    }
    const int64_t H = K / w.directions;
    double h_sq = 0, rest_sq = 0;
    for (int d = 0; d < w.directions; ++d) {
        const real* total = w.states[size_t(d * S + t)].grad_data();
        h_sq += row_norm_sq(total, b * H, H);
        for (int64_t j = 0; j < H; ++j) {
            const double g = total ? double(total[b * H + j]) : 0;
            const double a = direct ? double(direct[(b * S + t) * K + d * H + j]) : 0;
            rest_sq += (g - a) * (g - a);
        }
    }
    m.hidden[size_t(t)] += std::sqrt(h_sq);
    m.direct[size_t(t)] += std::sqrt(row_norm_sq(direct, (b * S + t) * K, K));
    m.recurrent[size_t(t)] += std::sqrt(rest_sq);
}

}  // namespace

void read_gradient_flow(const WatchedPass& w, const std::vector<int32_t>& lengths,
                        FlowMeasurement& m) {
    const int64_t B = w.outputs.size(0), S = w.outputs.size(1);
    m.batch = B;
    m.length = S;
    // Per-row norms, averaged over the rows valid at each position.
    const int64_t E = w.input.size(2);
    const bool split = !w.states.empty();  // no recurrence (Transformer): no split, NaN
    m.hidden.assign(size_t(S), 0);
    m.embedding.assign(size_t(S), 0);
    m.direct.assign(size_t(S), split ? 0 : NAN);
    m.recurrent.assign(size_t(S), split ? 0 : NAN);
    m.rows.assign(size_t(S), 0);
    m.embedding_per_row.assign(size_t(B * S), 0);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < S; ++t) {
            const double e = std::sqrt(row_norm_sq(w.input.grad_data(), (b * S + t) * E, E));
            m.embedding_per_row[size_t(b * S + t)] = e;
            if (t >= lengths[size_t(b)]) continue;
            add_hidden(w, b, t, S, m);
            m.embedding[size_t(t)] += e;
            m.rows[size_t(t)]++;
        }
    for (int64_t t = 0; t < S; ++t)
        if (m.rows[size_t(t)] > 0)
            for (std::vector<double>* curve : {&m.hidden, &m.embedding, &m.direct, &m.recurrent})
                (*curve)[size_t(t)] /= m.rows[size_t(t)];
}

FlowMeasurement measure_gradient_flow(TranslationModel& model, const Batch& batch,
                                      bool diagnostics) {
    const int64_t S = batch.src_len;
    FlowMeasurement m;
    model.zero_grad();
    ForwardRecord record;
    LossOutput out = model.forward_loss(batch, LossOptions{}, &record);
    const WatchedPass w = watch(record, S);
    out.loss.backward();
    m.loss = double(out.loss.item());
    read_gradient_flow(w, batch.src_lengths, m);
    m.groups = group_grad_norms(model);
    if (diagnostics) attention_diagnostics(record, batch, m);
    return m;
}

void FlowCurveSum::add(const FlowMeasurement& m) {
    if (curve.hidden.empty())
        for (std::vector<double>* v :
             {&curve.hidden, &curve.embedding, &curve.direct, &curve.recurrent})
            v->assign(m.hidden.size(), 0);
    for (size_t t = 0; t < m.hidden.size(); ++t) {
        curve.hidden[t] += m.hidden[t];
        curve.embedding[t] += m.embedding[t];
        curve.direct[t] += m.direct[t];
        curve.recurrent[t] += m.recurrent[t];
    }
    curve.loss += m.loss;
    curve.groups.encoder += m.groups.encoder;
    curve.groups.attention += m.groups.attention;
    curve.groups.decoder += m.groups.decoder;
    curve.groups.output += m.groups.output;
    curve.groups.total += m.groups.total;
    if (!std::isnan(m.saturation)) {
        curve.saturation = (saturation_count ? curve.saturation : 0) + m.saturation;
        saturation_count++;
    }
    if (!std::isnan(m.entropy)) {
        curve.entropy = (entropy_count ? curve.entropy : 0) + m.entropy;
        curve.entropy_ratio = (entropy_count ? curve.entropy_ratio : 0) + m.entropy_ratio;
        entropy_count++;
    }
    count++;
}

FlowCurve FlowCurveSum::mean() const {
    FlowCurve c = curve;
    const double n = count;
    for (std::vector<double>* v : {&c.hidden, &c.embedding, &c.direct, &c.recurrent})
        for (double& x : *v) x /= n;
    c.loss /= n;
    c.groups.encoder /= n;
    c.groups.attention /= n;
    c.groups.decoder /= n;
    c.groups.output /= n;
    c.groups.total /= n;
    if (saturation_count) c.saturation /= saturation_count;
    if (entropy_count) {
        c.entropy /= entropy_count;
        c.entropy_ratio /= entropy_count;
    }
    return c;
}

// ---- data ------------------------------------------------------------------------------------

Batch synthetic_batch(const std::string& task, int length, int target_length, int symbols,
                      int batch, Rng& rng) {
    if (task != "copy" && task != "reverse")
        throw Error(fmt::format("synthetic_batch: task '{}' is not copy or reverse", task));
    if (length < 1 || symbols < 1 || batch < 1 || target_length < 0)
        throw Error(fmt::format(
            "synthetic_batch: length {}, symbols {}, batch {}, target length {} must be >= 1 "
            "(target length >= 0)",
            length, symbols, batch, target_length));
    const int K = target_length == 0 ? length : std::min(target_length, length);
    std::vector<EncodedPair> pairs(static_cast<size_t>(batch));
    for (EncodedPair& p : pairs) {
        for (int t = 0; t < length; ++t)
            p.source.push_back(Vocab::num_special + int32_t(rng.below(uint64_t(symbols))));
        p.target.assign(p.source.begin(), p.source.begin() + K);
        if (task == "reverse") std::reverse(p.target.begin(), p.target.end());
        p.target.push_back(Vocab::EOS);
    }
    std::vector<size_t> indices(pairs.size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
    return make_batch(pairs, indices);
}

namespace {

// dates / text: sources made of pairs' sources joined by spaces until they are long enough,
// cut to length − 1 tokens and ended with EOS (as Task::encode_source ends every source), so
// exactly `length` ids; the target is the first pair's target.
Batch pairs_batch(const Task& task, const std::vector<SentencePair>& pool, int length, int batch,
                  Rng& rng) {
    if (pool.empty()) throw Error("gradflow: no sentence pairs to build sources from");
    std::vector<EncodedPair> pairs(static_cast<size_t>(batch));
    for (EncodedPair& p : pairs) {
        const SentencePair& first = pool[rng.below(pool.size())];
        std::string text = first.source;
        std::vector<std::string> tokens = task.pipeline.source_tokens(text);
        for (int guard = 0; int(tokens.size()) < length - 1 && guard < 10000; ++guard) {
            text += " " + pool[rng.below(pool.size())].source;
            tokens = task.pipeline.source_tokens(text);
        }
        tokens.resize(size_t(std::min<int>(length - 1, int(tokens.size()))));
        p.source = task.source_vocab.encode(tokens, /*add_eos=*/true);
        p.target = task.target_vocab.encode(task.pipeline.tokens(first.target), /*add_eos=*/true);
    }
    std::vector<size_t> indices(pairs.size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
    return make_batch(pairs, indices);
}

// Where a model's batches come from: synthetic copy/reverse, or sentence pairs encoded with a
// task's vocabularies (dates, text).
struct DataSource {
    std::string task;
    int target_length = 5, symbols = 20;
    const Task* text_task = nullptr;  // dates / text
    std::vector<SentencePair> pool;
    Batch make(int length, int batch, Rng& rng) const {
        if (text_task) return pairs_batch(*text_task, pool, length, batch, rng);
        return synthetic_batch(task, length, target_length, symbols, batch, rng);
    }
};

// Measures one model at every length, and (with train_steps) trains it and measures again
// (stage "trained", and "stepN" at the steps of measure_at).
// The measurement batch at (L, data seed d) is the same for every model, so that models are
// compared on the same sentences.
class Study {
  public:
    Study(const GradflowOptions& o, GradflowReport& report) : o_(o), report_(report) {}

    void measure_all(size_t model_index, const std::string& name, const std::string& stage,
                     TranslationModel& model, const DataSource& data,
                     const std::vector<int>& data_seeds) {
        model.eval();
        for (int L : o_.lengths)
            for (int d : data_seeds) {
                Rng rng(o_.seed * 1000003 + uint64_t(d) * 7919 + uint64_t(L));
                Batch batch = data.make(L, o_.batch_size, rng);
                FlowCurveSum& acc = sums_[{model_index, stage, L}];
                acc.curve.model = name;
                acc.curve.stage = stage;
                acc.curve.length = L;
                acc.add(measure_gradient_flow(model, batch));
            }
    }

    // Adam on the task, a random L from the lengths at each step; the same batches for every
    // model. Records the loss and the per-group gradient norms (before clipping) of every step.
    // At the steps listed in measure_at (before the last), measures again as stage "stepN".
    void train(size_t model_index, const std::string& name, int seed, TranslationModel& model,
               const DataSource& data, const std::vector<int>& data_seeds) {
        AdamOptions adam_options;
        adam_options.lr = o_.lr;
        Adam adam(model.named_parameters(), adam_options);
        Rng data_rng(o_.seed * 7 + 12345);
        model.train();
        for (int step = 1; step <= o_.train_steps; ++step) {
            int L = o_.lengths[data_rng.below(o_.lengths.size())];
            Batch batch = data.make(L, o_.batch_size, data_rng);
            // models/training/train_step.h: zero_grad → forward_loss → backward → clip → step,
            // the group norms read before clipping (as `seqgrad train` logs them)
            TrainRecord record{name, seed, step, L, 0, {}};
            auto loss_and_gradient = [&](const Batch& b) { return forward_backward(model, b); };
            auto read_groups = [&](const GradClip&) { record.groups = group_grad_norms(model); };
            record.loss =
                train_step(adam, batch, loss_and_gradient, o_.clip_norm, read_groups).loss;
            report_.training.push_back(record);
            if (step < o_.train_steps &&
                std::count(o_.measure_at.begin(), o_.measure_at.end(), step) > 0) {
                measure_all(model_index, name, fmt::format("step{}", step), model, data,
                            data_seeds);
                model.train();
            }
            if (!o_.quiet && (step % 50 == 0 || step == o_.train_steps))
                fmt::print(stderr, "\r{} seed {}: step {}/{} loss {:.3f}   ", name, seed, step,
                           o_.train_steps, record.loss);
        }
        if (!o_.quiet) fmt::print(stderr, "\n");
        model.eval();
    }

    // first_stage: "fresh" for a new model, "run" for a loaded one.
    void study(size_t model_index, const std::string& name, const std::string& first_stage,
               int seed, TranslationModel& model, const DataSource& data,
               const std::vector<int>& data_seeds) {
        measure_all(model_index, name, first_stage, model, data, data_seeds);
        if (o_.train_steps == 0) return;
        train(model_index, name, seed, model, data, data_seeds);
        measure_all(model_index, name, "trained", model, data, data_seeds);
    }

    void finish() {
        for (const auto& [key, acc] : sums_) report_.curves.push_back(acc.mean());
    }

  private:
    const GradflowOptions& o_;
    GradflowReport& report_;
    std::map<std::tuple<size_t, std::string, int>, FlowCurveSum> sums_;
};

std::vector<int> range(int n) {
    std::vector<int> v(size_t(std::max(n, 0)));
    for (int i = 0; i < n; ++i) v[size_t(i)] = i;
    return v;
}

}  // namespace

namespace {

void check_gradflow_options(const GradflowOptions& o) {
    if (o.lengths.empty()) throw Error("gradflow: no source lengths (--lengths)");
    for (int L : o.lengths)
        if (L < 2) throw Error(fmt::format("gradflow: source length {} must be >= 2", L));
    if (o.seeds < 1 || o.batch_size < 1 || o.train_steps < 0)
        throw Error("gradflow: --seeds and --batch must be >= 1, --train-steps >= 0");
    if (o.task != "copy" && o.task != "reverse" && o.task != "dates" && o.task != "text" &&
        !is_long_range_task(o.task))
        throw Error(fmt::format(
            "gradflow: --task '{}': expected copy, reverse, dates, text, adding or copy_memory",
            o.task));
}

// A fresh Transformer of the options' sizes, initialised with seeds seed, seed+1, ...
void study_fresh_transformer(const GradflowOptions& o, Study& study, size_t k,
                             const DataSource& data, int64_t source_vocab, int64_t target_vocab) {
    ModelConfig config = o.model;
    config.kind = "transformer";
    config.d_model = int(o.model.hidden_size);
    config.heads = o.heads;
    config.ff_size = o.ff_size;
    config.encoder_layers = config.decoder_layers = o.transformer_layers;
    config.dropout = 0;
    config.positional = "sinusoidal";
    for (int s = 0; s < o.seeds; ++s) {
        Rng rng(o.seed + uint64_t(s));
        Transformer model(config, source_vocab, target_vocab, rng);
        study.study(k, "transformer", "fresh", s, model, data, {s});
    }
}

// Fresh models, one per cell × attention kind, each initialised with seeds seed, seed+1, ...
void study_fresh_models(const GradflowOptions& o, Study& study, const DataSource& synthetic,
                        const std::vector<SentencePair>& dates) {
    Task dates_task;
    int64_t source_vocab = Vocab::num_special + o.symbols, target_vocab = source_vocab;
    DataSource data = synthetic;
    if (o.task == "text") throw Error("gradflow: --task text needs a TSV run (--run RUN_DIR)");
    if (o.task == "dates") {
        Config config;  // vocabularies from generated dates, as `seqgrad train` builds them
        config.data.task = "dates";
        config.data.dates_train = 5000;
        config.data.dates_valid = 100;
        config.data.dates_test = 100;
        dates_task = prepare_task(config, /*quiet=*/true);
        source_vocab = int64_t(dates_task.source_vocab.size());
        target_vocab = int64_t(dates_task.target_vocab.size());
        data.text_task = &dates_task;
        data.pool = dates;
    }
    // named by the attention alone when the cell is the default GRU (as before --cells existed)
    const std::vector<StudiedModel> models = studied_models(o, /*short_names=*/true);
    for (size_t k = 0; k < models.size(); ++k) {
        if (models[k].attention == "transformer") {
            study_fresh_transformer(o, study, k, data, source_vocab, target_vocab);
            continue;
        }
        for (int s = 0; s < o.seeds; ++s) {
            ModelConfig config = o.model;
            config.attention = models[k].attention;
            config.cell = models[k].cell;
            Rng rng(o.seed + uint64_t(s));
            Seq2Seq model(config, source_vocab, target_vocab, rng);
            study.study(k, models[k].name, "fresh", s, model, data, {s});
        }
    }
}

// Trained runs: one model each; the seeds average over data batches.
void study_trained_runs(const GradflowOptions& o, Study& study, const DataSource& synthetic,
                        const std::vector<SentencePair>& dates) {
    for (size_t k = 0; k < o.run_dirs.size(); ++k) {
        const std::string& dir = o.run_dirs[k];
        LoadedRun run = load_run(dir, "best", /*load_data=*/o.task == "text");
        // named by its attention kind (or "transformer"), plus its directory when two runs
        // share the name
        auto name_of = [](const ModelConfig& m) {
            return m.kind == "transformer" ? std::string("transformer") : m.attention;
        };
        std::string name = name_of(run.config.model);
        for (size_t j = 0; j < o.run_dirs.size(); ++j)
            if (j != k && name_of(Config::load(o.run_dirs[j] + "/config.json").model) == name) {
                std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
                if (p.filename().empty()) p = p.parent_path();
                name += " (" + p.filename().string() + ")";
                break;
            }
        DataSource data = synthetic;
        const int64_t vs = int64_t(run.task.source_vocab.size());
        const int64_t vt = int64_t(run.task.target_vocab.size());
        if (o.task == "dates" || o.task == "text") {
            if (o.task == "dates" && !run.task.is_dates())
                throw Error(
                    fmt::format("gradflow: {} was not trained on dates (use --task text)", dir));
            data.text_task = &run.task;
            data.pool = o.task == "dates" ? dates : run.task.valid;
        } else if (o.symbols > int(std::min(vs, vt)) - Vocab::num_special) {
            throw Error(fmt::format(
                "gradflow: --symbols {} is more than {}'s vocabularies hold ({} and {} ids)",
                o.symbols, dir, vs, vt));
        }
        study.study(k, name, "run", 0, *run.model, data, range(o.seeds));
    }
}

}  // namespace

std::vector<StudiedModel> studied_models(const GradflowOptions& o, bool short_names) {
    const bool attention_only = short_names && o.cells == std::vector<std::string>{"gru"};
    std::vector<StudiedModel> models;
    for (const std::string& cell : o.cells)
        for (const std::string& attention : o.models) {
            if (attention == "transformer" && cell != o.cells.front()) continue;
            const bool alone = attention_only || attention == "transformer";
            models.push_back({cell, attention, alone ? attention : cell + "+" + attention});
        }
    return models;
}

GradflowReport run_gradflow(const GradflowOptions& o) {
    check_gradflow_options(o);
    GradflowReport report;
    if (is_long_range_task(o.task)) {
        if (!o.run_dirs.empty())
            throw Error(fmt::format("gradflow: --task {} studies fresh models (no --run)", o.task));
        run_long_range_study(o, report);
        return report;
    }
    Study study(o, report);
    DataSource synthetic;
    synthetic.task = o.task;
    synthetic.target_length = o.target_length;
    synthetic.symbols = o.symbols;
    // dates: the same generated pairs for every model, whatever its vocabularies
    const std::vector<SentencePair> dates =
        o.task == "dates" ? make_date_splits(5000, 0, 0, 11).train : std::vector<SentencePair>{};
    if (o.run_dirs.empty())
        study_fresh_models(o, study, synthetic, dates);
    else
        study_trained_runs(o, study, synthetic, dates);
    study.finish();
    return report;
}

}  // namespace seqgrad
