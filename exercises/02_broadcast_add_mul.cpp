// Exercise 02: broadcasting add and mul.
//
// Shapes broadcast as NumPy does: dims aligned from the right, a size-1 or missing dim is
// stretched. Broadcast::make(op, a.shape(), b.shape()) (autograd/broadcast.h) gives the output
// shape (bc.out) and bc.for_each(f), which calls f(o, ia, ib) for every output element o with
// the indices of the a and b elements it reads.
//
// An element of a stretched operand is read by MANY outputs, so its gradient is the SUM of
// theirs: the backward sums over the broadcast dimensions. E.g. a bias b [H] added to x [B,H]:
// db[j] = Σ_b dc[b,j].
#include "apps/exercises/exercise.h"
#include "seqgrad/autograd/broadcast.h"

namespace seqgrad::exercises {

// c = a + b                   a, b broadcast to c
// da[ia] += dc[o],  db[ib] += dc[o]   for every (o, ia, ib)
Tensor add(const Tensor& a, const Tensor& b) {
    NOT_IMPLEMENTED();
}

// c = a ⊙ b                   a, b broadcast to c
// da[ia] += dc[o] b[ib],  db[ib] += dc[o] a[ia]
Tensor mul(const Tensor& a, const Tensor& b) {
    NOT_IMPLEMENTED();
}

}  // namespace seqgrad::exercises
