#include "seqgrad/optim/optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <map>
#include <set>
#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {

Optimizer::Optimizer(NamedTensors named_params, double lr) : params_(std::move(named_params)) {
    std::set<std::string> seen;
    for (const auto& [name, p] : params_) {
        if (!p.defined())
            throw Error(fmt::format("optimizer: parameter '{}' is an undefined tensor", name));
        if (!seen.insert(name).second)
            throw Error(fmt::format("optimizer: parameter '{}' given twice", name));
    }
    set_lr(lr);
}

void Optimizer::set_lr(double lr) {
    if (!(lr >= 0) || !std::isfinite(lr))
        throw Error(fmt::format("optimizer: learning rate {} must be finite and >= 0", lr));
    lr_ = lr;
}

namespace {

void check_grad_scale(double grad_scale) {
    if (!(grad_scale >= 0) || !std::isfinite(grad_scale))
        throw Error(
            fmt::format("optimizer: gradient scale {} must be finite and >= 0", grad_scale));
}

}  // namespace

void Optimizer::step(double grad_scale) {
    check_grad_scale(grad_scale);
    take_step(grad_scale);
}

void Optimizer::step() {
    const double grad_scale = next_grad_scale_;
    next_grad_scale_ = 1;
    take_step(grad_scale);
}

void Optimizer::set_grad_scale(double grad_scale) {
    check_grad_scale(grad_scale);
    next_grad_scale_ = grad_scale;
}

void Optimizer::take_step(double grad_scale) {
    ++step_count_;
    update(real(grad_scale), zero_grads_in_step_);
    zeroed_by_step_ = zero_grads_in_step_;
    backward_passes_at_step_ = backward_pass_count();
}

void Optimizer::zero_grad() {
    next_grad_scale_ = 1;
    // the last update zeroed every gradient as it read it, and nothing was written since
    if (zeroed_by_step_ && backward_pass_count() == backward_passes_at_step_) return;
    zeroed_by_step_ = false;
    // what Tensor::zero_grad does, cut between the threads in the fast build
    std::vector<real*> grads;
    std::vector<int64_t> sizes;
    for (auto& [_, p] : params_) {
        if (!p.has_grad()) continue;
        grads.push_back(p.mutable_grad_data());
        sizes.push_back(p.numel());
    }
    kernels::zero_arrays(grads, sizes);
}

std::vector<Tensor> Optimizer::parameters() const {
    std::vector<Tensor> out;
    for (const auto& [_, p] : params_) out.push_back(p);
    return out;
}

size_t Optimizer::add_state_buffer(const std::string& name) {
    buffer_names_.push_back(name);
    std::vector<Tensor> per_param;
    for (const auto& [_, p] : params_) per_param.push_back(Tensor::zeros(p.shape()));
    buffers_.push_back(std::move(per_param));
    return buffers_.size() - 1;
}

std::string Optimizer::state_name(size_t buffer, size_t param) const {
    return fmt::format("{}.{}.{}", kind(), buffer_names_[buffer], params_[param].first);
}

NamedTensors Optimizer::state_tensors() const {
    NamedTensors out;
    for (size_t b = 0; b < buffers_.size(); ++b)
        for (size_t i = 0; i < params_.size(); ++i)
            out.emplace_back(state_name(b, i), buffers_[b][i]);
    return out;
}

nlohmann::json Optimizer::state_json() const {
    nlohmann::json j = hyperparameters();
    j["optimizer"] = kind();
    j["step"] = step_count_;
    j["lr"] = lr_;
    return j;
}

void Optimizer::load_state(const NamedTensors& tensors, const nlohmann::json& state) {
    // Check everything first, so that a failed load leaves the optimizer as it was.
    if (!state.is_object() || !state.contains("optimizer") || !state.contains("step") ||
        !state.contains("lr"))
        throw Error(fmt::format(
            "optimizer state: expected a JSON object with 'optimizer', 'step' and 'lr', got {}",
            state.dump()));
    const std::string saved_kind = state.at("optimizer").get<std::string>();
    if (saved_kind != kind())
        throw Error(fmt::format("optimizer state was saved by '{}', this optimizer is '{}'",
                                saved_kind, kind()));
    const int64_t step = state.at("step").get<int64_t>();
    const double lr = state.at("lr").get<double>();
    if (step < 0) throw Error(fmt::format("optimizer state: step {} < 0", step));

    std::map<std::string, const Tensor*> by_name;
    for (const auto& [name, t] : tensors) by_name[name] = &t;
    std::set<std::string> expected;
    std::vector<std::vector<const Tensor*>> found(buffers_.size());
    for (size_t b = 0; b < buffers_.size(); ++b)
        for (size_t i = 0; i < params_.size(); ++i) {
            const std::string name = state_name(b, i);
            expected.insert(name);
            auto it = by_name.find(name);
            if (it == by_name.end())
                throw Error(fmt::format("optimizer state: missing tensor '{}'", name),
                            ErrorKind::key);
            if (it->second->shape() != params_[i].second.shape())
                throw Error(fmt::format("optimizer state: '{}' is {}, the parameter is {}", name,
                                        it->second->shape().str(),
                                        params_[i].second.shape().str()));
            found[b].push_back(it->second);
        }
    // A tensor of our kind that no parameter claims: a renamed or removed parameter.
    const std::string prefix = std::string(kind()) + ".";
    for (const auto& [name, _] : tensors)
        if (name.rfind(prefix, 0) == 0 && !expected.count(name))
            throw Error(
                fmt::format(
                    "optimizer state: tensor '{}' belongs to no parameter of this optimizer", name),
                ErrorKind::key);

    for (size_t b = 0; b < buffers_.size(); ++b)
        for (size_t i = 0; i < params_.size(); ++i)
            std::copy(found[b][i]->data(), found[b][i]->data() + found[b][i]->numel(),
                      buffers_[b][i].data());
    step_count_ = step;
    set_lr(lr);
}

}  // namespace seqgrad
