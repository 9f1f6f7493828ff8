// What the fused recurrent cells share (autograd/fused_cell.h).
#include "seqgrad/autograd/fused_cell.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad {

namespace {
std::string str(const Tensor& t) {
    return t.defined() ? t.shape().str() : "undefined";
}
}  // namespace

CellDims check_cell(const char* op, int64_t gates, const Tensor& input_gates, bool per_step,
                    int64_t t, const Tensor& h, const Tensor& weight_hh, const Tensor& bias_hh,
                    const Tensor& step_mask) {
    auto fail = [&](const std::string& why) {
        return Error(fmt::format("{}: {} {}, h {}, weight_hh {}, bias_hh {}: {}", op,
                                 per_step ? "all_input_gates" : "input_gates", str(input_gates),
                                 str(h), str(weight_hh), str(bias_hh), why));
    };
    // "3H" for the GRU's 3 gates, "H" for the RNN's one
    const std::string g = gates == 1 ? "H" : fmt::format("{}H", gates);
    if (!input_gates.defined() || !h.defined() || !weight_hh.defined() || !bias_hh.defined())
        throw fail("input gates, h, weight_hh and bias_hh must all be defined");
    if (h.rank() != 2) throw fail("h must be [B,H]");
    const int64_t B = h.size(0), H = h.size(1), G = gates * H;
    if (weight_hh.shape() != Shape{G, H})
        throw fail(fmt::format("weight_hh must be [{},H] = [{},{}]", g, G, H));
    if (bias_hh.shape() != Shape{G}) throw fail(fmt::format("bias_hh must be [{}] = [{}]", g, G));
    CellDims d{B, H, 1, 0, B};
    if (per_step) {
        if (input_gates.rank() != 3 || input_gates.size(0) != B || input_gates.size(2) != G)
            throw fail(fmt::format("all_input_gates must be [B,T,{}] = [{},T,{}]", g, B, G));
        d.T = input_gates.size(1);
        if (t < 0 || t >= d.T)
            throw fail(fmt::format("step {} is out of range for {} steps", t, d.T));
        d.t = t;
    } else if (input_gates.shape() != Shape{B, G}) {
        throw fail(fmt::format("input_gates must be [B,{}] = [{},{}]", g, B, G));
    }
    if (step_mask.defined()) {
        bool ok = step_mask.numel() == B &&
                  (step_mask.rank() == 1 || (step_mask.rank() == 2 && step_mask.size(1) == 1));
        if (!ok)
            throw fail(fmt::format("step_mask {} must be [B] or [B,1] with B = {}",
                                   step_mask.shape().str(), B));
        if (step_mask.requires_grad()) throw fail("step_mask must not require grad");
        while (d.active > 0 && step_mask.data()[d.active - 1] == 0) --d.active;
    }
    return d;
}

void check_cell_state(const char* op, const Tensor& h, const Tensor& c) {
    if (!c.defined() || !h.defined() || c.shape() != h.shape())
        throw Error(fmt::format("{}: c {} must be [B,H] like h {}", op, str(c), str(h)));
}

// gh = h W_hhᵀ + b_hh  (rows 0 .. rows-1)
void hidden_gates(const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h, int64_t rows,
                  real* gh) {
    const int64_t G = weight_hh.size(0);
    for (int64_t b = 0; b < rows; ++b) std::memcpy(gh + b * G, bias_hh.data(), sizeof(real) * G);
    if (rows > 0) kernels::product_x_wt(weight_hh.node(), rows, h.data(), 1, gh);
}

// dh += d gh W_hh,  dW_hh += d ghᵀ h,  db_hh += Σ d gh
void hidden_gates_backward(Node& out, size_t h, size_t weight_hh, size_t bias_hh, const real* d_gh,
                           int64_t rows, real* dh) {
    if (rows == 0) return;
    const int64_t G = out.parent(weight_hh).shape[0];
    if (dh) kernels::product_dy_w(out.parent(weight_hh), rows, d_gh, dh);
    kernels::accumulate_weight_grad(out, weight_hh, h, d_gh, rows);
    if (real* d_bias = parent_grad(out, bias_hh))
        for (int64_t b = 0; b < rows; ++b)
            for (int64_t j = 0; j < G; ++j) d_bias[j] += d_gh[b * G + j];
}

}  // namespace seqgrad
