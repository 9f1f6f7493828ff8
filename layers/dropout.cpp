#include "seqgrad/layers/dropout.h"

#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

Dropout::Dropout(real p, Rng& rng) : p_(p), rng_(rng) {
    if (!(p >= 0 && p < 1)) throw Error(fmt::format("Dropout: p must be in [0, 1), got {}", p));
}

// x -> x ⊙ mask / (1 - p) in training, x in eval (the dropout op)
Tensor Dropout::forward(const Tensor& x) const {
    return dropout(x, p_, training(), thread_rng(rng_));
}

}  // namespace seqgrad
