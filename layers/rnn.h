// Elman RNN layers, PyTorch's nn.RNN conventions (nonlinearity tanh; weight_ih [H, in],
// weight_hh [H, H], bias_ih [H], bias_hh [H]; all initialised U(-1/√H, 1/√H)). The cell's maths
// is in autograd/fused_rnn.h; the layer is the shared recurrent driver (layers/recurrent.h).
//
//   RNNCell  one step: h' = tanh(W_ih x + b_ih + W_hh h + b_hh), for a decoder that steps itself.
//   RNN      a whole padded batch [B, T, in] with per-sequence lengths, 1..n layers, optionally
//            bidirectional (an encoder).
#pragma once

#include <cstdint>

#include "seqgrad/layers/recurrent.h"

namespace seqgrad {

class RNNCell : public RecurrentCell {
  public:
    // Parameters "weight_ih" [H, in], "weight_hh" [H, H], "bias_ih" [H], "bias_hh" [H].
    // fused: the fused cell op, or (false) its composed twin (use_fused).
    RNNCell(int64_t input_size, int64_t hidden_size, Rng& rng, bool fused = true)
        : RecurrentCell(CellType::rnn, input_size, hidden_size, rng, fused) {}
};

class RNN : public Recurrent {
  public:
    // fused: the fused cell ops, or (false) their composed twins (use_fused).
    RNN(int64_t input_size, int64_t hidden_size, int num_layers, bool bidirectional,
        real dropout_between_layers, Rng& rng, bool fused = true)
        : Recurrent(CellType::rnn, input_size, hidden_size, num_layers, bidirectional,
                    dropout_between_layers, rng, fused) {}
};

}  // namespace seqgrad
