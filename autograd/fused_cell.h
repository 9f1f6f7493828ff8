// What the fused recurrent cells (gru_cell, lstm_cell, rnn_cell and their _step forms) share:
// the shape checks, which tell the cell the batch, the hidden size, the step read and how many
// rows are still running; and the hidden product gh = h W_hhᵀ + b_hh with its backward.
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

// gh [rows, G] = h W_hhᵀ + b_hh over the first `rows` rows of h [B,H], with weight_hh [G,H] the
// weight in use (kernels::weight_in_use: shared over the steps of a recurrence).
void hidden_gates(const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h, int64_t rows,
                  real* gh);
// Its backward, inside the backward of `out`, whose parents `h`, `weight_hh` and `bias_hh` are at
// those indices; d_gh [rows, G]:
//   dh [rows, H] += d gh W_hh   (dh = nullptr: h needs no gradient)
//   dW_hh += d ghᵀ h,   db_hh += Σ_rows d gh
void hidden_gates_backward(Node& out, size_t h, size_t weight_hh, size_t bias_hh, const real* d_gh,
                           int64_t rows, real* dh);

}  // namespace seqgrad
