// Learning-rate schedules. Each maps the number of optimizer steps already taken
// (step = 0, 1, 2, ...; the training loop calls optimizer.set_lr(schedule.lr_at(step)) before
// every update) to a learning rate. With t = step + 1 (the 1-based number of the update about
// to be made) and lr the peak rate:
//
//   ConstantLr(lr, warmup = 0)                lr · min(1, t / warmup)
//   StepDecay(lr, step_size, gamma)           lr · gamma^⌊step / step_size⌋   (torch StepLR)
//   WarmupInverseSqrt(lr, warmup)             lr · min(t / w, √(w / t)),  w = max(warmup, 1)
//                                             (the Transformer's "Noam" schedule, peak lr at t = w)
//   WarmupCosine(lr, warmup, total, min_lr)   warmup: lr · t / warmup      (step < warmup)
//                                             then min_lr + (lr − min_lr) · (1 + cos(π p)) / 2,
//                                             p = (step − warmup) / (total − warmup), clamped to
//                                             [0, 1]: lr at step = warmup, min_lr from step = total
//   ReduceOnPlateau(lr, factor, patience, min_lr, cooldown, threshold)
//                                             torch ReduceLROnPlateau, mode "min", relative
//                                             threshold: observe(metric) after each validation;
//                                             lr ← max(lr · factor, min_lr) once the metric has
//                                             not improved (metric < best · (1 − threshold)) for
//                                             more than `patience` validations; after a
//                                             reduction, `cooldown` validations are not counted.
//
// Warmup starts at lr/warmup, never at 0: no update is wasted. Schedules with state
// (ReduceOnPlateau) save it with state_json() and restore it with load_state(), so that a
// resumed run follows the same rates.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace seqgrad {

class LrSchedule {
  public:
    virtual ~LrSchedule() = default;
    // The learning rate for the update that follows `step` completed updates.
    virtual double lr_at(int64_t step) const = 0;
    // A validation metric (lower is better). Only ReduceOnPlateau uses it.
    virtual void observe(double /*metric*/) {}
    virtual nlohmann::json state_json() const { return nlohmann::json::object(); }
    virtual void load_state(const nlohmann::json& /*state*/) {}
};

class ConstantLr : public LrSchedule {
  public:
    explicit ConstantLr(double lr, int64_t warmup_steps = 0);
    double lr_at(int64_t step) const override;

  private:
    double lr_;
    int64_t warmup_;
};

class StepDecay : public LrSchedule {
  public:
    StepDecay(double lr, int64_t step_size, double gamma);
    double lr_at(int64_t step) const override;

  private:
    double lr_, gamma_;
    int64_t step_size_;
};

class WarmupInverseSqrt : public LrSchedule {
  public:
    WarmupInverseSqrt(double lr, int64_t warmup_steps);
    double lr_at(int64_t step) const override;

  private:
    double lr_;
    int64_t warmup_;
};

class WarmupCosine : public LrSchedule {
  public:
    // Needs total_steps > warmup_steps.
    WarmupCosine(double lr, int64_t warmup_steps, int64_t total_steps, double min_lr = 0);
    double lr_at(int64_t step) const override;

  private:
    double lr_, min_lr_;
    int64_t warmup_, total_;
};

class ReduceOnPlateau : public LrSchedule {
  public:
    ReduceOnPlateau(double lr, double factor = 0.1, int patience = 10, double min_lr = 0,
                    int cooldown = 0, double threshold = 1e-4);
    double lr_at(int64_t step) const override;  // the current rate, whatever the step
    void observe(double metric) override;
    nlohmann::json state_json() const override;
    void load_state(const nlohmann::json& state) override;

    double lr() const { return lr_; }
    double best() const { return best_; }
    int bad_validations() const { return num_bad_; }

  private:
    double lr_, factor_, min_lr_, threshold_;
    int patience_, cooldown_;
    double best_;
    int num_bad_ = 0, cooldown_counter_ = 0;
};

}  // namespace seqgrad
