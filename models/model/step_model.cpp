#include "seqgrad/models/model/step_model.h"

#include <fmt/format.h>

#include <cstring>

namespace seqgrad {

DecoderState select_rows(const DecoderState& state, const std::vector<int32_t>& rows) {
    DecoderState out;
    out.tensors.reserve(state.tensors.size());
    for (const Tensor& t : state.tensors) {
        const int64_t n = t.size(0), row_size = t.numel() / std::max<int64_t>(n, 1);
        Tensor selected = Tensor::empty(t.shape().with_dim(0, int64_t(rows.size())));
        for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i] < 0 || rows[i] >= n)
                throw Error(fmt::format("select_rows: row {} out of range [0, {})", rows[i], n));
            std::memcpy(selected.data() + i * row_size, t.data() + rows[i] * row_size,
                        sizeof(real) * row_size);
        }
        out.tensors.push_back(selected);
    }
    return out;
}

}  // namespace seqgrad
