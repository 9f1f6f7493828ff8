// The scalar type of every tensor, chosen when the library is compiled: float for training and
// the command line, double for the finite-difference gradient checks (target seqgrad_f64).
#pragma once

#ifndef SEQGRAD_REAL
#define SEQGRAD_REAL float
#endif

namespace seqgrad {
using real = SEQGRAD_REAL;
}  // namespace seqgrad
