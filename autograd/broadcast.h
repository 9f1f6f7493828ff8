// Broadcasting of two shapes, NumPy style: dims are aligned from the right, and a dim of size 1
// (or a missing leading dim) is stretched. Internal to the elementwise ops.
#pragma once

#include <cstdint>

#include "seqgrad/autograd/shape.h"

namespace seqgrad {

struct Broadcast {
    Shape out;
    int64_t dims[4];      // out's dims, padded with leading 1s to rank 4
    int64_t stride_a[4];  // element strides into a (0 where a is stretched)
    int64_t stride_b[4];

    // Throws "OP: [..] and [..] cannot be broadcast together" on a mismatch.
    static Broadcast make(const char* op, const Shape& a, const Shape& b);

    // Calls f(out_index, a_index, b_index) for every output element, in order.
    template <class F>
    void for_each(F&& f) const {
        int64_t o = 0;
        for (int64_t i0 = 0; i0 < dims[0]; ++i0)
            for (int64_t i1 = 0; i1 < dims[1]; ++i1)
                for (int64_t i2 = 0; i2 < dims[2]; ++i2) {
                    int64_t ia = i0 * stride_a[0] + i1 * stride_a[1] + i2 * stride_a[2];
                    int64_t ib = i0 * stride_b[0] + i1 * stride_b[1] + i2 * stride_b[2];
                    for (int64_t i3 = 0; i3 < dims[3]; ++i3)
                        f(o++, ia + i3 * stride_a[3], ib + i3 * stride_b[3]);
                }
    }
};

}  // namespace seqgrad
