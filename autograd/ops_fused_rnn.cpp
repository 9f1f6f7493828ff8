// The Elman RNN cell: the composed twin (primitive ops) and the fused op with its hand-written
// backward. Maths in autograd/fused_rnn.h; shapes at the top of each function.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "seqgrad/autograd/fused_cell.h"
#include "seqgrad/autograd/fused_rnn.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// ---- the composed twin: the definition -----------------------------------------------------

// x [B,in], h [B,H], weight_ih [H,in], weight_hh [H,H], bias_ih [H], bias_hh [H],
// step_mask [B] / [B,1] (optional) -> h' [B,H]. Primitive ops only: this is the definition.
Tensor rnn_cell_composed(const Tensor& x, const Tensor& h, const Tensor& weight_ih,
                         const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                         const Tensor& step_mask) {
    if (!x.defined() || x.rank() != 2 || !h.defined() || h.rank() != 2 || x.size(0) != h.size(0))
        throw Error(fmt::format("rnn_cell_composed: x {} and h {} must be [B,in] and [B,H]",
                                x.defined() ? x.shape().str() : "undefined",
                                h.defined() ? h.shape().str() : "undefined"));
    const int64_t B = h.size(0);
    Tensor gates_x = linear(x, weight_ih, bias_ih);  // [B,H]
    check_cell("rnn_cell_composed", 1, gates_x, false, 0, h, weight_hh, bias_hh, step_mask);
    Tensor h_next = tanh(gates_x + linear(h, weight_hh, bias_hh));
    if (!step_mask.defined()) return h_next;
    Tensor m = reshape(step_mask, {B, 1});
    return m * h_next + (1 - m) * h;
}

// ---- the fused cell: one node, hand-written backward --------------------------------------
namespace {

// The fused cell on step d.t of gates [B,T,H] (T = 1 for a plain [B,H]); rows past d.active
// (all masked) only copy h.
//   forward:  u = tanh(gi + h W_hhᵀ + b_hh) (one gemm, one pass), h' = u or the masked blend.
//   saved:    u [B,H].
Tensor fused_cell(const char* op, const Tensor& gates, CellDims d, const Tensor& h,
                  const Tensor& weight_hh_parameter, const Tensor& bias_hh,
                  const Tensor& step_mask) {
    // W_hh, or the view through which the steps of a recurrence share it (autograd/kernels/kernels.h)
    const Tensor& weight_hh = kernels::weight_in_use(weight_hh_parameter);
    const int64_t B = d.B, H = d.H, active = d.active;
    const int64_t gate_row_stride = d.T * H, gate_offset = d.t * H;

    Buffer saved(size_t(B * H));
    real* const u_all = saved.data();                    // [B,H]: h W_hhᵀ + b_hh, then u
    hidden_gates(weight_hh, bias_hh, h, active, u_all);  // h W_hhᵀ + b_hh

    Tensor out = make_result({B, H});
    std::memcpy(out.data() + active * H, h.data() + active * H, sizeof(real) * (B - active) * H);
    const real* const mask = step_mask.defined() ? step_mask.data() : nullptr;
    for (int64_t b = 0; b < active; ++b) {
        const real* gi = gates.data() + b * gate_row_stride + gate_offset;
        real* u = u_all + b * H;
        const real* h_row = h.data() + b * H;
        real* h_next = out.data() + b * H;
        for (int64_t j = 0; j < H; ++j) u[j] += gi[j];
        kernels::tanh_inplace(u, H);
        const real m = mask ? mask[b] : real(1);  // h' = m u + (1 - m) h
        for (int64_t j = 0; j < H; ++j) h_next[j] = mask ? m * u[j] + (1 - m) * h_row[j] : u[j];
    }

    std::vector<Tensor> inputs{gates, h, weight_hh, bias_hh};
    if (step_mask.defined()) inputs.push_back(step_mask);
    // backward, with g = dh' and m the step mask (1 without one); per element:
    //   da     = m g (1 − u²)            (a = gi + h W_hhᵀ + b_hh, u = tanh(a))
    //   d gi  += da
    //   dh    += (1 − m) g  +  da W_hh   (the last term: one gemm)
    //   dW_hh += daᵀ h                   (one gemm)
    //   db_hh += Σ_b da
    if (record(out, op, inputs, [d](Node& out) {
            const int64_t B = d.B, H = d.H, active = d.active;
            const int64_t gate_row_stride = d.T * H, gate_offset = d.t * H;
            const real* const g_all = out.grad.data();
            const real* const mask = out.parents.size() > 4 ? out.parent(4).data : nullptr;
            const real* const u_all = out.saved.data();
            real* const d_gates = parent_grad(out, 0);
            real* const dh_all = parent_grad(out, 1);

            Buffer da_buffer(size_t(active * H));
            real* const da_all = da_buffer.data();
            for (int64_t b = 0; b < active; ++b) {
                const real m = mask ? mask[b] : real(1);
                const real *u = u_all + b * H, *g = g_all + b * H;
                real* da = da_all + b * H;
                for (int64_t j = 0; j < H; ++j) da[j] = m * g[j] * (1 - u[j] * u[j]);
                if (d_gates) {
                    real* dgi = d_gates + b * gate_row_stride + gate_offset;
                    for (int64_t j = 0; j < H; ++j) dgi[j] += da[j];
                }
                if (dh_all && mask) {
                    real* dh = dh_all + b * H;
                    for (int64_t j = 0; j < H; ++j) dh[j] += (1 - m) * g[j];
                }
            }
            if (dh_all)  // finished rows: h' = h, so dh += g
                for (int64_t k = active * H; k < B * H; ++k) dh_all[k] += g_all[k];
            // dh += da W_hh,  dW_hh += daᵀ h,  db_hh += Σ da
            hidden_gates_backward(out, 1, 2, 3, da_all, active, dh_all);
        }))
        out.node().saved = std::move(saved);
    return out;
}

}  // namespace

// input_gates [B,H], h [B,H], weight_hh [H,H], bias_hh [H], step_mask [B] -> h' [B,H]
Tensor rnn_cell(const Tensor& input_gates, const Tensor& h, const Tensor& weight_hh,
                const Tensor& bias_hh, const Tensor& step_mask) {
    CellDims d = check_cell("rnn_cell", 1, input_gates, false, 0, h, weight_hh, bias_hh, step_mask);
    return fused_cell("rnn_cell", input_gates, d, h, weight_hh, bias_hh, step_mask);
}

// all_input_gates [B,T,H] read at step t, the rest as rnn_cell -> h' [B,H]
Tensor rnn_cell_step(const Tensor& all_input_gates, int64_t t, const Tensor& h,
                     const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& step_mask) {
    CellDims d =
        check_cell("rnn_cell_step", 1, all_input_gates, true, t, h, weight_hh, bias_hh, step_mask);
    return fused_cell("rnn_cell_step", all_input_gates, d, h, weight_hh, bias_hh, step_mask);
}

}  // namespace seqgrad
