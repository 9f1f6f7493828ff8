#include "seqgrad/models/training/trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/training/checkpoint.h"
#include "seqgrad/models/training/data_parallel.h"
#include "seqgrad/models/training/metrics_log.h"
#include "seqgrad/models/training/run_lock.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/task.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "seqgrad/optim/schedule.h"
#include "seqgrad/optim/sgd.h"

namespace seqgrad {

std::atomic<bool>& stop_requested() {
    static std::atomic<bool> flag{false};
    return flag;
}

namespace {
// While a WriteSection lives, a second Ctrl-C waits for it to end before exiting (request_stop).
std::atomic<int> stop_requests{0};
std::atomic<int> writes_in_progress{0};
}  // namespace

void request_stop() {
    stop_requested() = true;
    if (++stop_requests >= 2 && writes_in_progress == 0) std::_Exit(130);
}

WriteSection::WriteSection() {
    writes_in_progress++;
}

WriteSection::~WriteSection() {
    if (--writes_in_progress == 0 && stop_requests >= 2) std::_Exit(130);
}

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::unique_ptr<Optimizer> make_optimizer(const TrainConfig& t, const Module& model) {
    auto params = model.named_parameters();
    if (t.optimizer == "sgd")
        return std::make_unique<SGD>(params, t.lr, t.momentum, /*nesterov=*/false, t.weight_decay);
    AdamOptions o;
    o.lr = t.lr;
    o.weight_decay = t.weight_decay;
    o.decoupled_weight_decay = t.optimizer == "adamw";
    return std::make_unique<Adam>(params, o);
}

std::unique_ptr<LrSchedule> make_schedule(const TrainConfig& t) {
    if (t.schedule == "step")
        return std::make_unique<StepDecay>(t.lr, t.decay_steps, t.decay_factor);
    if (t.schedule == "inverse_sqrt")
        return std::make_unique<WarmupInverseSqrt>(t.lr, t.warmup_steps);
    if (t.schedule == "cosine")
        return std::make_unique<WarmupCosine>(t.lr, t.warmup_steps, t.decay_steps, t.min_lr);
    if (t.schedule == "plateau")
        return std::make_unique<ReduceOnPlateau>(t.lr, t.decay_factor,
                                                 t.patience > 1 ? t.patience - 1 : 1, t.min_lr);
    return std::make_unique<ConstantLr>(t.lr, t.warmup_steps);
}

// Gradient norms of the parameter groups a learner cares about.
json group_gradient_norms(const Module& model) {
    double sq[4] = {0, 0, 0, 0};  // encoder, attention, decoder, output
    for (const auto& [name, p] : model.named_parameters()) {
        const real* g = p.grad_data();
        if (!g) continue;
        double s = 0;
        for (int64_t i = 0; i < p.numel(); ++i) s += double(g[i]) * g[i];
        int group = name.rfind("encoder.", 0) == 0             ? 0
                    : name.rfind("decoder.attention.", 0) == 0 ? 1
                    : name.rfind("decoder.out.", 0) == 0       ? 3
                                                               : 2;
        sq[group] += s;
    }
    return json{{"encoder", std::sqrt(sq[0])},
                {"attention", std::sqrt(sq[1])},
                {"decoder", std::sqrt(sq[2])},
                {"output", std::sqrt(sq[3])}};
}

struct Progress {
    int64_t step = 0;           // optimizer steps done
    uint64_t epoch = 0;         // current epoch
    size_t batch_in_epoch = 0;  // next batch of the current epoch
    double best_valid_loss = INFINITY;
    int bad_validations = 0;
    int epochs_completed = 0;

    json to_json() const {
        return json{
            {"step", step},
            {"epoch", epoch},
            {"batch_in_epoch", batch_in_epoch},
            {"best_valid_loss", std::isfinite(best_valid_loss) ? json(best_valid_loss) : json()},
            {"bad_validations", bad_validations},
            {"epochs_completed", epochs_completed}};
    }
    static Progress from_json(const json& j) {
        Progress p;
        p.step = j.at("step").get<int64_t>();
        p.epoch = j.at("epoch").get<uint64_t>();
        p.batch_in_epoch = j.at("batch_in_epoch").get<size_t>();
        p.best_valid_loss =
            j.at("best_valid_loss").is_null() ? INFINITY : j.at("best_valid_loss").get<double>();
        p.bad_validations = j.at("bad_validations").get<int>();
        p.epochs_completed = j.at("epochs_completed").get<int>();
        return p;
    }
};

// The config as the run directory keeps it: data paths rewritten relative to the run
// directory (where config.json lives), so that resume, eval and translate find the data.
json run_config_json(const Config& config, const std::string& run_dir) {
    json j = config.to_json();
    for (const char* key : {"train", "valid", "test"}) {
        std::string path = j["data"][key].get<std::string>();
        if (path.empty()) continue;
        std::filesystem::path absolute = std::filesystem::absolute(config.resolve(path));
        j["data"][key] =
            std::filesystem::proximate(absolute, std::filesystem::absolute(run_dir)).string();
    }
    return j;
}

// The loss, token and timing sums between two train records.
struct LogWindow {
    Clock::time_point start = Clock::now();
    int64_t tokens = 0;
    double loss_sum = 0;
    double communication_seconds = 0, wait_seconds = 0;  // across ranks (models/training/data_parallel.h)
    void restart() { *this = LogWindow(); }
};

// What one optimizer step measured.
struct StepResult {
    double loss = 0, lr = 0, grad_norm = 0;
    int64_t tokens = 0;
    json group_norms;  // on logging steps only
};

class Run {
  public:
    Run(const Config& config, const TrainOptions& options)
        : config_(config),
          options_(options),
          dir_(config.output.run_dir),
          rng_(config.train.seed),
          own_communicator_(options.communicator ? nullptr : single_process()),
          comm_(options.communicator ? *options.communicator : *own_communicator_),
          root_(comm_.is_root()) {
        if (!root_) options_.quiet = true;  // rank 0 alone prints
        set_blas_threads(config.train.threads);
        set_num_threads(config.train.threads);  // the optimizer's passes (autograd/kernels/parallel.h)
        if (comm_.size() > 1 && config.train.parallel != "data")
            throw Error(
                fmt::format("train.parallel = \"{}\" cannot span {} processes: use "
                            "\"data\" (each rank runs its share of every batch)",
                            config.train.parallel, comm_.size()));
        if ((config.train.threads > 1 && config.train.parallel == "data") || comm_.size() > 1)
            parallel_ = std::make_unique<DataParallel>(config.train.threads);  // BLAS: 1 thread
        // Everything that can fail on bad input happens before anything is written to disk.
        // Every rank builds the same task from the same data; rank 0 alone writes the run
        // directory (and holds its lock).
        const std::string config_text = run_config_json(config, dir_).dump(2) + "\n";
        if (!options.resume) task_ = prepare_task(config, options_.quiet);
        if (root_) {
            std::filesystem::create_directories(dir_);
            lock_ = std::make_unique<RunDirLock>(dir_);  // held until the run ends
            for (const std::string& stale : remove_stale_temporaries(dir_))
                if (!options_.quiet)
                    fmt::print(stderr, "removed {} (left by a process that died)\n", stale);
        }
        if (options.resume) {
            task_ = prepare_task_with_vocabs(config, dir_, true, options_.quiet);
        } else if (root_) {
            task_.source_vocab.save(dir_ + "/vocab.source.json");
            task_.target_vocab.save(dir_ + "/vocab.target.json");
            save_bpe_codes(task_.pipeline, dir_);
            std::filesystem::remove(dir_ + "/best.safetensors");  // an older run's
        }
        if (root_) write_file_atomically(dir_ + "/config.json", config_text);
        model_ = make_model(config.model, task_.source_vocab.size(), task_.target_vocab.size(),
                            rng_);
        optimizer_ = make_optimizer(config.train, *model_);
        schedule_ = make_schedule(config.train);
        make_batchers();
        if (options.resume) restore(dir_ + "/last.safetensors");
        if (root_)
            metrics_ = options.resume
                           ? MetricsLog::open_for_resume(dir_ + "/metrics.jsonl", progress_.step)
                           : MetricsLog::create(dir_ + "/metrics.jsonl");
        if (!options_.quiet) {
            fmt::print(stderr,
                       "seqgrad train: {} | {} train / {} valid pairs ({} dropped as too long) | "
                       "vocab {} -> {} | {} parameters | attention {}{}\n",
                       task_.name, train_batches_->num_examples(), task_.valid.size(),
                       train_batches_->num_dropped(), task_.source_vocab.size(),
                       task_.target_vocab.size(), model_->parameter_count(),
                       config.model.kind == "transformer" ? "multi-head" : config.model.attention,
                       comm_.size() > 1 ? " | " + comm_.description() : std::string());
        }
    }

    TrainSummary run(const std::function<void(const std::string&)>& on_validation) {
        const TrainConfig& t = config_.train;
        total_steps_ = t.max_steps > 0 ? t.max_steps
                                       : int64_t(t.epochs) * int64_t(train_batches_->num_batches());
        TrainSummary summary;
        summary.metric_name = task_.is_dates() ? "accuracy" : "bleu";
        start_ = Clock::now();
        model_->train();
        if (progress_.step == 0) save(dir_ + "/last.safetensors");  // a checkpoint to fall back to

        // every step ends with step_and_zero_grad: the gradients are zero at the top of the next
        optimizer_->zero_grad();
        bool stop = false;
        while (!stop && progress_.epoch < uint64_t(t.epochs) && progress_.step < total_steps_) {
            stop = run_epoch(summary, on_validation);
            save(dir_ + "/last.safetensors");
        }
        if (!options_.quiet) fmt::print(stderr, "\n");
        if (stop_requested()) summary.interrupted = true;
        if (comm_.size() > 1) check_parameters_agree();
        if (root_ && !summary.interrupted && !task_.test.empty()) test(summary);
        if (metrics_) metrics_->sync();
        summary.steps = progress_.step;
        summary.epochs_completed = progress_.epochs_completed;
        summary.best_valid_loss = progress_.best_valid_loss;
        summary.seconds = seconds_since(start_);
        return summary;
    }

  private:
    void make_batchers() {
        BatchingOptions b;
        b.batch_size = config_.train.batch_size;
        b.bucket_chunk = size_t(config_.train.bucket_chunk);
        b.max_source_length = size_t(config_.data.max_source_len);
        b.max_target_length = size_t(config_.data.max_target_len);
        b.seed = config_.train.seed;
        train_batches_ = std::make_unique<Batcher>(task_.encode(task_.train), b);
        b.shuffle = false;
        b.max_source_length = b.max_target_length = 0;
        valid_batches_ = std::make_unique<Batcher>(task_.encode(task_.valid), b);
        if (train_batches_->num_examples() == 0)
            throw Error(
                fmt::format("{}: every training pair is longer than data.max_source_len / "
                            "data.max_target_len",
                            task_.name));
    }

    // The rest of the current epoch (from progress_.batch_in_epoch). Returns whether training
    // stops: Ctrl-C, max_steps, or early stopping.
    bool run_epoch(TrainSummary& summary, const std::function<void(const std::string&)>& cb) {
        const TrainConfig& t = config_.train;
        EpochIterator it(*train_batches_, progress_.epoch, progress_.batch_in_epoch);
        bool stop = false;
        while (!stop && it.has_next()) {
            const bool log_now = (progress_.step + 1) % t.log_every == 0;
            StepResult r = step(it.next(), log_now);
            window_.tokens += r.tokens;
            window_.loss_sum += r.loss * double(r.tokens);
            if (log_now) log_train_record(r);
            if (t.validate_every > 0 && progress_.step % t.validate_every == 0) {
                stop = validate(summary, cb);
                window_.start = Clock::now();
            }
            if (any_rank_requested_stop()) summary.interrupted = stop = true;
            if (progress_.step >= total_steps_) stop = true;
        }
        if (!it.has_next()) {  // the epoch is complete
            progress_.epoch++;
            progress_.batch_in_epoch = 0;
            progress_.epochs_completed++;
            if (t.validate_every == 0 && !summary.interrupted) {
                stop = validate(summary, cb) || stop;
                window_.start = Clock::now();
            }
        }
        return stop;
    }

    // One optimizer step: forward (teacher forcing), backward, clipping, update.
    StepResult step(const Batch& batch, bool log_now) {
        const TrainConfig& t = config_.train;
        StepResult r;
        r.lr = schedule_->lr_at(progress_.step);
        optimizer_->set_lr(r.lr);
        LossOutput out;
        try {
            if (parallel_)  // forward and backward, the rows split over threads and ranks
                out = parallel_->forward_backward(*model_, batch, t.teacher_forcing,
                                                  t.label_smoothing, rng_, &comm_);
            else
                out = model_->forward_loss(batch, t.teacher_forcing, t.label_smoothing);
        } catch (const Error& e) {
            // e.g. a softmax over a row that overflowed to inf: the weights diverged
            throw Error(
                fmt::format("step {}: {} — training stopped; the last good "
                            "checkpoint is {}/last.safetensors",
                            progress_.step + 1, e.what(), dir_));
        }
        r.loss = out.loss.item();
        r.tokens = out.num_tokens;
        if (!std::isfinite(r.loss)) fail_non_finite("loss", r.loss);
        if (!parallel_) out.loss.backward();
        // clip_grad_norm, with the factor applied by the optimizer step (no pass of its
        // own), except on logging steps: the group norms logged are the clipped ones.
        const std::vector<Tensor> params = model_->parameters();
        GradClip clip = clip_grad_norm_factor(params, t.clip_norm > 0 ? t.clip_norm : INFINITY);
        r.grad_norm = clip.norm;
        if (!std::isfinite(r.grad_norm)) fail_non_finite("gradient norm", r.grad_norm);
        if (log_now && clip.clipped()) {
            scale_grads(params, clip.scale);
            clip.scale = 1;
        }
        if (log_now) r.group_norms = group_gradient_norms(*model_);
        optimizer_->step_and_zero_grad(clip.scale);
        if (parallel_) {
            window_.communication_seconds += parallel_->last_communication_seconds();
            window_.wait_seconds += parallel_->last_wait_seconds();
        }
        progress_.step++;
        progress_.batch_in_epoch++;
        if (comm_.size() > 1 && progress_.step % kAgreementEvery == 0) check_parameters_agree();
        return r;
    }

    void log_train_record(const StepResult& r) {
        const double elapsed = seconds_since(window_.start);
        const double tokens_per_s = double(window_.tokens) / std::max(elapsed, 1e-9);
        const double mean_loss = window_.loss_sum / double(std::max<int64_t>(window_.tokens, 1));
        json record{
            {"type", "train"},
            {"step", progress_.step},
            {"epoch", progress_.epoch + 1},
            {"loss", mean_loss},
            {"lr", r.lr},
            {"grad_norm", r.grad_norm},
            {"clipped", config_.train.clip_norm > 0 && r.grad_norm > config_.train.clip_norm},
            {"grad_norms", r.group_norms},
            {"tokens_per_s", tokens_per_s},
            {"elapsed_s", seconds_since(start_)}};
        if (comm_.size() > 1) {  // the gradient sums' share of the logged steps
            const double steps = double(config_.train.log_every);
            record["ranks"] = comm_.size();
            record["communication_ms_per_step"] = 1e3 * window_.communication_seconds / steps;
            record["wait_for_slowest_rank_ms_per_step"] = 1e3 * window_.wait_seconds / steps;
        }
        append_record(record);
        show_progress(mean_loss, tokens_per_s, r.grad_norm);
        window_.restart();
    }

    // A record for metrics.jsonl. A failed write stops the run (MetricsLog says why), keeping
    // the last checkpoint written, whose step the metrics file still covers.
    void append_record(const json& record) {
        if (!metrics_) return;  // not rank 0
        WriteSection writing;
        try {
            metrics_->append(record);
        } catch (const Error& e) {
            throw Error(
                fmt::format("{} — training stopped; the last good checkpoint is "
                            "{}/last.safetensors",
                            e.what(), dir_));
        }
    }

    [[noreturn]] void fail_non_finite(const char* what, double value) {
        throw Error(
            fmt::format("step {}: the {} became {} — training stopped; the last good "
                        "checkpoint is {}/last.safetensors (lower train.lr, or set "
                        "train.clip_norm)",
                        progress_.step + 1, what, value, dir_));
    }

    void show_progress(double loss, double tokens_per_s, double grad_norm) {
        if (options_.quiet) return;
        double elapsed = seconds_since(start_);
        double per_step = elapsed / double(std::max<int64_t>(progress_.step - first_step_, 1));
        double eta = per_step * double(total_steps_ - progress_.step);
        bool tty = isatty(STDERR_FILENO);
        fmt::print(stderr,
                   "{}epoch {} step {}/{} loss {:.4f} |g| {:.3f} {:.0f} tok/s ETA {:.0f}s{}",
                   tty ? "\r" : "", progress_.epoch + 1, progress_.step, total_steps_, loss,
                   grad_norm, tokens_per_s, eta, tty ? "   " : "\n");
    }

    // Greedy translations of `sources`, a chunk at a time so that Ctrl-C is heard between
    // chunks. Returns fewer than sources.size() when a stop was requested.
    std::vector<std::string> decode_greedy(const std::vector<std::string>& sources) {
        DecodeOptions greedy = decode_options_from(config_.decode);
        greedy.beam_size = 1;
        constexpr size_t kChunk = 256;
        std::vector<std::string> hypotheses;
        for (size_t begin = 0; begin < sources.size() && !stop_requested(); begin += kChunk) {
            std::vector<std::string> chunk(
                sources.begin() + long(begin),
                sources.begin() + long(std::min(sources.size(), begin + kChunk)));
            for (const Translation& tr : translate(*model_, task_, chunk, greedy))
                hypotheses.push_back(tr.text);
        }
        return hypotheses;
    }
    // Validation loss (teacher forced), the task metric from greedy decoding, and the number of
    // sentences decoded, into result[0..2].
    void measure_validation(double result[3]) {
        model_->eval();
        double loss_sum = 0;
        int64_t tokens = 0;
        {
            NoGradGuard no_grad;
            EpochIterator it(*valid_batches_, 0);
            while (it.has_next()) {
                Batch batch = it.next();
                LossOutput out = model_->forward_loss(batch, 1.0, 0.0);
                loss_sum += out.loss.item() * double(out.num_tokens);
                tokens += out.num_tokens;
            }
        }
        double valid_loss = loss_sum / std::max<int64_t>(tokens, 1);
        size_t n = std::min(task_.valid.size(), size_t(config_.train.max_valid_decode));
        std::vector<std::string> sources, references;
        for (size_t i = 0; i < n; ++i) {
            sources.push_back(task_.valid[i].source);
            // the model writes normalised text: compare with the normalised reference
            references.push_back(task_.pipeline.join(task_.pipeline.tokens(task_.valid[i].target)));
        }
        // Ctrl-C during the decoding: the metric of the sentences decoded so far
        const std::vector<std::string> hypotheses = decode_greedy(sources);
        n = hypotheses.size();
        references.resize(n);
        double metric = 0;
        if (n > 0) {
            if (task_.is_dates()) {
                metric = 100.0 * exact_match_accuracy(hypotheses, references);
            } else {
                std::vector<std::string> normalized_refs;
                for (const auto& r : references)
                    normalized_refs.push_back(task_.pipeline.join(task_.pipeline.tokens(r)));
                metric = corpus_bleu(hypotheses, {normalized_refs}).score;
            }
        }
        model_->train();
        result[0] = valid_loss;
        result[1] = metric;
        result[2] = double(n);
    }

    // Validation: rank 0 measures the loss (teacher forced) and the task metric (greedy
    // decoding); every rank applies the same result to its schedule and patience. Returns
    // whether training should stop early.
    bool validate(TrainSummary& summary, const std::function<void(const std::string&)>& cb) {
        auto start = Clock::now();
        double measured[3] = {0, 0, 0};
        if (root_) measure_validation(measured);
        if (comm_.size() > 1) comm_.broadcast(measured, sizeof measured, 0);
        const double valid_loss = measured[0], metric = measured[1];
        const auto n = size_t(measured[2]);
        bool improved = valid_loss < progress_.best_valid_loss;
        if (improved) {
            progress_.best_valid_loss = valid_loss;
            progress_.bad_validations = 0;
        } else {
            progress_.bad_validations++;
        }
        schedule_->observe(valid_loss);
        summary.last_valid_loss = valid_loss;
        summary.validations++;
        summary.last_valid_metric = metric;
        append_record(json{{"type", "valid"},
                           {"step", progress_.step},
                           {"epoch", progress_.epochs_completed},
                           {"loss", valid_loss},
                           {"perplexity", std::exp(valid_loss)},
                           {summary.metric_name, metric},
                           {"decoded", n},
                           {"seconds", seconds_since(start)}});
        if (!options_.quiet)
            fmt::print(stderr,
                       "\nvalidation after step {}: loss {:.4f} (ppl {:.2f}), {} {:.2f}{}\n",
                       progress_.step, valid_loss, std::exp(valid_loss), summary.metric_name,
                       metric, improved ? " (best)" : "");
        if (improved) save(dir_ + "/best.safetensors");
        save(dir_ + "/last.safetensors");
        if (cb && root_) cb(dir_);
        int patience = config_.train.patience;
        if (patience > 0 && progress_.bad_validations >= patience) {
            summary.stopped_early = true;
            if (!options_.quiet)
                fmt::print(stderr, "early stopping: no improvement in {} validations\n", patience);
            return true;
        }
        return false;
    }

    // The held-out test split, decoded greedily with the best checkpoint's weights. Ctrl-C
    // stops it (no test record is written).
    void test(TrainSummary& summary) {
        std::string best = dir_ + "/best.safetensors";
        if (std::filesystem::exists(best)) load_parameters(load_safetensors(best), *model_);
        model_->eval();
        std::vector<std::string> sources, references, hypotheses;
        for (const auto& p : task_.test) {
            sources.push_back(p.source);
            references.push_back(task_.pipeline.join(task_.pipeline.tokens(p.target)));
        }
        auto start = Clock::now();
        hypotheses = decode_greedy(sources);
        double seconds = seconds_since(start);
        model_->train();
        if (hypotheses.size() < sources.size()) {
            summary.interrupted = true;
            return;
        }
        summary.test_metric = task_.is_dates()
                                  ? 100.0 * exact_match_accuracy(hypotheses, references)
                                  : corpus_bleu(hypotheses, {references}).score;
        summary.has_test = true;
        append_record(json{{"type", "test"},
                           {"step", progress_.step},
                           {summary.metric_name, summary.test_metric},
                           {"sentences", sources.size()},
                           {"greedy_sentences_per_s", double(sources.size()) / seconds}});
        if (!options_.quiet)
            fmt::print(stderr, "test ({} sentences, best checkpoint, greedy): {} {:.2f}\n",
                       sources.size(), summary.metric_name, summary.test_metric);
    }

    void save(const std::string& path) {
        if (!root_) return;  // rank 0 writes the run directory
        json meta{{"progress", progress_.to_json()},
                  {"rng", rng_state_to_json(rng_)},
                  {"optimizer", optimizer_->state_json()},
                  {"schedule", schedule_->state_json()},
                  {"config", config_.to_json()}};
        WriteSection writing;
        save_checkpoint(path, *model_, optimizer_->state_tensors(), meta);
    }

    void restore(const std::string& path) {
        SafetensorsFile file = load_safetensors(path);
        check_checkpoint_cell(file, config_.model);
        load_parameters(file, *model_);
        json meta = checkpoint_metadata(file);
        for (const char* key : {"progress", "rng", "optimizer", "schedule"})
            if (!meta.is_object() || !meta.contains(key))
                throw Error(fmt::format(
                    "{}: cannot resume: the checkpoint has no training state ('{}' is missing "
                    "from its seqgrad metadata); it holds weights only (`translate` and `eval` "
                    "can use it, `train --resume` cannot)",
                    path, key));
        try {
            progress_ = Progress::from_json(meta.at("progress"));
            rng_.set_state(rng_state_from_json(meta.at("rng")));
            NamedTensors tensors;
            for (const auto& t : file.tensors) tensors.emplace_back(t.name, t.value);
            optimizer_->load_state(tensors, meta.at("optimizer"));
            schedule_->load_state(meta.at("schedule"));
        } catch (const nlohmann::json::exception& e) {
            throw Error(
                fmt::format("{}: cannot resume: the training state in its metadata is "
                            "malformed ({})",
                            path, e.what()));
        } catch (const Error& e) {
            throw Error(fmt::format("{}: cannot resume: {}", path, e.what()));
        }
        first_step_ = progress_.step;
        if (!options_.quiet)
            fmt::print(stderr, "resuming {} at step {} (epoch {}, batch {})\n", path,
                       progress_.step, progress_.epoch + 1, progress_.batch_in_epoch);
    }

    // Every rank's parameters must be bit-identical; a fingerprint of all of them is compared.
    void check_parameters_agree() {
        uint64_t print = fingerprint(nullptr, 0);
        for (const Tensor& p : model_->parameters())
            print = fingerprint(p.data(), size_t(p.numel()) * sizeof(real), print);
        const std::vector<uint64_t> prints = comm_.gather_all(print);
        for (size_t r = 1; r < prints.size(); ++r)
            if (prints[r] != prints[0])
                throw Error(
                    fmt::format("step {}: the parameters of rank {} differ from rank 0's "
                                "(every rank must take the same steps from the same "
                                "start); training stopped",
                                progress_.step, r));
    }

    // A stop request (Ctrl-C, SIGTERM) on any rank stops every rank after the same step.
    bool any_rank_requested_stop() {
        int64_t requested = stop_requested() ? 1 : 0;
        if (comm_.size() > 1) comm_.sum(&requested, 1);
        return requested > 0;
    }

    static constexpr int64_t kAgreementEvery = 100;

    Config config_;
    TrainOptions options_;
    std::string dir_;
    Rng rng_;
    std::unique_ptr<Communicator> own_communicator_;  // when the options bring none
    Communicator& comm_;
    bool root_;
    Task task_;
    std::unique_ptr<TranslationModel> model_;  // model.kind's
    std::unique_ptr<Optimizer> optimizer_;
    std::unique_ptr<DataParallel> parallel_;  // threads > 1 with parallel = "data"
    std::unique_ptr<LrSchedule> schedule_;
    std::unique_ptr<Batcher> train_batches_, valid_batches_;
    std::unique_ptr<RunDirLock> lock_;
    std::optional<MetricsLog> metrics_;
    Progress progress_;
    int64_t first_step_ = 0;
    int64_t total_steps_ = 0;
    Clock::time_point start_;
    LogWindow window_;
};

}  // namespace

TrainSummary train(const Config& config, const TrainOptions& options) {
    Run run(config, options);
    return run.run(options.on_validation);
}

}  // namespace seqgrad
