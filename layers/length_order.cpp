#include "seqgrad/layers/length_order.h"

#include <algorithm>
#include <numeric>

#include "seqgrad/autograd/ops.h"

namespace seqgrad {

bool sorted_by_decreasing_length(const std::vector<int32_t>& lengths) {
    return std::is_sorted(lengths.rbegin(), lengths.rend());
}

namespace {

// [L*D, B, H]: the rows `rows` of every layer and direction's [B, H] (undefined stays undefined)
Tensor gather_state_rows(const Tensor& states, const std::vector<int32_t>& rows) {
    if (!states.defined()) return Tensor();
    const int64_t B = states.size(1), H = states.size(2);
    std::vector<Tensor> picked;
    for (int64_t k = 0; k < states.size(0); ++k)
        picked.push_back(gather_rows(reshape(slice(states, 0, k, k + 1), {B, H}), rows));
    return stack(picked, 0);
}

}  // namespace

RecurrentOutput run_in_length_order(const Tensor& inputs, const std::vector<int32_t>& lengths,
                                    const Tensor& h0, const Tensor& c0, const RecurrentRun& run) {
    // order[i]: the batch row that runs as row i; back[b]: the sorted row of batch row b
    std::vector<int32_t> order(lengths.size()), back(lengths.size()), sorted_lengths;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return lengths[size_t(a)] > lengths[size_t(b)]; });
    for (size_t i = 0; i < order.size(); ++i) {
        back[size_t(order[i])] = int32_t(i);
        sorted_lengths.push_back(lengths[size_t(order[i])]);
    }
    const RecurrentOutput sorted = run(gather_rows(inputs, order), sorted_lengths,
                                       gather_state_rows(h0, order), gather_state_rows(c0, order));
    RecurrentOutput out;
    out.outputs = gather_rows(sorted.outputs, back);
    out.final_hidden = gather_state_rows(sorted.final_hidden, back);
    out.final_cell = gather_state_rows(sorted.final_cell, back);
    for (const Tensor& state : sorted.step_states)
        out.step_states.push_back(gather_rows(state, back));
    return out;
}

}  // namespace seqgrad
