// The recurrent entries of the `seqgrad gradcheck` suite: the cells' ops and the layers, for
// every cell type (RNN, GRU, LSTM), fused and composed. Patterns:
// apps/gradcheck/gradcheck_registry.h.
#include <fmt/format.h>

#include "apps/gradcheck/gradcheck_registry.h"
#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/autograd/fused_lstm.h"
#include "seqgrad/autograd/fused_rnn.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/gru.h"
#include "seqgrad/layers/recurrent.h"

namespace seqgrad::gradcheck_suite {

namespace {

// Inputs of a cell with B = 3, in = 4, H = 3 and G = gates·H: x, h, c, W_ih, W_hh, b_ih, b_hh
// (c only for the LSTM; the weights in [-1.5, 1.5] so the gates saturate a little).
Inputs cell_inputs(int64_t gates, bool with_c) {
    const int64_t G = gates * 3;
    Inputs in{random({3, 4}, 40), random({3, 3}, 41)};
    if (with_c) in.push_back(random({3, 3}, 39));
    for (Tensor t : {random({G, 4}, 42, -1.5, 1.5), random({G, 3}, 43, -1.5, 1.5), random({G}, 44),
                     random({G}, 45)})
        in.push_back(t);
    return in;
}

// The LSTM cell's [2,B,H] result (h' then c') as one vector: what the checks differentiate.
Tensor flat(const Tensor& t) {
    return reshape(t, {-1});
}

// GRU cell; the step mask keeps row 1's state.
void add_gru_ops(Registry& r) {
    r.add(
        "op", "gru_cell (fused) with a step mask",
        [](const Inputs& x) {
            Tensor gates = linear(x[0], x[2], x[4]);
            return gru_cell(gates, x[1], x[3], x[5], mask_tensor({3}, {1, 0, 1}));
        },
        [] { return cell_inputs(3, false); });
    r.add(
        "op", "gru_cell_composed with a step mask",
        [](const Inputs& x) {
            return gru_cell_composed(x[0], x[1], x[2], x[3], x[4], x[5],
                                     mask_tensor({3}, {1, 0, 1}));
        },
        [] { return cell_inputs(3, false); });
    r.add(
        "op", "gru_cell_step (gates of every step in one tensor)",
        [](const Inputs& x) {
            // two steps reading rows t = 1 then t = 0 of all_gates [B=2, T=3, 3H=9]
            Tensor h = gru_cell_step(x[0], 1, x[1], x[2], x[3]);
            return gru_cell_step(x[0], 0, h, x[2], x[3], mask_tensor({2}, {0, 1}));
        },
        [] {
            return Inputs{random({2, 3, 9}, 46), random({2, 3}, 47), random({9, 3}, 48, -1.5, 1.5),
                          random({9}, 49)};
        });
}

// LSTM cell (inputs x, h, c, W_ih, W_hh, b_ih, b_hh); the step mask {1, 1, 0} makes the
// finished row the tail the fused cell skips.
void add_lstm_ops(Registry& r) {
    r.add(
        "op", "lstm_cell (fused) with a step mask",
        [](const Inputs& x) {
            Tensor gates = linear(x[0], x[3], x[5]);
            return flat(lstm_cell(gates, x[1], x[2], x[4], x[6], mask_tensor({3}, {1, 1, 0})));
        },
        [] { return cell_inputs(4, true); });
    r.add(
        "op", "lstm_cell_composed with a step mask",
        [](const Inputs& x) {
            return flat(lstm_cell_composed(x[0], x[1], x[2], x[3], x[4], x[5], x[6],
                                           mask_tensor({3}, {1, 0, 1})));
        },
        [] { return cell_inputs(4, true); });
    r.add(
        "op", "lstm_cell_step (gates of every step in one tensor)",
        [](const Inputs& x) {
            // two steps reading rows t = 1 then t = 0 of all_gates [B=2, T=3, 4H=12]
            Tensor hc = lstm_cell_step(x[0], 1, x[1], x[2], x[3], x[4]);
            Tensor h = reshape(slice(hc, 0, 0, 1), {2, 3}), c = reshape(slice(hc, 0, 1, 2), {2, 3});
            return flat(lstm_cell_step(x[0], 0, h, c, x[3], x[4], mask_tensor({2}, {0, 1})));
        },
        [] {
            return Inputs{random({2, 3, 12}, 46), random({2, 3}, 47), random({2, 3}, 38),
                          random({12, 3}, 48, -1.5, 1.5), random({12}, 49)};
        });
}

// Elman RNN cell (inputs x, h, W_ih, W_hh, b_ih, b_hh)
void add_rnn_ops(Registry& r) {
    r.add(
        "op", "rnn_cell (fused) with a step mask",
        [](const Inputs& x) {
            Tensor gates = linear(x[0], x[2], x[4]);
            return rnn_cell(gates, x[1], x[3], x[5], mask_tensor({3}, {1, 1, 0}));
        },
        [] { return cell_inputs(1, false); });
    r.add(
        "op", "rnn_cell_composed with a step mask",
        [](const Inputs& x) {
            return rnn_cell_composed(x[0], x[1], x[2], x[3], x[4], x[5],
                                     mask_tensor({3}, {1, 0, 1}));
        },
        [] { return cell_inputs(1, false); });
    r.add(
        "op", "rnn_cell_step (gates of every step in one tensor)",
        [](const Inputs& x) {
            Tensor h = rnn_cell_step(x[0], 1, x[1], x[2], x[3]);
            return rnn_cell_step(x[0], 0, h, x[2], x[3], mask_tensor({2}, {0, 1}));
        },
        [] {
            return Inputs{random({2, 3, 3}, 46), random({2, 3}, 47), random({3, 3}, 48, -1.5, 1.5),
                          random({3}, 49)};
        });
}

}  // namespace

void add_recurrent_ops(Registry& r) {
    add_gru_ops(r);
    add_lstm_ops(r);
    add_rnn_ops(r);
    r.add(
        "op", "gather_step_states (bidirectional, lengths {3,1})",
        [](const Inputs& x) {
            return gather_step_states(x, 2, {3, 1});
        },
        [] {
            Inputs states;
            for (uint64_t k = 0; k < 6; ++k) states.push_back(random({2, 2}, 50 + k));
            return states;
        });
}

// Each cell, fused and composed: two steps, the second with a step mask.
void add_recurrent_cells(Registry& r) {
    for (CellType type : {CellType::gru, CellType::lstm, CellType::rnn})
        for (bool fused : {true, false})
            r.add("layer",
                  fmt::format("{}Cell ({} cell)", cell_layer_name(type),
                              fused ? "fused" : "composed"),
                  [type, fused](const GradcheckOptions& o) {
                      Rng rng(63);
                      auto cell = make_cell(type, 4, 3, rng);
                      cell->use_fused = fused;
                      scale_parameters(*cell, 2);
                      const bool lstm = type == CellType::lstm;
                      Tensor mask = mask_tensor({3}, {1, 1, 0});
                      return gradcheck(
                          [&](const Inputs& x) {
                              // two steps, the second with a step mask
                              RecurrentState s{x[1], lstm ? x[2] : Tensor()};
                              s = cell->step(x[0], s);
                              s = cell->step(x[0], s, mask);
                              return lstm ? concat({s.h, s.c}, 1) : s.h;
                          },
                          with_parameters({random({3, 4}, 64), random({3, 3}, 65),
                                           random({3, 3}, 69, -1, 1, lstm)},
                                          *cell),
                          o);
                  });
}

void add_recurrent_layers(Registry& r) {
    add_recurrent_cells(r);
    struct LayerCase {
        const char* name;
        int layers;
        bool bidirectional;
    };
    const LayerCase cases[] = {
        {"padded batch, lengths {4,2,3}", 1, false},
        {"bidirectional, 2 layers, padded", 2, true},
    };
    for (CellType type : {CellType::gru, CellType::lstm, CellType::rnn})
        for (const LayerCase& c : cases)
            for (bool fused : {true, false}) {
                const bool lstm = type == CellType::lstm;
                const std::string name =
                    fmt::format("{} {}{} ({})", cell_layer_name(type), c.name,
                                lstm ? ", h0 and c0" : "", fused ? "fused" : "composed");
                r.add("layer", name, [type, c, fused, lstm](const GradcheckOptions& o) {
                    Rng rng(66);
                    auto layer = make_recurrent(type, 3, 3, c.layers, c.bidirectional, 0, rng);
                    layer->use_fused = fused;
                    scale_parameters(*layer, 2);
                    const std::vector<int32_t> lengths{4, 2, 3};
                    const int64_t states = c.layers * (c.bidirectional ? 2 : 1);
                    return gradcheck(
                        [&](const Inputs& x) {
                            RecurrentOutput out =
                                layer->forward(x[0], lengths, x[1], lstm ? x[2] : Tensor());
                            Inputs parts{reshape(out.outputs, {-1}),
                                         reshape(out.final_hidden, {-1})};
                            if (lstm) parts.push_back(reshape(out.final_cell, {-1}));
                            return concat(parts, 0);
                        },
                        with_parameters({random({3, 4, 3}, 67), random({states, 3, 3}, 68),
                                         random({states, 3, 3}, 70, -1, 1, lstm)},
                                        *layer),
                        o);
                });
            }
}

}  // namespace seqgrad::gradcheck_suite
