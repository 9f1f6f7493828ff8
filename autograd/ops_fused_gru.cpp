// The GRU cell: the composed twin (primitive ops), the fused op with its hand-written backward,
// and the op that assembles per-step states into a [B,T,dirs*H] output. Maths in
// autograd/fused_gru.h; shapes at the top of each function.
#include "seqgrad/autograd/fused_gru.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "seqgrad/autograd/fused_cell.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/ops.h"

namespace seqgrad {

// ---- the composed twin: the definition -----------------------------------------------------

// x [B,in], h [B,H], weight_ih [3H,in], weight_hh [3H,H], bias_ih [3H], bias_hh [3H],
// step_mask [B] / [B,1] (optional) -> h' [B,H]. Primitive ops only: this is the definition.
Tensor gru_cell_composed(const Tensor& x, const Tensor& h, const Tensor& weight_ih,
                         const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                         const Tensor& step_mask) {
    if (!x.defined() || x.rank() != 2 || !h.defined() || h.rank() != 2 || x.size(0) != h.size(0))
        throw Error(fmt::format("gru_cell_composed: x {} and h {} must be [B,in] and [B,H]",
                                x.defined() ? x.shape().str() : "undefined",
                                h.defined() ? h.shape().str() : "undefined"));
    const int64_t B = h.size(0), H = h.size(1);
    Tensor gates_x = linear(x, weight_ih, bias_ih);  // [B,3H]: the input gates gi
    check_cell("gru_cell_composed", 3, gates_x, false, 0, h, weight_hh, bias_hh, step_mask);
    Tensor gates_h = linear(h, weight_hh, bias_hh);  // [B,3H]: the hidden gates gh

    Tensor r = sigmoid(slice(gates_x, 1, 0, H) + slice(gates_h, 1, 0, H));
    Tensor z = sigmoid(slice(gates_x, 1, H, 2 * H) + slice(gates_h, 1, H, 2 * H));
    Tensor n = tanh(slice(gates_x, 1, 2 * H, 3 * H) + r * slice(gates_h, 1, 2 * H, 3 * H));
    Tensor h_next = (1 - z) * n + z * h;
    if (!step_mask.defined()) return h_next;
    Tensor m = reshape(step_mask, {B, 1});
    return m * h_next + (1 - m) * h;
}

// ---- the fused cell: one node, hand-written backward --------------------------------------
namespace {

// The fused cell's backward (out's parents: gates, h, W_hh, b_hh and the optional step mask),
// with g = dh' and m the step mask (1 without one); per element:
//   g_new = m g                                 (what reaches the unmasked h')
//   dn    = g_new (1 − z)        da_n = dn (1 − n²)           (a_n = gi_n + r gh_n)
//   dz    = g_new (h − n)        da_z = dz z (1 − z)          (a_z = gi_z + gh_z)
//   dr    = da_n gh_n            da_r = dr r (1 − r)          (a_r = gi_r + gh_r)
//   d gi  += [da_r | da_z | da_n]
//   d gh   = [da_r | da_z | da_n r]
//   dh    += g_new z + (1 − m) g  +  d gh W_hh     (the last term: one gemm)
//   dW_hh += d ghᵀ h                                (one gemm)
//   db_hh += Σ_b d gh
void fused_cell_backward(Node& out, CellDims d) {
    const int64_t B = d.B, H = d.H, G = 3 * H, active = d.active;
    const int64_t gate_row_stride = d.T * G, gate_offset = d.t * G;
    const real* const g_all = out.grad.data();
    const real* const h_all = out.parent(1).data;
    const real* const mask = out.parents.size() > 4 ? out.parent(4).data : nullptr;
    const real* const rzg = out.saved.data();
    const real* const n_all = rzg + B * G;
    real* const d_gates = parent_grad(out, 0);
    real* const dh_all = parent_grad(out, 1);

    Buffer d_gh_buffer(size_t(active * G));
    real* const d_gh_all = d_gh_buffer.data();
    for (int64_t b = 0; b < active; ++b) {
        const real m = mask ? mask[b] : real(1);
        const real *r = rzg + b * G, *z = r + H, *gh_n = r + 2 * H;
        const real *n = n_all + b * H, *h = h_all + b * H, *g = g_all + b * H;
        real* da_r = d_gh_all + b * G;  // d gh_r = da_r
        real* da_z = da_r + H;          // d gh_z = da_z
        real* d_gh_n = da_r + 2 * H;    // holds da_n, then d gh_n = da_n r
        for (int64_t j = 0; j < H; ++j) {
            const real g_new = m * g[j];
            const real da_n = g_new * (1 - z[j]) * (1 - n[j] * n[j]);
            da_z[j] = g_new * (h[j] - n[j]) * z[j] * (1 - z[j]);
            da_r[j] = da_n * gh_n[j] * r[j] * (1 - r[j]);
            d_gh_n[j] = da_n;
        }
        if (d_gates) {  // d gi = [da_r | da_z | da_n]: the first d gh row, as it is now
            real* dgi = d_gates + b * gate_row_stride + gate_offset;
            for (int64_t j = 0; j < G; ++j) dgi[j] += da_r[j];
        }
        for (int64_t j = 0; j < H; ++j) d_gh_n[j] *= r[j];
        if (dh_all) {
            real* dh = dh_all + b * H;
            for (int64_t j = 0; j < H; ++j) dh[j] += m * g[j] * z[j] + (1 - m) * g[j];
        }
    }
    if (dh_all)  // finished rows: h' = h, so dh += g
        for (int64_t i = active * H; i < B * H; ++i) dh_all[i] += g_all[i];
    // dh += d gh W_hh,  dW_hh += d ghᵀ h,  db_hh += Σ d gh
    hidden_gates_backward(out, 1, 2, 3, d_gh_all, active, dh_all);
}

// The fused cell on step d.t of gates [B,T,3H] (T = 1 for a plain [B,3H]); rows past d.active
// (all masked) only copy h.
//   forward:  gh = h W_hhᵀ + b_hh (one gemm), then one pass over [B,H] for r, z, n, h'.
//   saved:    [B,3H] rows r | z | gh_n (r and z overwrite gh_r and gh_z in place), then n [B,H].
Tensor fused_cell(const char* op, const Tensor& gates, CellDims d, const Tensor& h,
                  const Tensor& weight_hh_parameter, const Tensor& bias_hh,
                  const Tensor& step_mask) {
    // W_hh, or the view through which the steps of a recurrence share it
    // (autograd/kernels/kernels.h)
    const Tensor& weight_hh = kernels::weight_in_use(weight_hh_parameter);
    const int64_t B = d.B, H = d.H, G = 3 * H, active = d.active;
    const int64_t gate_row_stride = d.T * G, gate_offset = d.t * G;

    Buffer saved(size_t(4 * B * H));
    real* const rzg = saved.data();                    // [B,3H]: gh, then r | z | gh_n
    real* const n_all = rzg + B * G;                   // [B,H]
    hidden_gates(weight_hh, bias_hh, h, active, rzg);  // gh = h W_hhᵀ + b_hh

    Tensor out = make_result({B, H});
    std::memcpy(out.data() + active * H, h.data() + active * H, sizeof(real) * (B - active) * H);
    const real* const mask = step_mask.defined() ? step_mask.data() : nullptr;
    for (int64_t b = 0; b < active; ++b) {
        const real* gi_r = gates.data() + b * gate_row_stride + gate_offset;
        const real* gi_n = gi_r + 2 * H;
        real* r = rzg + b * G;  // holds gh_r until overwritten with r
        real* z = r + H;        // holds gh_z until overwritten with z
        const real* gh_n = r + 2 * H;
        real* n = n_all + b * H;
        const real* h_row = h.data() + b * H;
        real* h_next = out.data() + b * H;
        for (int64_t j = 0; j < 2 * H; ++j) r[j] += gi_r[j];  // r | z pre-activations
        kernels::sigmoid_inplace(r, 2 * H);                   // r = σ(.), z = σ(.)
        for (int64_t j = 0; j < H; ++j) n[j] = gi_n[j] + r[j] * gh_n[j];
        kernels::tanh_inplace(n, H);
        for (int64_t j = 0; j < H; ++j) h_next[j] = (1 - z[j]) * n[j] + z[j] * h_row[j];
        if (mask) {  // h' = m h' + (1 - m) h
            const real m = mask[b];
            for (int64_t j = 0; j < H; ++j) h_next[j] = m * h_next[j] + (1 - m) * h_row[j];
        }
    }

    std::vector<Tensor> inputs{gates, h, weight_hh, bias_hh};
    if (step_mask.defined()) inputs.push_back(step_mask);
    if (record(out, op, inputs, [d](Node& out) { fused_cell_backward(out, d); }))
        out.node().saved = std::move(saved);
    return out;
}

}  // namespace

// input_gates [B,3H], h [B,H], weight_hh [3H,H], bias_hh [3H], step_mask [B] -> h' [B,H]
Tensor gru_cell(const Tensor& input_gates, const Tensor& h, const Tensor& weight_hh,
                const Tensor& bias_hh, const Tensor& step_mask) {
    CellDims d = check_cell("gru_cell", 3, input_gates, false, 0, h, weight_hh, bias_hh, step_mask);
    return fused_cell("gru_cell", input_gates, d, h, weight_hh, bias_hh, step_mask);
}

// all_input_gates [B,T,3H] read at step t, the rest as gru_cell -> h' [B,H]
Tensor gru_cell_step(const Tensor& all_input_gates, int64_t t, const Tensor& h,
                     const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& step_mask) {
    CellDims d =
        check_cell("gru_cell_step", 3, all_input_gates, true, t, h, weight_hh, bias_hh, step_mask);
    return fused_cell("gru_cell_step", all_input_gates, d, h, weight_hh, bias_hh, step_mask);
}

// ---- assembling a recurrence's outputs -----------------------------------------------------

// states: directions*T tensors [B,H] (direction-major), lengths [B] -> [B, T, directions*H]
Tensor gather_step_states(const std::vector<Tensor>& states, int directions,
                          const std::vector<int32_t>& lengths) {
    if (directions < 1 || states.empty() || states.size() % size_t(directions) != 0)
        throw Error(fmt::format("gather_step_states: {} states for {} directions", states.size(),
                                directions));
    const int64_t T = int64_t(states.size()) / directions;
    const Shape& first = states[0].shape();
    if (first.rank() != 2)
        throw Error(fmt::format("gather_step_states: states must be [B,H], got {}", first.str()));
    for (const Tensor& s : states)
        if (s.shape() != first)
            throw Error(fmt::format("gather_step_states: states {} and {} differ", first.str(),
                                    s.shape().str()));
    const int64_t B = first[0], H = first[1], D = directions, row = D * H;
    if (int64_t(lengths.size()) != B)
        throw Error(
            fmt::format("gather_step_states: {} lengths for a batch of {}", lengths.size(), B));
    for (size_t b = 0; b < lengths.size(); ++b)
        if (lengths[b] < 1 || lengths[b] > T)
            throw Error(fmt::format("gather_step_states: length {} of sequence {} is not in 1..{}",
                                    lengths[b], b, T));

    Tensor out = make_result({B, T, D * H});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
            for (int64_t dir = 0; dir < D; ++dir) {
                real* dst = out.data() + (b * T + t) * row + dir * H;
                if (t < lengths[b])
                    std::memcpy(dst, states[dir * T + t].data() + b * H, sizeof(real) * H);
                else
                    std::fill(dst, dst + H, real(0));
            }
    if (record(out, "gather_step_states", states, [B, T, H, row](Node& out) {
            const real* g = out.grad.data();
            const auto& lengths = out.saved_ints;
            for (size_t i = 0; i < out.parents.size(); ++i) {
                real* d_state = parent_grad(out, i);
                if (!d_state) continue;
                const int64_t dir = int64_t(i) / T, t = int64_t(i) % T;
                for (int64_t b = 0; b < B; ++b) {
                    if (t >= lengths[b]) continue;
                    const real* g_row = g + (b * T + t) * row + dir * H;
                    for (int64_t j = 0; j < H; ++j) d_state[b * H + j] += g_row[j];
                }
            }
        }))
        out.node().saved_ints = lengths;
    return out;
}

}  // namespace seqgrad
