// The symbol autograd/real.h makes every client refer to: defined only in the library of this
// precision, so a client of the other precision fails to link.
#include "seqgrad/autograd/real.h"

extern "C" const int SEQGRAD_PRECISION_SYMBOL(SEQGRAD_REAL) = int(sizeof(seqgrad::real));
