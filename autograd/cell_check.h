// The shape checks shared by the fused recurrent cells (gru_cell, lstm_cell, rnn_cell and their
// _step forms), and what they tell the cell: the batch, the hidden size, the step read and how
// many rows are still running.
#pragma once

#include <cstdint>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

struct CellDims {
    int64_t B, H;
    int64_t T;  // steps in the input gates tensor (1 for a single-step cell)
    int64_t t;  // the step read
    // Rows [active, B) all have step mask 0: they only copy the state (forward) and pass its
    // gradient through (backward), and the products skip them. In a batch sorted by decreasing
    // length the finished sequences are exactly such a tail, so the cell then does only the work
    // of the sequences still running (what PyTorch's pack_padded_sequence buys).
    int64_t active;
};

// Checks, for a cell with `gates` gates per hidden unit (RNN 1, GRU 3, LSTM 4), G = gates·H:
// h [B,H], weight_hh [G,H], bias_hh [G], step_mask [B] / [B,1] (optional, no grad), and
// input gates [B,G] (per_step = false) or [B,T,G] with 0 <= t < T (per_step = true).
// Errors name `op` and every shape.
CellDims check_cell(const char* op, int64_t gates, const Tensor& input_gates, bool per_step,
                    int64_t t, const Tensor& h, const Tensor& weight_hh, const Tensor& bias_hh,
                    const Tensor& step_mask);

// Checks that c (the LSTM's cell state) is [B,H] like h.
void check_cell_state(const char* op, const Tensor& h, const Tensor& c);

}  // namespace seqgrad
