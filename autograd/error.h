// Error: every error seqgrad raises on bad use (a shape mismatch, a freed graph, a bad index, a
// bad config key) is a seqgrad::Error, whose message names the op, file or key and what was
// expected. A header of its own, so that code below the graph (shapes, switches, threads) can
// throw without knowing about tensors.
#pragma once

#include <stdexcept>

namespace seqgrad {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace seqgrad
