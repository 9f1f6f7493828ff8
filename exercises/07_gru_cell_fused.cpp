// Exercise 07: the GRU cell's hand-written backward (the fused form).
//
// The gates' products are computed outside (gi = x W_ihᵀ + b_ih, gh = h W_hhᵀ + b_hh, both
// [B,3H] = r | z | n parts); this op does everything after them as ONE graph node:
//   r  = σ(gi_r + gh_r),  z = σ(gi_z + gh_z),  n = tanh(gi_n + r ⊙ gh_n)
//   h' = (1 − z) ⊙ n + z ⊙ h                                     -> [B,H]
// Backward, from dh' (call it g):
//   dh    += g ⊙ z
//   dn     = g ⊙ (1 − z)            dz = g ⊙ (h − n)
//   dan    = dn ⊙ (1 − n²)          (a_n = gi_n + r ⊙ gh_n)
//   dgi_n += dan,   dgh_n += dan ⊙ r,   dr = dan ⊙ gh_n
//   daz    = dz ⊙ z (1 − z):   dgi_z += daz,  dgh_z += daz
//   dar    = dr ⊙ r (1 − r):   dgi_r += dar,  dgh_r += dar
// Save r, z, n in the forward (e.g. in a std::vector captured by the backward lambda).
// The grader checks that the result is one node whose parents are gi, gh and h.
#include <cmath>
#include <memory>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor gru_cell_fused(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& h) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
