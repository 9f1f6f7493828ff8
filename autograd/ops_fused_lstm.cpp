// The LSTM cell: the composed twin (primitive ops) and the fused op with its hand-written
// backward. Maths in autograd/fused_lstm.h; shapes at the top of each function.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "seqgrad/autograd/fused_cell.h"
#include "seqgrad/autograd/fused_lstm.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// ---- the composed twin: the definition -----------------------------------------------------

// x [B,in], h [B,H], c [B,H], weight_ih [4H,in], weight_hh [4H,H], bias_ih [4H], bias_hh [4H],
// step_mask [B] / [B,1] (optional) -> hc' [2,B,H]. Primitive ops only: this is the definition.
Tensor lstm_cell_composed(const Tensor& x, const Tensor& h, const Tensor& c,
                          const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih,
                          const Tensor& bias_hh, const Tensor& step_mask) {
    if (!x.defined() || x.rank() != 2 || !h.defined() || h.rank() != 2 || x.size(0) != h.size(0))
        throw Error(fmt::format("lstm_cell_composed: x {} and h {} must be [B,in] and [B,H]",
                                x.defined() ? x.shape().str() : "undefined",
                                h.defined() ? h.shape().str() : "undefined"));
    check_cell_state("lstm_cell_composed", h, c);
    const int64_t B = h.size(0), H = h.size(1);
    Tensor gates_x = linear(x, weight_ih, bias_ih);  // [B,4H]
    check_cell("lstm_cell_composed", 4, gates_x, false, 0, h, weight_hh, bias_hh, step_mask);
    Tensor a = gates_x + linear(h, weight_hh, bias_hh);  // [B,4H]: i | f | g | o

    Tensor i = sigmoid(slice(a, 1, 0, H));
    Tensor f = sigmoid(slice(a, 1, H, 2 * H));
    Tensor g = tanh(slice(a, 1, 2 * H, 3 * H));
    Tensor o = sigmoid(slice(a, 1, 3 * H, 4 * H));
    Tensor c_next = f * c + i * g;
    Tensor h_next = o * tanh(c_next);
    if (step_mask.defined()) {
        Tensor m = reshape(step_mask, {B, 1});
        h_next = m * h_next + (1 - m) * h;
        c_next = m * c_next + (1 - m) * c;
    }
    return stack({h_next, c_next}, 0);
}

// ---- the fused cell: one node, hand-written backward --------------------------------------
namespace {

// The fused cell's backward (out's parents: gates, h, c, W_hh, b_hh and the optional step mask),
// with (gh, gc) = (dh', dc') and m the step mask (1 without one); per element:
//   dc_new = m gc + m gh o (1 − tanh²(c'))    (what reaches the unmasked c', both paths)
//   do = m gh tanh(c')     da_o = do o (1 − o)
//   di = dc_new g          da_i = di i (1 − i)
//   df = dc_new c          da_f = df f (1 − f)
//   dg = dc_new i          da_g = dg (1 − g²)
//   d gi += da,   d gh = da          (da = [da_i | da_f | da_g | da_o])
//   dc += dc_new f + (1 − m) gc
//   dh += (1 − m) gh  +  da W_hh     (the last term: one gemm)
//   dW_hh += daᵀ h                    (one gemm)
//   db_hh += Σ_b da
void fused_cell_backward(Node& out, CellDims d) {
    const int64_t B = d.B, H = d.H, G = 4 * H, active = d.active;
    const int64_t gate_row_stride = d.T * G, gate_offset = d.t * G;
    const real* const gh_all = out.grad.data();
    const real* const gc_all = gh_all + B * H;
    const real* const c_all = out.parent(2).data;
    const real* const mask = out.parents.size() > 5 ? out.parent(5).data : nullptr;
    const real* const ifgo = out.saved.data();
    const real* const tanh_c_all = ifgo + B * G;
    real* const d_gates = parent_grad(out, 0);
    real* const dh_all = parent_grad(out, 1);
    real* const dc_all = parent_grad(out, 2);

    Buffer da_buffer(size_t(active * G));
    real* const da_all = da_buffer.data();
    for (int64_t b = 0; b < active; ++b) {
        const real m = mask ? mask[b] : real(1);
        const real *i = ifgo + b * G, *f = i + H, *g = i + 2 * H, *o = i + 3 * H;
        const real *tanh_c = tanh_c_all + b * H, *c = c_all + b * H;
        const real *gh = gh_all + b * H, *gc = gc_all + b * H;
        real* da_i = da_all + b * G;
        real *da_f = da_i + H, *da_g = da_i + 2 * H, *da_o = da_i + 3 * H;
        real* dc = dc_all ? dc_all + b * H : nullptr;
        for (int64_t j = 0; j < H; ++j) {
            const real gh_new = m * gh[j];
            const real dc_new = m * gc[j] + gh_new * o[j] * (1 - tanh_c[j] * tanh_c[j]);
            da_o[j] = gh_new * tanh_c[j] * o[j] * (1 - o[j]);
            da_i[j] = dc_new * g[j] * i[j] * (1 - i[j]);
            da_f[j] = dc_new * c[j] * f[j] * (1 - f[j]);
            da_g[j] = dc_new * i[j] * (1 - g[j] * g[j]);
            if (dc) dc[j] += dc_new * f[j] + (1 - m) * gc[j];
        }
        if (d_gates) {
            real* dgi = d_gates + b * gate_row_stride + gate_offset;
            for (int64_t j = 0; j < G; ++j) dgi[j] += da_i[j];
        }
        if (dh_all && mask) {
            real* dh = dh_all + b * H;
            for (int64_t j = 0; j < H; ++j) dh[j] += (1 - m) * gh[j];
        }
    }
    // finished rows: h' = h and c' = c, so dh += gh and dc += gc
    if (dh_all)
        for (int64_t k = active * H; k < B * H; ++k) dh_all[k] += gh_all[k];
    if (dc_all)
        for (int64_t k = active * H; k < B * H; ++k) dc_all[k] += gc_all[k];
    // dh += da W_hh,  dW_hh += daᵀ h,  db_hh += Σ da
    hidden_gates_backward(out, 1, 3, 4, da_all, active, dh_all);
}

// The fused cell on step d.t of gates [B,T,4H] (T = 1 for a plain [B,4H]); rows past d.active
// (all masked) only copy h and c.
//   forward:  a = gi + h W_hhᵀ + b_hh (one gemm), then one pass over [B,H] per row for the
//             gates, c' and h'.
//   saved:    [B,4H] rows i | f | g | o (the activated gates), then tanh(c') [B,H].
Tensor fused_cell(const char* op, const Tensor& gates, CellDims d, const Tensor& h, const Tensor& c,
                  const Tensor& weight_hh_parameter, const Tensor& bias_hh,
                  const Tensor& step_mask) {
    // W_hh, or the view through which the steps of a recurrence share it (autograd/kernels/kernels.h)
    const Tensor& weight_hh = kernels::weight_in_use(weight_hh_parameter);
    const int64_t B = d.B, H = d.H, G = 4 * H, active = d.active;
    const int64_t gate_row_stride = d.T * G, gate_offset = d.t * G;

    Buffer saved(size_t(5 * B * H));
    real* const ifgo = saved.data();        // [B,4H]: h W_hhᵀ + b_hh, then i | f | g | o
    real* const tanh_c_all = ifgo + B * G;  // [B,H]
    hidden_gates(weight_hh, bias_hh, h, active, ifgo);  // h W_hhᵀ + b_hh

    Tensor out = make_result({2, B, H});  // [0] = h', [1] = c'
    real* const h_out = out.data();
    real* const c_out = out.data() + B * H;
    std::memcpy(h_out + active * H, h.data() + active * H, sizeof(real) * (B - active) * H);
    std::memcpy(c_out + active * H, c.data() + active * H, sizeof(real) * (B - active) * H);
    const real* const mask = step_mask.defined() ? step_mask.data() : nullptr;
    for (int64_t b = 0; b < active; ++b) {
        const real* gi = gates.data() + b * gate_row_stride + gate_offset;
        real* i = ifgo + b * G;  // holds the pre-activations until overwritten with the gates
        real *f = i + H, *g = i + 2 * H, *o = i + 3 * H;
        real* tanh_c = tanh_c_all + b * H;
        const real* h_row = h.data() + b * H;
        const real* c_row = c.data() + b * H;
        real* h_next = h_out + b * H;
        real* c_next = c_out + b * H;
        for (int64_t j = 0; j < G; ++j) i[j] += gi[j];  // a = gi + gh
        kernels::sigmoid_inplace(i, 2 * H);             // i, f = σ(.)
        kernels::tanh_inplace(g, H);                    // g = tanh(.)
        kernels::sigmoid_inplace(o, H);                 // o = σ(.)
        for (int64_t j = 0; j < H; ++j) c_next[j] = f[j] * c_row[j] + i[j] * g[j];
        std::memcpy(tanh_c, c_next, sizeof(real) * H);
        kernels::tanh_inplace(tanh_c, H);
        for (int64_t j = 0; j < H; ++j) h_next[j] = o[j] * tanh_c[j];
        if (mask) {  // h' = m h' + (1 - m) h,  c' = m c' + (1 - m) c
            const real m = mask[b];
            for (int64_t j = 0; j < H; ++j) {
                h_next[j] = m * h_next[j] + (1 - m) * h_row[j];
                c_next[j] = m * c_next[j] + (1 - m) * c_row[j];
            }
        }
    }

    std::vector<Tensor> inputs{gates, h, c, weight_hh, bias_hh};
    if (step_mask.defined()) inputs.push_back(step_mask);
    if (record(out, op, inputs, [d](Node& out) { fused_cell_backward(out, d); }))
        out.node().saved = std::move(saved);
    return out;
}

}  // namespace

// input_gates [B,4H], h [B,H], c [B,H], weight_hh [4H,H], bias_hh [4H], step_mask [B]
// -> hc' [2,B,H]
Tensor lstm_cell(const Tensor& input_gates, const Tensor& h, const Tensor& c,
                 const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& step_mask) {
    CellDims d =
        check_cell("lstm_cell", 4, input_gates, false, 0, h, weight_hh, bias_hh, step_mask);
    check_cell_state("lstm_cell", h, c);
    return fused_cell("lstm_cell", input_gates, d, h, c, weight_hh, bias_hh, step_mask);
}

// all_input_gates [B,T,4H] read at step t, the rest as lstm_cell -> hc' [2,B,H]
Tensor lstm_cell_step(const Tensor& all_input_gates, int64_t t, const Tensor& h, const Tensor& c,
                      const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& step_mask) {
    CellDims d =
        check_cell("lstm_cell_step", 4, all_input_gates, true, t, h, weight_hh, bias_hh, step_mask);
    check_cell_state("lstm_cell_step", h, c);
    return fused_cell("lstm_cell_step", all_input_gates, d, h, c, weight_hh, bias_hh, step_mask);
}

}  // namespace seqgrad
