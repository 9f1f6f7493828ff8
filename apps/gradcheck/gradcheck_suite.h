// The gradient-check suite behind `seqgrad gradcheck`: one named entry per op, per layer and per
// small Seq2Seq model, each comparing the analytic gradient (backward) with central finite
// differences (autograd/gradcheck.h) for every input and parameter that requires grad.
//
// The suite is compiled into both builds of the command line. It is only sharp in double
// (real = double, the seqgrad-f64 binary and the unit tests): there the default tolerances are
// eps 1e-6, atol 1e-7, rtol 1e-6 and a correct gradient shows relative errors around 1e-9.
// In float the finite differences are dominated by rounding (a float holds ~7 digits, and the
// difference quotient divides that noise by 2 eps), so default_gradcheck_options() switches to
// eps 1e-2, atol 1e-3, rtol 1e-2: a loose check that still catches a wrong formula, never a
// subtle one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "seqgrad/autograd/gradcheck.h"

namespace seqgrad {

struct GradcheckEntry {
    std::string name;   // "op/matmul 2-D transpose_a", "layer/GRU bidirectional", ...
    std::string group;  // "op", "layer" or "model"
    // Builds its inputs from fixed seeds and runs gradcheck with the given options.
    std::function<GradcheckResult(const GradcheckOptions&)> run;
};

// Every entry, ops first, then layers, then whole models.
std::vector<GradcheckEntry> gradcheck_entries();

// "double" or "float": the precision this build computes in.
const char* real_type_name();

// eps / atol / rtol suited to this build's precision (see the top of this file).
GradcheckOptions default_gradcheck_options();

// One line of the report.
struct GradcheckRow {
    std::string name;
    GradcheckResult result;
    double seconds = 0;
    std::string error;  // an exception thrown by the entry (counts as a failure)
    bool passed() const { return error.empty() && result.passed && result.inputs_checked > 0; }
};

// Runs one entry, catching exceptions into row.error.
GradcheckRow run_gradcheck_entry(const GradcheckEntry& entry, const GradcheckOptions& options);

}  // namespace seqgrad
