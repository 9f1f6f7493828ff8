#include "apps/explore/op_maths.h"

namespace seqgrad {
namespace {

// clang-format off
// The whole-sequence cell ops and their one-step forms share the comments of one cell.
const std::vector<OpMathsBlock> gru_cell = {{"autograd/fused_gru.h",
          "  gh = h W_hhᵀ + b_hh                    [B,3H]  hidden gates, split into gh_r | gh_z | gh_n\n"
          "  r  = σ(gi_r + gh_r)                    reset gate\n"
          "  z  = σ(gi_z + gh_z)                    update gate\n"
          "  n  = tanh(gi_n + r ⊙ gh_n)             candidate state\n"
          "  h' = (1 − z) ⊙ n + z ⊙ h               new state"},
        {"autograd/ops_fused_gru.cpp",
          "  g_new = m g                                 (what reaches the unmasked h')\n"
          "  dn    = g_new (1 − z)        da_n = dn (1 − n²)           (a_n = gi_n + r gh_n)\n"
          "  dz    = g_new (h − n)        da_z = dz z (1 − z)          (a_z = gi_z + gh_z)\n"
          "  dr    = da_n gh_n            da_r = dr r (1 − r)          (a_r = gi_r + gh_r)\n"
          "  d gi  += [da_r | da_z | da_n]\n"
          "  d gh   = [da_r | da_z | da_n r]\n"
          "  dh    += g_new z + (1 − m) g  +  d gh W_hh     (the last term: one gemm)\n"
          "  dW_hh += d ghᵀ h                                (one gemm)\n"
          "  db_hh += Σ_b d gh"}};
const std::vector<OpMathsBlock> lstm_cell = {{"autograd/fused_lstm.h",
          "  a  = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh   [B,4H] = a_i | a_f | a_g | a_o\n"
          "  i  = σ(a_i)                            input gate\n"
          "  f  = σ(a_f)                            forget gate\n"
          "  g  = tanh(a_g)                         candidate cell state\n"
          "  o  = σ(a_o)                            output gate\n"
          "  c' = f ⊙ c + i ⊙ g                     new cell state\n"
          "  h' = o ⊙ tanh(c')                      new hidden state"},
        {"autograd/ops_fused_lstm.cpp",
          "  dc_new = m gc + m gh o (1 − tanh²(c'))    (what reaches the unmasked c', both paths)\n"
          "  do = m gh tanh(c')     da_o = do o (1 − o)\n"
          "  di = dc_new g          da_i = di i (1 − i)\n"
          "  df = dc_new c          da_f = df f (1 − f)\n"
          "  dg = dc_new i          da_g = dg (1 − g²)\n"
          "  d gi += da,   d gh = da          (da = [da_i | da_f | da_g | da_o])\n"
          "  dc += dc_new f + (1 − m) gc\n"
          "  dh += (1 − m) gh  +  da W_hh     (the last term: one gemm)\n"
          "  dW_hh += daᵀ h                    (one gemm)\n"
          "  db_hh += Σ_b da"}};
const std::vector<OpMathsBlock> rnn_cell = {{"autograd/fused_rnn.h",
          "  h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)        W_ih [H,in], W_hh [H,H]"},
        {"autograd/ops_fused_rnn.cpp",
          "  da     = m g (1 − u²)            (a = gi + h W_hhᵀ + b_hh, u = tanh(a))\n"
          "  d gi  += da\n"
          "  dh    += (1 − m) g  +  da W_hh   (the last term: one gemm)\n"
          "  dW_hh += daᵀ h                   (one gemm)\n"
          "  db_hh += Σ_b da"}};

// Every op's entry: the table below is data, not a function.
const std::vector<OpMaths> kOpMathsTable = {
    {"add", {{"autograd/ops_elementwise.cpp",
          "c = a + b;  da += dc,  db += dc"}}},
    {"sub", {{"autograd/ops_elementwise.cpp",
          "c = a - b;  da += dc,  db -= dc"}}},
    {"mul", {{"autograd/ops_elementwise.cpp",
          "c = a * b;  da += dc * b,  db += dc * a"}}},
    {"div", {{"autograd/ops_elementwise.cpp",
          "c = a / b;  da += dc / b,  db -= dc * a / b²"}}},
    {"add_scalar", {{"autograd/ops_elementwise.cpp",
          "y = x + c;  dx += dy"}}},
    {"mul_scalar", {{"autograd/ops_elementwise.cpp",
          "y = c x;  dx += c dy"}}},
    {"neg", {{"autograd/ops_elementwise.cpp",
          "y = -x;  dx -= dy"}}},
    {"tanh", {{"autograd/ops_elementwise.cpp",
          "y = tanh(x);  dx += dy (1 - y²)"}}},
    {"sigmoid", {{"autograd/ops_elementwise.cpp",
          "y = σ(x) = 1 / (1 + e^-x);  dx += dy y (1 - y)"}}},
    {"relu", {{"autograd/ops_elementwise.cpp",
          "y = max(x, 0);  dx += dy [x > 0]"}}},
    {"gelu", {{"autograd/ops_elementwise.cpp",
          "y = x Φ(x) = x (1 + erf(x/√2)) / 2  (exact GELU);  dx += dy (Φ(x) + x φ(x))\n"
          "(Φ the standard normal's distribution function, φ = e^(−x²/2)/√(2π) its density)"}}},
    {"sqrt", {{"autograd/ops_elementwise.cpp",
          "y = √x;  dx += dy / (2 y)"}}},
    {"exp", {{"autograd/ops_elementwise.cpp",
          "y = e^x;  dx += dy y"}}},
    {"log", {{"autograd/ops_elementwise.cpp",
          "y = ln x;  dx += dy / x"}}},
    {"clamp", {{"autograd/ops_elementwise.cpp",
          "y = min(max(x, lo), hi);  dx += dy [lo <= x <= hi]   (PyTorch's convention at the bounds)"}}},
    {"masked_fill", {{"autograd/ops_elementwise.cpp",
          "y = mask ? value : x;  dx += mask ? 0 : dy"}}},
    {"matmul", {{"autograd/ops_matmul.cpp",
          "C = op(A) op(B);  d op(A) += dC op(B)ᵀ,  d op(B) += op(A)ᵀ dC   (op(X) = X or Xᵀ)"}}},
    {"linear", {{"autograd/ops_matmul.cpp",
          "y = x Wᵀ + b, with x [..., in] seen as [rows, in], W [out, in], b [out].\n"
          "  dx += dy W,  dW += dyᵀ x,  db += Σ_rows dy"}}},
    {"dropout", {{"autograd/ops_random.cpp",
          "y = x m / (1 - p), m_i ~ Bernoulli(1 - p);  dx += dy m / (1 - p)"}}},
    {"sum", {{"autograd/ops_reduce.cpp",
          "s = Σ x;  dx += ds"}}},
    {"mean", {{"autograd/ops_reduce.cpp",
          "m = Σ x / n;  dx += dm / n"}}},
    {"sum_dim", {{"autograd/ops_reduce.cpp",
          "s[o,i] = Σ_k x[o,k,i];  dx[o,k,i] += ds[o,i]"}}},
    {"mean_dim", {{"autograd/ops_reduce.cpp",
          "m[o,i] = Σ_k x[o,k,i] / n;  dx[o,k,i] += dm[o,i] / n"}}},
    {"softmax", {{"autograd/ops_reduce.cpp",
          "y_j = e^(x_j - max) / Σ_k e^(x_k - max);  dx_j += y_j (dy_j - Σ_k dy_k y_k)\n"
          "A masked position (x = -inf) gets y = 0 exactly, hence dx = 0 exactly."}}},
    {"log_softmax", {{"autograd/ops_reduce.cpp",
          "y_j = x_j - max - ln Σ_k e^(x_k - max);  dx_j += dy_j - softmax_j Σ_k dy_k"}}},
    {"reshape", {{"autograd/ops_shape.cpp",
          "y = x viewed with another shape;  dx += dy (same memory order)"}}},
    {"transpose", {{"autograd/ops_shape.cpp",
          "y[..., j, i] = x[..., i, j];  dx[..., i, j] += dy[..., j, i]"}}},
    {"transpose_dims", {{"autograd/ops_shape.cpp",
          "y = x with dims d0 and d1 swapped (PyTorch's x.transpose(d0, d1); a copy);  dx = dy swapped back"}}},
    {"concat", {{"autograd/ops_shape.cpp",
          "y = [x_1, x_2, ...] along dim;  dx_i += the slice of dy that x_i filled"}}},
    {"stack", {{"autograd/ops_shape.cpp",
          "y = stack of equal-shaped x_i along a new dim;  dx_i += dy's slice i along that dim"}}},
    {"slice", {{"autograd/ops_shape.cpp",
          "y = x[..., start:end, ...] along dim;  dx[..., start:end, ...] += dy"}}},
    {"embedding", {{"autograd/ops_shape.cpp",
          "y[i, :] = W[ids[i], :];  dW[ids[i], :] += dy[i, :]  (except the padding row)"}}},
    {"additive_attention_scores", {{"autograd/ops_fused_attention.cpp",
          "scores[b,s] = Σ_a v[a] tanh(qp[b,a] + kp[b,s,a])\n"
          "  dqp[b,a] += Σ_s g v[a] (1 − t²),  dkp[b,s,a] += g v[a] (1 − t²),  dv[a] += Σ g t"}}},
    {"attention_context", {{"autograd/ops_fused_attention.cpp",
          "context[b,:] = Σ_s weights[b,s] values[b,s,:]\n"
          "  dweights[b,s] += values[b,s,:] · dcontext[b,:],  dvalues[b,s,:] += weights[b,s] dcontext[b,:]"}}},
    {"attention_dot_scores", {{"autograd/ops_fused_attention.cpp",
          "scores[b,s] = keys[b,s,:] · query[b,:]\n"
          "  dkeys[b,s,:] += dscores[b,s] query[b,:],  dquery[b,:] += Σ_s dscores[b,s] keys[b,s,:]"}}},
    {"scaled_dot_product_attention", {{"autograd/ops_fused_dot_product_attention.cpp",
          "s = q kᵀ/√d (masked to −∞), a = softmax(s), o = a v;\n"
          "  dv += aᵀ do,  ds = a ⊙ (do vᵀ − rowsum(a ⊙ do vᵀ)),  dq += ds k/√d,  dk += dsᵀ q/√d"}}},
    {"layer_norm", {{"autograd/ops_fused_layer_norm.cpp",
          "y = (x − μ) r ⊙ w + b,  r = 1/√(σ² + ε);\n"
          "  dx += r (ĝ − mean(ĝ) − x̂ mean(ĝ x̂)) with ĝ = dy ⊙ w,  dw += Σ dy x̂,  db += Σ dy"}}},
    {"cross_entropy", {{"autograd/ops_fused_loss.cpp",
          "loss_i = lse_i − (1 − ε) x_it − (ε/V) Σ_j x_ij;   dx_ij += scale_i (p_ij − q_ij)"}}},
    {"linear_cross_entropy", {{"autograd/ops_fused_loss.cpp",
          "z = x Wᵀ + b [N, V], then the loss of fused_cross_entropy over z; G (as there) overwrites z.\n"
          "Backward with D = dL · G:  dx += D W,  dW += Dᵀ x,  db += Σ_i D_i."}}},
    {"gather_step_states", {{"autograd/fused_gru.h",
          "states: directions*T tensors [B,H], direction-major (all steps of direction 0 first, each\n"
          "in time order t = 0..T-1); lengths [B], each in 1..T -> [B, T, directions*H].\n"
          "Backward: d states[d*T + t][b, :] += d out[b, t, d*H : (d+1)*H] at valid positions."}}},
    {"shared_over_steps", {{"autograd/kernels/kernels.h",
          "Every step of a recurrence multiplies by the same W. By the chain rule its gradient is\n"
          "  dW = Σ_t dY_tᵀ X_t = [dY_1; ...; dY_T]ᵀ [X_1; ...; X_T],"}}},
    {"gru_cell", gru_cell},
    {"gru_cell_step", gru_cell},
    {"lstm_cell", lstm_cell},
    {"lstm_cell_step", lstm_cell},
    {"rnn_cell", rnn_cell},
    {"rnn_cell_step", rnn_cell},
};
// clang-format on

}  // namespace

const std::vector<OpMaths>& op_maths_table() {
    return kOpMathsTable;
}

const OpMaths* find_op_maths(const std::string& op) {
    for (const OpMaths& entry : op_maths_table())
        if (op == entry.op) return &entry;
    return nullptr;
}

}  // namespace seqgrad
