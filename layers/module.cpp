#include "seqgrad/layers/module.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

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

StateDict Module::state() const {
    StateDict state;
    for (const auto& [name, t] : named_parameters())
        state[name] =
            Tensor::from_vector(t.shape(), std::vector<real>(t.data(), t.data() + t.numel()));
    return state;
}

NonFiniteValues find_non_finite(const Tensor& t) {
    NonFiniteValues found;
    const real* values = t.data();
    const int64_t n = t.numel();
    // A branch-free count first (it vectorises); the first bad index only when there is one.
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += !std::isfinite(values[i]);
    if (count == 0) return found;
    found.count = count;
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(values[i])) {
            found.first_index = i;
            found.first_value = values[i];
            break;
        }
    }
    return found;
}

std::string non_finite_report(const std::string& name, const Tensor& t) {
    if (!t.defined()) return "";
    const NonFiniteValues bad = find_non_finite(t);
    if (bad.count == 0) return "";
    // The first bad value's index in every dimension: [row, column] for a matrix.
    std::vector<int64_t> index(size_t(t.rank()));
    int64_t rest = bad.first_index;
    for (int d = t.rank() - 1; d >= 0; --d) {
        const int64_t size = t.shape()[d];
        index[size_t(d)] = size > 0 ? rest % size : 0;
        rest = size > 0 ? rest / size : 0;
    }
    const std::string value = std::isnan(bad.first_value) ? "NaN"
                              : bad.first_value > 0       ? "+Inf"
                                                          : "-Inf";
    return fmt::format(
        "tensor '{}' {} holds {} non-finite value{} (NaN or ±Inf) of {}; the first is {} at "
        "index {} ([{}])",
        name, t.shape().str(), bad.count, bad.count == 1 ? "" : "s", t.numel(), value,
        bad.first_index, fmt::join(index, ", "));
}

void Module::load_state(const StateDict& state, const std::string& source) {
    constexpr size_t kMaxListed = 10;
    std::vector<std::pair<std::string, Tensor>> parameters = named_parameters();
    std::vector<std::string> differences;
    bool names_differ = false;  // a parameter missing or unexpected, not only a shape
    std::map<std::string, bool> known;
    for (const auto& [name, parameter] : parameters) {
        known[name] = true;
        auto it = state.find(name);
        if (it == state.end()) {
            names_differ = true;
            differences.push_back(
                fmt::format("missing: {} (model expects {})", name, parameter.shape().str()));
        } else if (!it->second.defined() || it->second.shape() != parameter.shape())
            differences.push_back(
                fmt::format("{}: given {}, model expects {}", name,
                            it->second.defined() ? it->second.shape().str() : "an undefined tensor",
                            parameter.shape().str()));
    }
    for (const auto& [name, value] : state)
        if (!known.count(name)) {
            names_differ = true;
            differences.push_back(fmt::format("unexpected: {} {}", name,
                                              value.defined() ? value.shape().str() : "undefined"));
        }
    if (!differences.empty()) {
        std::string message = fmt::format("{} does not match the model ({} difference{}):", source,
                                          differences.size(), differences.size() == 1 ? "" : "s");
        for (size_t i = 0; i < differences.size() && i < kMaxListed; ++i)
            message += "\n  " + differences[i];
        if (differences.size() > kMaxListed)
            message += fmt::format("\n  ... and {} more", differences.size() - kMaxListed);
        throw Error(message, names_differ ? ErrorKind::key : ErrorKind::value);
    }
    for (const auto& [name, parameter] : parameters)
        if (std::string bad = non_finite_report(name, state.at(name)); !bad.empty())
            throw Error(fmt::format("{}: {}; refusing weights that are not finite", source, bad));
    for (auto& [name, parameter] : parameters) {
        const Tensor& value = state.at(name);
        std::copy(value.data(), value.data() + value.numel(), parameter.data());
    }
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
