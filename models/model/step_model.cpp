#include "seqgrad/models/model/step_model.h"

#include <cstring>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

namespace {

// rows == 0, 1, ..., n-1
bool is_leading(const std::vector<int32_t>& rows) {
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i] != int32_t(i)) return false;
    return true;
}

}  // namespace

// Decoding runs under NoGradGuard: a plain copy of the rows. With gradients on (saliency
// differentiates through decoding steps), the rows stay in the graph: the leading rows as a
// slice, any others gathered.
Tensor select_rows(const Tensor& t, const std::vector<int32_t>& rows, const char* who) {
    const int64_t n = t.size(0), row_size = t.numel() / std::max<int64_t>(n, 1);
    for (int32_t r : rows)
        if (r < 0 || r >= n)
            throw Error(fmt::format("{}: select: row {} out of range [0, {})", who, r, n));
    if (grad_enabled() && t.requires_grad()) {
        if (is_leading(rows)) return slice(t, 0, 0, int64_t(rows.size()));
        return gather_rows(t, rows);
    }
    Tensor selected = Tensor::empty(t.shape().with_dim(0, int64_t(rows.size())));
    for (size_t i = 0; i < rows.size(); ++i)
        std::memcpy(selected.data() + i * row_size, t.data() + rows[i] * row_size,
                    sizeof(real) * row_size);
    return selected;
}

}  // namespace seqgrad
