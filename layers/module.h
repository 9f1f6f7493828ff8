// Module: something with named parameters and sub-modules, PyTorch style.
//
// Parameters are named hierarchically by the path of sub-module names that leads to them
// (`decoder.attention.W_q.weight`); those names are what checkpoints, gradient reports and the
// optimizer see. Sub-modules are members of their parent and registered by reference, so a
// Module is neither copyable nor movable.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// Parameter values by hierarchical name, as PyTorch's state_dict: what Module::state() returns
// and Module::load_state() reads.
using StateDict = std::map<std::string, Tensor>;

class Module {
  public:
    Module() = default;
    virtual ~Module() = default;
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    // Every parameter of this module and its sub-modules, depth first, in registration order.
    std::vector<std::pair<std::string, Tensor>> named_parameters() const;
    std::vector<Tensor> parameters() const;
    int64_t parameter_count() const;
    void zero_grad();

    // A copy of every parameter's values under its name (changing them changes nothing here).
    StateDict state() const;
    // Sets every parameter from `state`, e.g. weights computed elsewhere or a state() of a
    // model of the same shape. Names and shapes must match exactly: otherwise nothing is
    // copied and the Error lists what differs (up to 10 lines), as load_parameters does for a
    // checkpoint (models/formats/checkpoint.h):
    //   missing: decoder.out.bias (model expects [5000])
    //   unexpected: decoder.coverage.weight [12,3]
    //   decoder.out.weight: given [6000,256], model expects [5000,256]
    // `source` names where the values came from in the message. A value that is NaN or ±Inf
    // is refused the same way (nothing is copied; see non_finite_report below).
    void load_state(const StateDict& state, const std::string& source = "state");

    // Train/eval mode (dropout, teacher forcing) for this module and every sub-module.
    void train(bool on = true);
    void eval() { train(false); }
    bool training() const { return training_; }

  protected:
    // Registers a leaf tensor as a parameter (requires_grad is switched on) and returns it.
    Tensor register_parameter(const std::string& name, Tensor value);
    // Registers a member sub-module under `name`.
    void register_module(const std::string& name, Module& child);

  private:
    void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;

    std::vector<std::pair<std::string, Tensor>> parameters_;
    std::vector<std::pair<std::string, Module*>> children_;
    bool training_ = true;
};

// Where a tensor holds NaN, +Inf or -Inf: how many such values, and the first one (its flat,
// row-major index and its value). count == 0 when every value is finite.
struct NonFiniteValues {
    int64_t count = 0;
    int64_t first_index = -1;
    real first_value = 0;
};
NonFiniteValues find_non_finite(const Tensor& t);

// "tensor 'decoder.out.bias' [5000] holds 3 non-finite values (NaN or ±Inf) of 5000; the first
// is nan at index 17 ([17])", or "" when every value of `t` is finite. What loading and saving
// checkpoints and Module::load_state say when they refuse weights.
std::string non_finite_report(const std::string& name, const Tensor& t);

// Initialisers: fill a tensor in place from the seeded generator.
namespace init {
void uniform(Tensor& t, double lo, double hi, Rng& rng);
// U(-1/√fan_in, 1/√fan_in): PyTorch's default for Linear and GRU weights and biases.
void uniform_fan_in(Tensor& t, int64_t fan_in, Rng& rng);
void normal(Tensor& t, double mean, double std, Rng& rng);
}  // namespace init

}  // namespace seqgrad
