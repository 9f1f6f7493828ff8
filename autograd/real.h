// The scalar type of every tensor, chosen when the library is compiled: float for training and
// the command line, double for the finite-difference gradient checks (target seqgrad_f64).
#pragma once

#ifndef SEQGRAD_REAL
#define SEQGRAD_REAL float
#endif

namespace seqgrad {
using real = SEQGRAD_REAL;
}  // namespace seqgrad

// A program compiled with one SEQGRAD_REAL and linked with the library of the other would pass
// floats where doubles are expected and corrupt memory at run time. So every translation unit
// that includes this header refers to a symbol that only the library of its own precision
// defines (autograd/real.cpp): a mismatch is a link error that names it,
//   undefined reference to `seqgrad_library_built_with_real_double'
#define SEQGRAD_PRECISION_SYMBOL_(type) seqgrad_library_built_with_real_##type
#define SEQGRAD_PRECISION_SYMBOL(type) SEQGRAD_PRECISION_SYMBOL_(type)
extern "C" const int SEQGRAD_PRECISION_SYMBOL(SEQGRAD_REAL);
namespace {
// `used`: kept (and so is the reference) although nothing reads it.
[[maybe_unused]] __attribute__((used)) const int* const seqgrad_precision_check =
    &SEQGRAD_PRECISION_SYMBOL(SEQGRAD_REAL);
}  // namespace
