// The command line of `seqgrad gradflow` (apps/cli/cmd_gradflow.cpp has the help text), also
// what the Python module's gradflow_study() passes on.
#pragma once

#include <string>
#include <vector>

#include "apps/studies/gradflow.h"
#include "seqgrad/autograd/error.h"

namespace seqgrad {

// GradflowOptions (apps/studies/gradflow.h) from `seqgrad gradflow ARGS...`. Throws Error naming
// the option on a bad value (an unknown cell or attention kind, a bad list...), and
// GradflowUsageError on positional arguments. task is left empty with --run and no --task (the
// command then takes the run's own task).
struct GradflowUsageError : Error {
    using Error::Error;
};
GradflowOptions parse_gradflow_options(const std::vector<std::string>& argv);

}  // namespace seqgrad
