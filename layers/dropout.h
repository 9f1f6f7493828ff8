// Dropout as a module: in training mode, zero each element with probability p and scale the
// others by 1/(1-p) (inverted dropout); in eval mode, the identity.
#pragma once

#include "seqgrad/layers/module.h"

namespace seqgrad {

class Dropout : public Module {
  public:
    // Keeps a reference to `rng`, which must outlive the module (the model's generator, whose
    // state a checkpoint saves, so that a resumed run draws the same masks).
    Dropout(real p, Rng& rng);

    // x [any] -> same shape
    Tensor forward(const Tensor& x) const;

    real p() const { return p_; }

  private:
    real p_;
    Rng& rng_;
};

}  // namespace seqgrad
