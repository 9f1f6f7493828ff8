// The training run: orchestration only. The step is train_step (train_step.h); around it, this
// file keeps the epochs, validation, the test split and the checkpoints. Beside it: stopping
// (signals.h), the run directory's lock (run_lock.h), resume (resume.h), what the ranks agree on
// (rank_agreement.h), timings and the progress line (progress_line.h), the measurements on the
// validation and test splits (evaluation.h).
#include "seqgrad/models/training/trainer.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/task.h"
#include "seqgrad/models/training/checkpoint_average.h"
#include "seqgrad/models/training/data_parallel.h"
#include "seqgrad/models/training/evaluation.h"
#include "seqgrad/models/training/grad_norms.h"
#include "seqgrad/models/training/metrics_log.h"
#include "seqgrad/models/training/progress_line.h"
#include "seqgrad/models/training/rank_agreement.h"
#include "seqgrad/models/training/resume.h"
#include "seqgrad/models/training/run_lock.h"
#include "seqgrad/models/training/train_step.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/schedule.h"
#include "seqgrad/optim/sgd.h"

namespace seqgrad {
namespace {

using json = nlohmann::json;

// The run's optimizer. It zeroes each gradient in its update as it reads it, so that
// train_step's zero_grad makes no pass of its own (Optimizer::set_zero_grads_in_step).
std::unique_ptr<Optimizer> make_optimizer(const TrainConfig& t, const Module& model) {
    auto params = model.named_parameters();
    std::unique_ptr<Optimizer> optimizer;
    if (t.optimizer == "sgd") {
        optimizer =
            std::make_unique<SGD>(params, t.lr, t.momentum, /*nesterov=*/false, t.weight_decay);
    } else {
        AdamOptions o;
        o.lr = t.lr;
        o.weight_decay = t.weight_decay;
        o.decoupled_weight_decay = t.optimizer == "adamw";
        optimizer = std::make_unique<Adam>(params, o);
    }
    optimizer->set_zero_grads_in_step(true);
    return optimizer;
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

json to_json(const GroupGradNorms& n) {
    return json{{"encoder", n.encoder},
                {"attention", n.attention},
                {"decoder", n.decoder},
                {"output", n.output}};
}

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
        check_ranks_can_share(config.train, comm_);
        set_up_threads();
        choose_gradient_source();
        // Everything that can fail on bad input happens before anything is written to disk.
        prepare_task_and_run_dir();
        model_ = make_model(config.model, task_.source_vocab.size(), task_.target_vocab.size(),
                            rng_, options.fused);
        optimizer_ = make_optimizer(config.train, *model_);
        schedule_ = make_schedule(config.train);
        make_batchers();
        if (options.resume) restore(dir_ + "/last.safetensors");
        if (root_)
            metrics_ = options.resume
                           ? MetricsLog::open_for_resume(dir_ + "/metrics.jsonl", progress_.step)
                           : MetricsLog::create(dir_ + "/metrics.jsonl");
        print_header();
    }

    TrainSummary run(const std::function<void(const std::string&)>& on_validation) {
        const TrainConfig& t = config_.train;
        total_steps_ = t.max_steps;
        if (total_steps_ == 0)  // every epoch's batches (with batch_tokens the count varies)
            for (int e = 0; e < t.epochs; ++e)
                total_steps_ += int64_t(train_batches_->num_batches(uint64_t(e)));
        TrainSummary summary;
        summary.metric_name = metric_name(task_);
        start_ = Clock::now();
        model_->train();
        if (progress_.step == 0) save(dir_ + "/last.safetensors");  // a checkpoint to fall back to

        bool stop = false;
        while (!stop && progress_.epoch < uint64_t(t.epochs) && progress_.step < total_steps_) {
            stop = run_epoch(summary, on_validation);
            save(dir_ + "/last.safetensors");
        }
        if (!options_.quiet) fmt::print(stderr, "\n");
        if (stop_requested()) summary.interrupted = true;
        if (comm_.size() > 1) check_parameters_agree(comm_, *model_, progress_.step);
        if (root_ && !summary.interrupted && t.average_last > 0) average(summary);
        if (root_ && !summary.interrupted && !task_.test.empty()) test(summary);
        if (metrics_) metrics_->sync();
        summary.steps = progress_.step;
        summary.epochs_completed = progress_.epochs_completed;
        summary.best_valid_loss = progress_.best_valid_loss;
        summary.seconds = seconds_since(start_);
        return summary;
    }

  private:
    // What the loss is asked for: train.teacher_forcing, label_smoothing, coverage_loss.
    LossOptions loss_options() const {
        LossOptions o;
        o.teacher_forcing = config_.train.teacher_forcing;
        o.label_smoothing = config_.train.label_smoothing;
        o.coverage_loss = config_.train.coverage_loss;
        return o;
    }

    // seqgrad's threads run the optimizer's passes (autograd/kernels/parallel.h) and BLAS's the
    // products (with train.parallel = "data", BLAS's run on one thread: choose_gradient_source).
    void set_up_threads() {
        set_blas_threads(config_.train.threads);
        set_num_threads(config_.train.threads);
    }

    // Where the step's gradient comes from: with train.parallel = "data" and threads > 1, or
    // several ranks, DataParallel runs a share of every batch on each thread and rank; else one
    // forward_loss and backward on this thread.
    void choose_gradient_source() {
        const TrainConfig& t = config_.train;
        if ((t.threads > 1 && t.parallel == "data") || comm_.size() > 1)
            parallel_ = std::make_unique<DataParallel>(t.threads);
        if (parallel_)  // the rows split over threads and ranks
            loss_and_gradient_ = [this](const Batch& batch) {
                return parallel_->forward_backward(*model_, batch, loss_options(), rng_, &comm_);
            };
        else  // forward_loss, then backward, on this thread
            loss_and_gradient_ = [this](const Batch& batch) {
                return forward_backward(*model_, batch, loss_options());
            };
    }

    // Every rank builds the same task from the same data; rank 0 alone writes the run directory
    // (and holds its lock): the vocabularies and BPE codes of a new run, and the config.
    void prepare_task_and_run_dir() {
        const std::string config_text = run_config_json(config_, dir_).dump(2) + "\n";
        if (!options_.resume) task_ = prepare_task(config_, options_.quiet);
        if (root_) lock_ = claim_run_dir(dir_, options_.quiet);  // held until the run ends
        if (options_.resume) {
            task_ = prepare_task_with_vocabs(config_, dir_, true, options_.quiet);
        } else if (root_) {
            task_.source_vocab.save(dir_ + "/vocab.source.json");
            task_.target_vocab.save(dir_ + "/vocab.target.json");
            save_bpe_codes(task_.pipeline, dir_);
            save_skipped_lines(task_, dir_);
            std::filesystem::remove(dir_ + "/best.safetensors");  // an older run's
            std::filesystem::remove(dir_ + "/averaged.safetensors");
            std::filesystem::remove_all(dir_ + "/checkpoints");
        }
        if (root_) write_file_atomically(dir_ + "/config.json", config_text);
    }

    void make_batchers() {
        BatchingOptions b;
        b.batch_size = config_.train.batch_size;
        b.bucket_chunk = size_t(config_.train.bucket_chunk);
        b.batch_tokens = size_t(config_.train.batch_tokens);
        b.max_source_length = size_t(config_.data.max_source_len);
        b.max_target_length = size_t(config_.data.max_target_len);
        b.seed = config_.train.seed;
        train_batches_ = std::make_unique<Batcher>(task_.encode(task_.train), b);
        b.shuffle = false;
        // Validation keeps every pair but those a learned position table cannot read (their
        // loss cannot be computed; validation decoding truncates them,
        // models/decoding/translator.h).
        b.max_source_length = b.max_target_length = size_t(readable_length(config_.model));
        valid_batches_ = std::make_unique<Batcher>(task_.encode(task_.valid), b);
        if (train_batches_->num_examples() == 0)
            throw Error(
                fmt::format("{}: every training pair is longer than data.max_source_len / "
                            "data.max_target_len",
                            task_.name));
    }

    // "bahdanau", "bahdanau with coverage learned, coverage loss 1", "multi-head"
    std::string attention_description() const {
        const ModelConfig& m = config_.model;
        if (m.kind == "transformer") return "multi-head";
        if (m.coverage == "none") return m.attention;
        std::string text = m.attention + " with coverage " + m.coverage;
        if (m.coverage == "subtract") text += fmt::format(" (beta {})", m.coverage_weight);
        if (config_.train.coverage_loss > 0)
            text += fmt::format(", coverage loss {}", config_.train.coverage_loss);
        return text;
    }

    void print_header() const {
        if (options_.quiet) return;
        fmt::print(stderr,
                   "seqgrad train: {} | {} train / {} valid pairs ({} dropped as too long) | "
                   "vocab {} -> {} | {} parameters | attention {}{}\n",
                   task_.name, train_batches_->num_examples(), task_.valid.size(),
                   train_batches_->num_dropped(), task_.source_vocab.size(),
                   task_.target_vocab.size(), model_->parameter_count(), attention_description(),
                   comm_.size() > 1 ? " | " + comm_.description() : std::string());
    }

    // The rest of the current epoch (from progress_.batch_in_epoch). Returns whether training
    // stops: Ctrl-C, max_steps, or early stopping.
    bool run_epoch(TrainSummary& summary, const std::function<void(const std::string&)>& cb) {
        const TrainConfig& t = config_.train;
        EpochIterator it(*train_batches_, progress_.epoch, progress_.batch_in_epoch);
        bool stop = false;
        while (!stop && it.has_next()) {
            const bool log_now = (progress_.step + 1) % t.log_every == 0;
            json group_norms;  // of the clipped gradients, on logging steps
            const double lr = schedule_->lr_at(progress_.step);
            const TrainStepStats r = step(it.next(), lr, log_now ? &group_norms : nullptr);
            window_.add_step(r.loss, r.tokens);
            if (log_now) log_train_record(r, lr, group_norms);
            if (t.validate_every > 0 && progress_.step % t.validate_every == 0) {
                stop = validate(summary, cb);
                window_.start = Clock::now();
            }
            if (any_rank_requested_stop(comm_)) summary.interrupted = stop = true;
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

    // One optimizer step at learning rate lr (train_step.h), and the run's bookkeeping.
    // group_norms: filled with the clipped gradients' group norms (logging steps).
    TrainStepStats step(const Batch& batch, double lr, json* group_norms) {
        optimizer_->set_lr(lr);
        GradientObserver observe;
        if (group_norms)
            observe = [&](const GradClip& clip) {
                *group_norms = to_json(group_grad_norms(*model_, clip.scale));
            };
        TrainStepStats r;
        try {
            r = train_step(*optimizer_, batch, loss_and_gradient_, config_.train.clip_norm,
                           observe);
        } catch (const NonFiniteError& e) {
            throw Error(
                fmt::format("step {}: {} — training stopped; the last good checkpoint is "
                            "{}/last.safetensors (lower train.lr, or set train.clip_norm)",
                            progress_.step + 1, e.what(), dir_));
        } catch (const Error& e) {
            // e.g. a softmax over a row that overflowed to inf: the weights diverged
            throw Error(fmt::format("step {}: {} — training stopped; the last good checkpoint is "
                                    "{}/last.safetensors",
                                    progress_.step + 1, e.what(), dir_),
                        e.kind());
        }
        if (parallel_) {
            window_.communication_seconds += parallel_->last_communication_seconds();
            window_.wait_seconds += parallel_->last_wait_seconds();
        }
        progress_.step++;
        progress_.batch_in_epoch++;
        if (comm_.size() > 1 && progress_.step % kAgreementEvery == 0)
            check_parameters_agree(comm_, *model_, progress_.step);
        return r;
    }

    void log_train_record(const TrainStepStats& r, double lr, const json& group_norms) {
        const double tokens_per_s = window_.tokens_per_s(), mean_loss = window_.mean_loss();
        json record{
            {"type", "train"},
            {"step", progress_.step},
            {"epoch", progress_.epoch + 1},
            {"loss", mean_loss},
            {"lr", lr},
            {"grad_norm", r.grad_norm},
            {"clipped", config_.train.clip_norm > 0 && r.grad_norm > config_.train.clip_norm},
            {"grad_norms", group_norms},
            {"tokens_per_s", tokens_per_s},
            {"elapsed_s", seconds_since(start_)}};
        if (comm_.size() > 1) {  // the gradient sums' share of the logged steps
            const double steps = double(config_.train.log_every);
            record["ranks"] = comm_.size();
            record["communication_ms_per_step"] = 1e3 * window_.communication_seconds / steps;
            record["wait_for_slowest_rank_ms_per_step"] = 1e3 * window_.wait_seconds / steps;
        }
        append_record(record);
        if (!options_.quiet || options_.on_progress) {
            ProgressLine line;
            line.epoch = progress_.epoch;
            line.step = progress_.step;
            line.total_steps = total_steps_;
            line.loss = mean_loss;
            line.grad_norm = r.grad_norm;
            line.tokens_per_s = tokens_per_s;
            line.elapsed_s = seconds_since(start_);
            line.steps_done = progress_.step - first_step_;
            if (!options_.quiet) print_progress_line(line);
            if (options_.on_progress) options_.on_progress(line);
        }
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
            throw Error(fmt::format("{} — training stopped; the last good checkpoint is "
                                    "{}/last.safetensors",
                                    e.what(), dir_),
                        e.kind());
        }
    }

    // Validation: rank 0 measures the loss (teacher forced) and the task metric (greedy
    // decoding); every rank applies the same result to its schedule and patience. Returns
    // whether training should stop early.
    bool validate(TrainSummary& summary, const std::function<void(const std::string&)>& cb) {
        auto start = Clock::now();
        double measured[4] = {0, 0, 0, 0};  // loss, metric, sentences decoded, chrF
        if (root_) {
            const Validation v = measure_validation(*model_, task_, *valid_batches_, config_);
            measured[0] = v.loss;
            measured[1] = v.metric;
            measured[2] = double(v.decoded);
            measured[3] = v.chrf;
        }
        share_from_root(comm_, measured, 4);
        Validation v;
        v.loss = measured[0];
        v.metric = measured[1];
        v.chrf = measured[3];
        const double valid_loss = v.loss, metric = v.metric;
        const auto n = size_t(measured[2]);
        // `best` and early stopping go by train.best_metric (−loss, BLEU or chrF)
        const double score = best_metric_score(v, config_.train.best_metric);
        bool improved = score > progress_.best_score;
        if (improved) {
            progress_.best_score = score;
            progress_.best_valid_loss = valid_loss;
            progress_.bad_validations = 0;
        } else {
            progress_.bad_validations++;
        }
        schedule_->observe(valid_loss);
        summary.last_valid_loss = valid_loss;
        summary.validations++;
        summary.last_valid_metric = metric;
        json record{{"type", "valid"},
                    {"step", progress_.step},
                    {"epoch", progress_.epochs_completed},
                    {"loss", valid_loss},
                    {"perplexity", std::exp(valid_loss)},
                    {summary.metric_name, metric},
                    {"decoded", n},
                    {"seconds", seconds_since(start)}};
        if (!task_.is_dates()) record["chrf"] = v.chrf;
        append_record(record);
        if (!options_.quiet)
            fmt::print(
                stderr, "\nvalidation after step {}: loss {:.4f} (ppl {:.2f}), {} {:.2f}{}{}\n",
                progress_.step, valid_loss, std::exp(valid_loss), summary.metric_name, metric,
                task_.is_dates() ? "" : fmt::format(", chrf {:.2f}", v.chrf),
                improved ? fmt::format(" (best by {})", config_.train.best_metric) : std::string());
        save_validated(improved);
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

    // The checkpoints of a validation: best when it improved, the kept one (train.average_last)
    // and last. The kept one is written before last: a run resumed from an older last writes it
    // again, the same, as it passes this step.
    void save_validated(bool improved) {
        if (improved) save(dir_ + "/best.safetensors");
        if (root_ && config_.train.average_last > 0)
            keep_checkpoint(dir_, progress_.step, *model_,
                            json{{"step", progress_.step},
                                 {"epoch", progress_.epochs_completed},
                                 {"config", run_config_json(config_, dir_)}},
                            config_.train.average_last);
        save(dir_ + "/last.safetensors");
    }

    // train.average_last: the last kept checkpoints averaged into averaged.safetensors, and
    // its validation score printed next to the best checkpoint's. The average is measured in a
    // model of its own: the training model, its RNG and `best` are left as they are.
    void average(TrainSummary& summary) {
        const size_t kept = kept_checkpoints(dir_).size();
        if (kept == 0) return;
        const int n = int(std::min(kept, size_t(config_.train.average_last)));
        const std::string path = average_last_checkpoints(dir_, n);
        Rng rng(config_.train.seed);
        std::unique_ptr<TranslationModel> averaged = make_model(
            config_.model, task_.source_vocab.size(), task_.target_vocab.size(), rng,
            options_.fused);
        load_parameters(load_checkpoint(path), *averaged);
        const Validation v = measure_validation(*averaged, task_, *valid_batches_, config_);
        summary.has_average = true;
        summary.averaged_checkpoints = n;
        summary.average_valid_loss = v.loss;
        summary.average_valid_metric = v.metric;
        const std::string& by = config_.train.best_metric;
        const double best = by == "loss" ? -progress_.best_score : progress_.best_score;
        if (!options_.quiet)
            fmt::print(stderr,
                       "averaged the last {} checkpoints into {} (--checkpoint averaged)\n"
                       "validation of the average: loss {:.4f}, {} {:.2f}{}; the best "
                       "checkpoint's {}: {:.4f}\n",
                       n, path, v.loss, summary.metric_name, v.metric,
                       task_.is_dates() ? "" : fmt::format(", chrf {:.2f}", v.chrf), by, best);
    }

    // The held-out test split, decoded greedily with the best checkpoint's weights. Ctrl-C
    // stops it (no test record is written).
    void test(TrainSummary& summary) {
        std::string best = dir_ + "/best.safetensors";
        if (std::filesystem::exists(best)) load_parameters(load_checkpoint(best), *model_);
        const TestResult r = measure_test(*model_, task_, config_);
        if (!r.complete) {
            summary.interrupted = true;
            return;
        }
        summary.test_metric = r.metric;
        summary.has_test = true;
        append_record(json{{"type", "test"},
                           {"step", progress_.step},
                           {summary.metric_name, summary.test_metric},
                           {"sentences", r.sentences},
                           {"greedy_sentences_per_s", double(r.sentences) / r.seconds}});
        if (!options_.quiet)
            fmt::print(stderr, "test ({} sentences, best checkpoint, greedy): {} {:.2f}\n",
                       r.sentences, summary.metric_name, summary.test_metric);
    }

    TrainingState training_state() {
        return TrainingState{config_, *model_, *optimizer_, *schedule_, rng_, progress_};
    }

    void save(const std::string& path) {
        if (!root_) return;  // rank 0 writes the run directory
        save_training_checkpoint(path, training_state());
    }

    void restore(const std::string& path) {
        restore_training_checkpoint(path, training_state());
        first_step_ = progress_.step;
        if (!options_.quiet)
            fmt::print(stderr, "resuming {} at step {} (epoch {}, batch {})\n", path,
                       progress_.step, progress_.epoch + 1, progress_.batch_in_epoch);
    }

    static constexpr int64_t kAgreementEvery = 100;  // steps between parameter fingerprints

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
    std::unique_ptr<DataParallel> parallel_;  // threads > 1 with parallel = "data", or ranks > 1
    LossAndGradient loss_and_gradient_;       // the step's forward and backward
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
