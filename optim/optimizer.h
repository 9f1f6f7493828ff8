// Optimizer: updates named parameters from their gradients (.grad), PyTorch style.
//
// The optimizer keeps, per parameter, the state its rule needs (momentum buffers, Adam's
// moments) as tensors of the parameter's shape, plus a step count and the learning rate. For
// checkpoints all of it can be exported and restored:
//   state_tensors()  named "<kind>.<buffer>.<parameter name>",
//                    e.g. "adam.exp_avg.encoder.gru.weight_ih_l0"
//   state_json()     {"optimizer": "<kind>", "step": n, "lr": lr, hyperparameters...}
//   load_state(tensors, json) restores them, so that a resumed run takes exactly (bit for bit)
//   the steps an uninterrupted one would have taken.
// Subclasses: SGD (optim/sgd.h), Adam and AdamW (optim/adam.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace seqgrad {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Optimizer {
  public:
    // Parameters as Module::named_parameters() gives them. Throws seqgrad::Error on a duplicate
    // name, an undefined tensor, or a negative learning rate.
    Optimizer(NamedTensors named_params, double lr);
    virtual ~Optimizer() = default;
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    // One update from the current gradients; parameters without a gradient buffer (never
    // reached by a backward pass) are left alone. Increments step_count().
    virtual void step() = 0;
    // Zeroes every parameter's gradient (the buffers stay allocated).
    void zero_grad();

    double lr() const { return lr_; }
    void set_lr(double lr);  // what learning-rate schedules call before each step
    int64_t step_count() const { return step_count_; }
    // "sgd", "adam" or "adamw": the prefix of the state tensors' names.
    virtual const char* kind() const = 0;

    const NamedTensors& named_parameters() const { return params_; }
    std::vector<Tensor> parameters() const;

    // ---- checkpoint state ----
    NamedTensors state_tensors() const;
    nlohmann::json state_json() const;
    // Throws seqgrad::Error, changing nothing, when the state belongs to another kind of
    // optimizer, or a tensor is missing, has the wrong shape, or is not one of ours.
    void load_state(const NamedTensors& tensors, const nlohmann::json& state);

  protected:
    // Declares a per-parameter buffer ("exp_avg"...): one zero tensor per parameter.
    // Returns its index for state().
    size_t add_state_buffer(const std::string& name);
    // The buffer `buffer` of parameter `param` (same shape as the parameter).
    Tensor& state(size_t buffer, size_t param) { return buffers_[buffer][param]; }
    virtual nlohmann::json hyperparameters() const = 0;

    int64_t step_count_ = 0;

  private:
    std::string state_name(size_t buffer, size_t param) const;

    NamedTensors params_;
    double lr_;
    std::vector<std::string> buffer_names_;
    std::vector<std::vector<Tensor>> buffers_;  // [buffer][param]
};

}  // namespace seqgrad
