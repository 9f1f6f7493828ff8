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

#include "seqgrad/autograd/tensor.h"

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

    // One update from the current gradients, each multiplied by grad_scale first; parameters
    // without a gradient buffer (never reached by a backward pass) are left alone. Increments
    // step_count(). The multiplication is the one clip_grad_norm does in place
    // (g · real(scale)), so step(clip_grad_norm_factor(...).scale) makes the same update as
    // clip_grad_norm followed by step() without a pass of its own over the gradients: bit for
    // bit for Adam, AdamW and plain SGD; with an L2 term (Adam or SGD weight_decay) or SGD
    // momentum, the compiler may fuse g · scale into the multiply-add that follows, which can
    // change the last bit of a value. A scale of 1 is not multiplied at all.
    // Throws seqgrad::Error unless grad_scale is finite and >= 0.
    void step(double grad_scale);
    // step(s) with the scale set by set_grad_scale (clip_grad_norm(optimizer, max_norm),
    // optim/clip.h), 1 if none; the scale is used once.
    void step();
    // The factor the next step() multiplies every gradient by as it reads it (clipping's).
    // Throws seqgrad::Error unless finite and >= 0.
    void set_grad_scale(double grad_scale);
    // Zeroes every parameter's gradient (the buffers stay allocated) and forgets a scale set for
    // the next step.
    void zero_grad();
    // The update zeroes each gradient value where it has just read it (off by default), and
    // zero_grad() then has no pass of its own to make as long as no backward pass has run since
    // the step (backward_pass_count, autograd/tensor.h). The optimizer's passes are
    // memory-bound, and zero_grad's own pass writes every gradient once more: with this, a
    // training step written zero_grad, loss, backward, clip, step makes one pass over the
    // gradients after the backward, not three (what the trainer uses). The same numbers, bit
    // for bit. After a step, every gradient the step read is 0.
    void set_zero_grads_in_step(bool on) { zero_grads_in_step_ = on; }

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
    // The update rule, called by step() after it incremented step_count_; the gradient of each
    // parameter is g · grad_scale. With zero_grads, it also sets every gradient it read to 0.
    virtual void update(real grad_scale, bool zero_grads) = 0;

    int64_t step_count_ = 0;

  private:
    void take_step(double grad_scale);
    std::string state_name(size_t buffer, size_t param) const;

    NamedTensors params_;
    double lr_;
    std::vector<std::string> buffer_names_;
    std::vector<std::vector<Tensor>> buffers_;  // [buffer][param]
    double next_grad_scale_ = 1;                // set_grad_scale's, for the next step()
    bool zero_grads_in_step_ = false;
    // The gradients are all 0 since the last step zeroed them, unless a backward pass began
    // after it (backward_pass_count then moved on from this value).
    bool zeroed_by_step_ = false;
    uint64_t backward_passes_at_step_ = 0;
};

}  // namespace seqgrad
