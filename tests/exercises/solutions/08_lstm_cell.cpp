// Exercise 08: an LSTM cell (PyTorch's layout, gates in the order i, f, g, o).
//
//   x [B,in], h [B,H], c [B,H], weight_ih [4H,in], weight_hh [4H,H], bias_ih [4H], bias_hh [4H]
//   a  = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh    [B,4H] = a_i | a_f | a_g | a_o
//   i = σ(a_i),  f = σ(a_f),  g = tanh(a_g),  o = σ(a_o)
//   c' = f ⊙ c + i ⊙ g
//   h' = o ⊙ tanh(c')
//   returns the new state as ONE tensor [2,B,H]: [0] = h', [1] = c'   (stack({h', c'}, 0))
// Compose it from library ops, or write its backward yourself.
#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

Tensor lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& weight_ih,
                 const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh) {
    const int64_t H = h.size(1);
    Tensor a = linear(x, weight_ih, bias_ih) + linear(h, weight_hh, bias_hh);
    Tensor i = seqgrad::sigmoid(slice(a, 1, 0, H)), f = seqgrad::sigmoid(slice(a, 1, H, 2 * H));
    Tensor g = seqgrad::tanh(slice(a, 1, 2 * H, 3 * H));
    Tensor o = seqgrad::sigmoid(slice(a, 1, 3 * H, 4 * H));
    Tensor c_new = f * c + i * g;
    return stack({o * seqgrad::tanh(c_new), c_new}, 0);
}

}  // namespace seqgrad::exercises
