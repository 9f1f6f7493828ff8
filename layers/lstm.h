// LSTM layers, PyTorch's nn.LSTM conventions (gates i, f, g, o; weight_ih [4H, in], weight_hh
// [4H, H], bias_ih [4H], bias_hh [4H]; all initialised U(-1/√H, 1/√H)); the state is the pair
// (h, c). The cell's maths is in autograd/fused_lstm.h; the layer is the shared recurrent driver
// (layers/recurrent.h).
//
//   LSTMCell  one step: (h', c') = cell(x, (h, c)), for a decoder that steps itself.
//   LSTM      a whole padded batch [B, T, in] with per-sequence lengths, 1..n layers,
//             optionally bidirectional (an encoder); final_cell is PyTorch's c_n.
#pragma once

#include <cstdint>

#include "seqgrad/layers/recurrent.h"

namespace seqgrad {

class LSTMCell : public RecurrentCell {
  public:
    // Parameters "weight_ih" [4H, in], "weight_hh" [4H, H], "bias_ih" [4H], "bias_hh" [4H].
    // fused: the fused cell op, or (false) its composed twin (use_fused).
    LSTMCell(int64_t input_size, int64_t hidden_size, Rng& rng, bool fused = true)
        : RecurrentCell(CellType::lstm, input_size, hidden_size, rng, fused) {}
};

class LSTM : public Recurrent {
  public:
    // fused: the fused cell ops, or (false) their composed twins (use_fused).
    LSTM(int64_t input_size, int64_t hidden_size, int num_layers, bool bidirectional,
         real dropout_between_layers, Rng& rng, bool fused = true)
        : Recurrent(CellType::lstm, input_size, hidden_size, num_layers, bidirectional,
                    dropout_between_layers, rng, fused) {}
};

}  // namespace seqgrad
