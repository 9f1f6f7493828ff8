// What the entries of the `seqgrad gradcheck` suite are built with
// (apps/gradcheck/gradcheck_suite.cpp, apps/gradcheck/gradcheck_recurrent.cpp): the registry they
// are added to, and inputs from fixed seeds.
//
// Every entry follows the same pattern: build inputs from fixed seeds (values chosen away from
// the kinks of relu and clamp and from the poles of log and div, where a finite difference is
// meaningless), then call gradcheck(fn, inputs). fn must recompute the whole function from
// `inputs` every time it is called, because gradcheck perturbs the inputs in place.
// Modules are captured by reference; their parameters are passed as inputs, so perturbing an
// input perturbs the parameter the module reads.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "apps/gradcheck/gradcheck_suite.h"
#include "seqgrad/autograd/rng.h"
#include "seqgrad/layers/module.h"

namespace seqgrad::gradcheck_suite {

using Inputs = std::vector<Tensor>;

// A tensor of values uniform in [lo, hi), from a seeded generator.
inline Tensor random(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1,
                     bool requires_grad = true) {
    Rng rng(seed);
    std::vector<real> values(size_t(shape.numel()));
    for (real& x : values) x = real(rng.uniform(lo, hi));
    return Tensor::from_vector(shape, values, requires_grad);
}

// A tensor whose values are uniform in [lo, hi) in magnitude with a random sign: stays at least
// `lo` away from 0 (for relu, and for the 0 kink of clamp-like functions).
inline Tensor random_away_from_zero(const Shape& shape, uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    std::vector<real> values(size_t(shape.numel()));
    for (real& x : values) x = real((rng.uniform() < 0.5 ? -1 : 1) * rng.uniform(lo, hi));
    return Tensor::from_vector(shape, values, true);
}

// A constant mask (requires no grad) with the given 0/1 values.
inline Tensor mask_tensor(const Shape& shape, const std::vector<real>& values) {
    return Tensor::from_vector(shape, values, false);
}

// The module's parameters appended to `inputs`.
inline Inputs with_parameters(Inputs inputs, const Module& module) {
    for (const Tensor& p : module.parameters()) inputs.push_back(p);
    return inputs;
}

// Parameters scaled up from their (small) initial values, so that tanh, sigmoid and softmax
// work far from their linear region and a wrong gradient cannot hide.
inline void scale_parameters(Module& module, real factor) {
    for (Tensor& p : module.parameters())
        for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] *= factor;
}

class Registry {
  public:
    void add(const std::string& group, const std::string& name,
             std::function<GradcheckResult(const GradcheckOptions&)> run) {
        entries.push_back({group + "/" + name, group, std::move(run)});
    }
    // An entry whose function and inputs are fixed at registration: fn(inputs).
    void add(const std::string& group, const std::string& name, GradcheckFn fn,
             std::function<Inputs()> make_inputs) {
        add(group, name, [fn, make_inputs](const GradcheckOptions& options) {
            return gradcheck(fn, make_inputs(), options);
        });
    }
    // An op of one input, declared as one row: fn(x) at x of `shape`, uniform in [lo, hi) from
    // `seed` (away_from_zero: |x| in [lo, hi) with a random sign, random_away_from_zero).
    struct UnaryOp {
        std::string name;
        std::function<Tensor(const Tensor&)> fn;
        Shape shape;
        uint64_t seed;
        double lo = -1, hi = 1;
        bool away_from_zero = false;
    };
    void add_unary_ops(const std::vector<UnaryOp>& ops) {
        for (const UnaryOp& op : ops)
            add(
                "op", op.name, [fn = op.fn](const Inputs& x) { return fn(x[0]); },
                [op] {
                    return Inputs{op.away_from_zero
                                      ? random_away_from_zero(op.shape, op.seed, op.lo, op.hi)
                                      : random(op.shape, op.seed, op.lo, op.hi)};
                });
    }
    std::vector<GradcheckEntry> entries;
};

// The recurrent cells' ops (gru_cell, lstm_cell, rnn_cell, their _step and composed forms,
// gather_step_states) and layers (every cell type, fused and composed, padded, 1 and 2 layers,
// uni- and bidirectional): apps/gradcheck/gradcheck_recurrent.cpp.
void add_recurrent_ops(Registry& r);
void add_recurrent_layers(Registry& r);

// Whole Seq2Seq models: every attention kind, every cell (gru, lstm, rnn) and the model options
// (stacked encoder and decoder, deep output, encoder narrower than the decoder, no key bias):
// apps/gradcheck/gradcheck_models.cpp.
void add_models(Registry& r);

// The Transformer's ops, layers and tiny whole models: apps/gradcheck/gradcheck_transformer.cpp.
void add_transformer(Registry& r);

}  // namespace seqgrad::gradcheck_suite
