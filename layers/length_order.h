// Rows in order of decreasing length: a speed form of a recurrent layer, not its maths.
//
// The fused cells compute only the rows before the first sequence that has ended
// (autograd/fused_cell.h). With the batch's lengths in decreasing order the ended sequences are
// the tail of the batch at every step, so a step costs what its running sequences cost instead
// of what the longest one does (docs/performance.md, "sorting by length"), as PyTorch's
// pack_padded_sequence does. A batch in another order runs sorted: one row gather in, one per
// result out, and everything comes back in the caller's order. Sorting changes no number.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "seqgrad/layers/recurrent.h"

namespace seqgrad {

// true when lengths[b] >= lengths[b+1] for every b
bool sorted_by_decreasing_length(const std::vector<int32_t>& lengths);

// What Recurrent::forward runs: inputs [B,T,in], lengths [B], h0, c0 [L*D,B,H] or undefined.
using RecurrentRun = std::function<RecurrentOutput(
    const Tensor& inputs, const std::vector<int32_t>& lengths, const Tensor& h0, const Tensor& c0)>;

// `run` on the rows sorted by decreasing length (a stable sort), and every result of it (outputs,
// final states, step states) gathered back into the rows' given order.
RecurrentOutput run_in_length_order(const Tensor& inputs, const std::vector<int32_t>& lengths,
                                    const Tensor& h0, const Tensor& c0, const RecurrentRun& run);

}  // namespace seqgrad
