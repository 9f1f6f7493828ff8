// The grader's mutants (tests/exercises/mutants.cpp): the solutions, slightly changed at random.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "apps/exercises/table.h"

namespace seqgrad::grading::mutants {
std::vector<Variant> all();
}  // namespace seqgrad::grading::mutants
