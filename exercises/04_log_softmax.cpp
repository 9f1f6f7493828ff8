// Exercise 04: the stable log_softmax and its backward, along the last dim.
//
//   x [..., n] seen as rows of n:
//   m_r   = max_j x_rj                        (subtract it: e^x overflows for x ~ 1000)
//   lse_r = m_r + ln Σ_j e^(x_rj − m_r)
//   y_rj  = x_rj − lse_r
//   dx_rj += dy_rj − softmax_rj Σ_k dy_rk,    softmax_rj = e^(y_rj)
// A row may hold −inf entries (masked positions); they get y = −inf.
#include <algorithm>
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor log_softmax(const Tensor& x) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
