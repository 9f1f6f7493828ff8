#include "seqgrad/optim/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "seqgrad/autograd/tensor.h"  // seqgrad::Error

namespace seqgrad {
namespace {

void check_lr(const char* who, double lr) {
    if (!(lr >= 0) || !std::isfinite(lr))
        throw Error(fmt::format("{}: learning rate {} must be finite and >= 0", who, lr));
}
void check_step(const char* who, int64_t step) {
    if (step < 0) throw Error(fmt::format("{}: step {} < 0", who, step));
}
// lr · t / warmup during warmup (t = step + 1), else lr
double warmed_up(double lr, int64_t step, int64_t warmup) {
    return step + 1 < warmup ? lr * double(step + 1) / double(warmup) : lr;
}

}  // namespace

ConstantLr::ConstantLr(double lr, int64_t warmup_steps) : lr_(lr), warmup_(warmup_steps) {
    check_lr("ConstantLr", lr);
    if (warmup_steps < 0) throw Error(fmt::format("ConstantLr: warmup_steps {} < 0", warmup_steps));
}
double ConstantLr::lr_at(int64_t step) const {
    check_step("ConstantLr", step);
    return warmed_up(lr_, step, warmup_);
}

StepDecay::StepDecay(double lr, int64_t step_size, double gamma)
    : lr_(lr), gamma_(gamma), step_size_(step_size) {
    check_lr("StepDecay", lr);
    if (step_size < 1) throw Error(fmt::format("StepDecay: step_size {} < 1", step_size));
    if (!(gamma > 0 && gamma <= 1))
        throw Error(fmt::format("StepDecay: gamma {} must lie in (0, 1]", gamma));
}
// lr · γ^⌊step / step_size⌋
double StepDecay::lr_at(int64_t step) const {
    check_step("StepDecay", step);
    return lr_ * std::pow(gamma_, double(step / step_size_));
}

WarmupInverseSqrt::WarmupInverseSqrt(double lr, int64_t warmup_steps)
    : lr_(lr), warmup_(std::max<int64_t>(warmup_steps, 1)) {
    check_lr("WarmupInverseSqrt", lr);
    if (warmup_steps < 0)
        throw Error(fmt::format("WarmupInverseSqrt: warmup_steps {} < 0", warmup_steps));
}
// lr · min(t / w, √(w / t))
double WarmupInverseSqrt::lr_at(int64_t step) const {
    check_step("WarmupInverseSqrt", step);
    const double t = double(step + 1), w = double(warmup_);
    return lr_ * std::min(t / w, std::sqrt(w / t));
}

WarmupCosine::WarmupCosine(double lr, int64_t warmup_steps, int64_t total_steps, double min_lr)
    : lr_(lr), min_lr_(min_lr), warmup_(warmup_steps), total_(total_steps) {
    check_lr("WarmupCosine", lr);
    if (warmup_steps < 0 || total_steps <= warmup_steps)
        throw Error(fmt::format(
            "WarmupCosine: needs 0 <= warmup_steps < total_steps, got warmup {} and total {}",
            warmup_steps, total_steps));
    if (!(min_lr >= 0 && min_lr <= lr))
        throw Error(fmt::format("WarmupCosine: min_lr {} must lie in [0, lr = {}]", min_lr, lr));
}
// warmup: lr t / warmup;  then min_lr + (lr − min_lr)(1 + cos π p)/2
double WarmupCosine::lr_at(int64_t step) const {
    check_step("WarmupCosine", step);
    if (step < warmup_) return warmed_up(lr_, step, warmup_);
    const double p = std::min(1.0, double(step - warmup_) / double(total_ - warmup_));
    const double pi = 3.14159265358979323846;
    return min_lr_ + (lr_ - min_lr_) * 0.5 * (1 + std::cos(pi * p));
}

ReduceOnPlateau::ReduceOnPlateau(double lr, double factor, int patience, double min_lr,
                                 int cooldown, double threshold)
    : lr_(lr),
      factor_(factor),
      min_lr_(min_lr),
      threshold_(threshold),
      patience_(patience),
      cooldown_(cooldown),
      best_(std::numeric_limits<double>::infinity()) {
    check_lr("ReduceOnPlateau", lr);
    if (!(factor > 0 && factor < 1))
        throw Error(fmt::format("ReduceOnPlateau: factor {} must lie in (0, 1)", factor));
    if (patience < 0 || cooldown < 0)
        throw Error(fmt::format("ReduceOnPlateau: patience {} and cooldown {} must be >= 0",
                                patience, cooldown));
    if (!(min_lr >= 0)) throw Error(fmt::format("ReduceOnPlateau: min_lr {} < 0", min_lr));
    if (!(threshold >= 0)) throw Error(fmt::format("ReduceOnPlateau: threshold {} < 0", threshold));
}

double ReduceOnPlateau::lr_at(int64_t step) const {
    check_step("ReduceOnPlateau", step);
    return lr_;
}

// torch.optim.lr_scheduler.ReduceLROnPlateau.step(metric), mode "min", threshold_mode "rel"
void ReduceOnPlateau::observe(double metric) {
    if (metric < best_ * (1 - threshold_)) {  // NaN is never an improvement
        best_ = metric;
        num_bad_ = 0;
    } else {
        ++num_bad_;
    }
    if (cooldown_counter_ > 0) {  // just reduced: these validations do not count
        --cooldown_counter_;
        num_bad_ = 0;
    }
    if (num_bad_ > patience_) {
        const double reduced = std::max(lr_ * factor_, min_lr_);
        if (lr_ - reduced > 1e-8) lr_ = reduced;  // PyTorch's eps: no change below 1e-8
        cooldown_counter_ = cooldown_;
        num_bad_ = 0;
    }
}

nlohmann::json ReduceOnPlateau::state_json() const {
    return {{"schedule", "plateau"},
            {"lr", lr_},
            {"best", std::isfinite(best_) ? nlohmann::json(best_) : nlohmann::json()},
            {"num_bad", num_bad_},
            {"cooldown_counter", cooldown_counter_}};
}

void ReduceOnPlateau::load_state(const nlohmann::json& state) {
    for (const char* key : {"lr", "best", "num_bad", "cooldown_counter"})
        if (!state.is_object() || !state.contains(key))
            throw Error(fmt::format("ReduceOnPlateau state: missing '{}' in {}", key, state.dump()),
                        ErrorKind::key);
    const double lr = state.at("lr").get<double>();
    check_lr("ReduceOnPlateau state", lr);
    lr_ = lr;
    best_ = state.at("best").is_null() ? std::numeric_limits<double>::infinity()
                                       : state.at("best").get<double>();
    num_bad_ = state.at("num_bad").get<int>();
    cooldown_counter_ = state.at("cooldown_counter").get<int>();
}

}  // namespace seqgrad
