// The performance ladder's variants of a training loss, for the tests that hold each equal to the
// model with everything on. A variant is a comma-separated list of names to turn off, as the
// ladder names them: SEQGRAD_DISABLE names (the layers' fused ops, which reach a model through
// apps/cli/model_switches.h, and the kernels' switches) and the loss and decoder forms of
// bench/ladder_model.h (fused_loss, real_tokens, one_projection, cached_keys, sort_by_length).
#pragma once

#include <sstream>
#include <string>

#include "apps/cli/model_switches.h"
#include "bench/ladder_model.h"
#include "seqgrad/autograd/kernels/switches.h"

namespace seqgrad::testing {

struct LadderVariant {
    Switches switches;          // the process's switches (set_switches) while it runs
    bench::LadderOptions loss;  // the ladder model's form of the loss
};

inline LadderVariant ladder_variant(const std::string& off) {
    std::string disabled, rungs;
    std::stringstream in(off);
    std::string name;
    while (std::getline(in, name, ',')) {
        const bool rung = name == "fused_loss" || name == "real_tokens" ||
                          name == "one_projection" || name == "cached_keys" ||
                          name == "sort_by_length";
        std::string& list = rung ? rungs : disabled;
        list += (list.empty() ? "" : ",") + name;
    }
    return {parse_disabled(disabled.c_str()), bench::parse_ladder_off(rungs)};
}

// The layer options of the variant's switches for a model of `config`, as a command builds it
inline FusedLayers fused_layers(const ModelConfig& config, const LadderVariant& variant) {
    return seqgrad::fused_layers(config.cell, variant.switches);
}

}  // namespace seqgrad::testing
