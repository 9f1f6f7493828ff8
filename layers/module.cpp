#include "layers/module.h"

#include <fmt/format.h>

#include <cmath>

namespace seqgrad {

Tensor Module::register_parameter(const std::string& name, Tensor value) {
    for (const auto& [existing, _] : parameters_)
        if (existing == name) throw Error(fmt::format("parameter '{}' registered twice", name));
    value.set_requires_grad(true);
    parameters_.emplace_back(name, value);
    return value;
}

void Module::register_module(const std::string& name, Module& child) {
    for (const auto& [existing, _] : children_)
        if (existing == name) throw Error(fmt::format("sub-module '{}' registered twice", name));
    children_.emplace_back(name, &child);
}

void Module::collect(const std::string& prefix,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
    for (const auto& [name, tensor] : parameters_) out.emplace_back(prefix + name, tensor);
    for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
    std::vector<std::pair<std::string, Tensor>> out;
    collect("", out);
    return out;
}

std::vector<Tensor> Module::parameters() const {
    std::vector<Tensor> out;
    for (auto& [_, t] : named_parameters()) out.push_back(t);
    return out;
}

int64_t Module::parameter_count() const {
    int64_t n = 0;
    for (auto& [_, t] : named_parameters()) n += t.numel();
    return n;
}

void Module::zero_grad() {
    for (auto& [_, t] : named_parameters()) t.zero_grad();
}

void Module::train(bool on) {
    training_ = on;
    for (auto& [_, child] : children_) child->train(on);
}

namespace init {

void uniform(Tensor& t, double lo, double hi, Rng& rng) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(rng.uniform(lo, hi));
}

void uniform_fan_in(Tensor& t, int64_t fan_in, Rng& rng) {
    double bound = 1.0 / std::sqrt(double(fan_in));
    uniform(t, -bound, bound, rng);
}

void normal(Tensor& t, double mean, double std, Rng& rng) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(mean + std * rng.normal());
}

}  // namespace init
}  // namespace seqgrad
