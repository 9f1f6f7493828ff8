// expect: parent_grad returned nullptr for an input that needs no gradient: check it before writing
// A wrong answer to 02_broadcast_add_mul for the grader's tests:
// add's backward writes da and db without checking them for nullptr.
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
    Broadcast bc = Broadcast::make("add", a.shape(), b.shape());
    Tensor c = make_result(bc.out);
    const real *pa = a.data(), *pb = b.data();
    real* pc = c.data();
    bc.for_each([&](int64_t o, int64_t ia, int64_t ib) { pc[o] = pa[ia] + pb[ib]; });
    record(c, "exercise_add", {a, b}, [bc](Node& out) {
        const real* dc = out.grad.data();
        real *da = parent_grad(out, 0), *db = parent_grad(out, 1);
        bc.for_each([&](int64_t o, int64_t ia, int64_t ib) { da[ia] += dc[o], db[ib] += dc[o]; });
    });
    return c;
}

// c = a ⊙ b                   a, b broadcast to c
// da[ia] += dc[o] b[ib],  db[ib] += dc[o] a[ia]
Tensor mul(const Tensor& a, const Tensor& b) {
    Broadcast bc = Broadcast::make("mul", a.shape(), b.shape());
    Tensor c = make_result(bc.out);
    const real *pa = a.data(), *pb = b.data();
    real* pc = c.data();
    bc.for_each([&](int64_t o, int64_t ia, int64_t ib) { pc[o] = pa[ia] * pb[ib]; });
    record(c, "exercise_mul", {a, b}, [bc](Node& out) {
        const real *dc = out.grad.data(), *pa = out.parent(0).data, *pb = out.parent(1).data;
        if (real* da = parent_grad(out, 0))
            bc.for_each([&](int64_t o, int64_t ia, int64_t ib) { da[ia] += dc[o] * pb[ib]; });
        if (real* db = parent_grad(out, 1))
            bc.for_each([&](int64_t o, int64_t ia, int64_t ib) { db[ib] += dc[o] * pa[ia]; });
    });
    return c;
}

}  // namespace seqgrad::exercises
