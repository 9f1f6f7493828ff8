#include "seqgrad/autograd/broadcast.h"

#include <fmt/format.h>

#include "seqgrad/autograd/error.h"

namespace seqgrad {

Broadcast Broadcast::make(const char* op, const Shape& a, const Shape& b) {
    Broadcast bc;
    int rank = std::max(a.rank(), b.rank());
    int64_t da[4], db[4];
    for (int i = 0; i < 4; ++i) {
        // dim i of the rank-4 padded view; real dims are right-aligned
        int ia = i - (4 - a.rank()), ib = i - (4 - b.rank());
        da[i] = ia >= 0 ? a[ia] : 1;
        db[i] = ib >= 0 ? b[ib] : 1;
        if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
            throw Error(
                fmt::format("{}: {} and {} cannot be broadcast together", op, a.str(), b.str()));
        bc.dims[i] = std::max(da[i], db[i]);
    }
    for (int i = 4 - rank; i < 4; ++i) bc.out.push_back(bc.dims[i]);
    int64_t sa = 1, sb = 1;
    for (int i = 3; i >= 0; --i) {
        bc.stride_a[i] = da[i] == 1 ? 0 : sa;
        bc.stride_b[i] = db[i] == 1 ? 0 : sb;
        sa *= da[i];
        sb *= db[i];
    }
    return bc;
}

}  // namespace seqgrad
