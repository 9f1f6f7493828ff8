// The recurrent driver shared by every cell, and the Elman RNN and LSTM cells and layers: values
// by hand, double-precision gradchecks of every cell and layer (composed and fused), fused ==
// composed to 1e-12, a padded batch == each sequence alone, PyTorch's parameter names, errors.
// (The GRU's own suite is test_gru.cpp; equality with PyTorch is test_recurrent_torch.cpp.)
#include <cmath>

#include "recurrent_util.h"
#include "seqgrad/autograd/fused_lstm.h"
#include "seqgrad/autograd/fused_rnn.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/layers/gru.h"
#include "seqgrad/layers/lstm.h"
#include "seqgrad/layers/rnn.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::flat_result;
using seqgrad::testing::mask_of;
using seqgrad::testing::max_abs_diff;
using seqgrad::testing::random_tensor;
using seqgrad::testing::with_parameters;

namespace {

// The cells this suite is about, and the two forms of each.
const CellType new_cells[] = {CellType::rnn, CellType::lstm};
const bool fused_variants[] = {false, true};

}  // namespace

// ---- cell types ------------------------------------------------------------------------------

TEST_CASE("cell types: names, gate counts, unknown names") {
    for (CellType type : {CellType::rnn, CellType::gru, CellType::lstm})
        CHECK(parse_cell_type(cell_type_name(type)) == type);
    CHECK(std::string(cell_type_name(CellType::lstm)) == "lstm");
    CHECK(std::string(cell_layer_name(CellType::rnn)) == "RNN");
    CHECK(cell_gate_count(CellType::rnn) == 1);
    CHECK(cell_gate_count(CellType::gru) == 3);
    CHECK(cell_gate_count(CellType::lstm) == 4);
    CHECK_THROWS_WITH_AS(parse_cell_type("LSTM"),
                         "unknown cell type 'LSTM' (expected \"rnn\", \"gru\" or \"lstm\")", Error);
}

// ---- the cells by hand -----------------------------------------------------------------------

TEST_CASE("LSTM cell: a 1-unit step computed by hand") {
    // x = 0.5, h = -0.3, c = 0.2, W_ih = [0.1, 0.2, 0.3, 0.4], W_hh = [0.5, 0.6, 0.7, 0.8],
    // b_ih = [0.01, 0.02, 0.03, 0.04], b_hh = [0.05, 0.06, 0.07, 0.08]:
    //   a  = W_ih x + b_ih + W_hh h + b_hh = [−0.04, 0, 0.04, 0.08]
    //   i = σ(−0.04) = 0.4900013331200346, f = σ(0) = 0.5, g = tanh(0.04) = 0.03997868031116358,
    //   o = σ(0.08) = 0.5199893401555818
    //   c' = f c + i g = 0.11958960664884984,   h' = o tanh(c') = 0.06189055539577729
    Tensor x = Tensor::from_vector({1, 1}, {0.5}), h = Tensor::from_vector({1, 1}, {-0.3});
    Tensor c = Tensor::from_vector({1, 1}, {0.2});
    Tensor w_ih = Tensor::from_vector({4, 1}, {0.1, 0.2, 0.3, 0.4});
    Tensor w_hh = Tensor::from_vector({4, 1}, {0.5, 0.6, 0.7, 0.8});
    Tensor b_ih = Tensor::from_vector({4}, {0.01, 0.02, 0.03, 0.04});
    Tensor b_hh = Tensor::from_vector({4}, {0.05, 0.06, 0.07, 0.08});
    Tensor hc = lstm_cell_composed(x, h, c, w_ih, w_hh, b_ih, b_hh);
    REQUIRE(hc.shape() == Shape{2, 1, 1});
    CHECK(hc.data()[0] == doctest::Approx(0.06189055539577729).epsilon(1e-14));
    CHECK(hc.data()[1] == doctest::Approx(0.11958960664884984).epsilon(1e-14));
    // a masked row keeps both h and c
    Tensor kept = lstm_cell_composed(x, h, c, w_ih, w_hh, b_ih, b_hh, mask_of({0}));
    CHECK(kept.data()[0] == -0.3);
    CHECK(kept.data()[1] == 0.2);
}

TEST_CASE("RNN cell: a 1-unit step computed by hand") {
    // h' = tanh(0.1·0.5 + 0.01 + 0.5·(−0.3) + 0.05) = tanh(−0.04) = −0.03997868031116356
    Tensor x = Tensor::from_vector({1, 1}, {0.5}), h = Tensor::from_vector({1, 1}, {-0.3});
    Tensor h_next = rnn_cell_composed(
        x, h, Tensor::from_vector({1, 1}, {0.1}), Tensor::from_vector({1, 1}, {0.5}),
        Tensor::from_vector({1}, {0.01}), Tensor::from_vector({1}, {0.05}));
    CHECK(h_next.item() == doctest::Approx(-0.03997868031116356).epsilon(1e-14));
}

// ---- cells: parameters, gradchecks, fused == composed ------------------------------------

TEST_CASE(
    "RNNCell, LSTMCell: PyTorch's parameter names and shapes, init U(-1/sqrt(H), 1/sqrt(H))") {
    for (CellType type : new_cells) {
        CAPTURE(cell_type_name(type));
        Rng rng(30);
        auto cell = make_cell(type, 5, 4, rng);
        CHECK(cell->type() == type);
        CHECK(cell->input_size() == 5);
        CHECK(cell->hidden_size() == 4);
        const int64_t G = cell_gate_count(type) * 4;
        auto named = cell->named_parameters();
        REQUIRE(named.size() == 4);
        const char* names[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
        const Shape shapes[] = {{G, 5}, {G, 4}, {G}, {G}};
        for (size_t i = 0; i < 4; ++i) {
            CHECK(named[i].first == names[i]);
            CHECK(named[i].second.shape() == shapes[i]);
            for (real v : named[i].second.to_vector()) CHECK(std::fabs(v) <= 0.5);  // 1/sqrt(4)
        }
    }
}

TEST_CASE("RNNCell, LSTMCell: gradcheck of every step form, with and without a step mask") {
    for (CellType type : new_cells)
        for (bool fused : fused_variants)
            for (bool masked : {false, true}) {
                CAPTURE(cell_type_name(type));
                CAPTURE(fused);
                CAPTURE(masked);
                Rng rng(31);
                auto cell = make_cell(type, 3, 4, rng);
                cell->use_fused = fused;
                const bool lstm = type == CellType::lstm;
                Tensor x = random_tensor({3, 3}, 32), h = random_tensor({3, 4}, 33);
                Tensor c = random_tensor({3, 4}, 34, lstm);  // (no gradient to check for the RNN)
                // mask {1, 0, 1}: the finished row is not the tail, so no row is skipped;
                // {1, 1, 0} in the layer tests below makes a skipped tail
                Tensor mask = masked ? mask_of({1, 0, 1}) : Tensor();
                auto r = expect_gradcheck(
                    [&](auto& in) {
                        RecurrentState s =
                            cell->step(in[0], {in[1], lstm ? in[2] : Tensor()}, mask);
                        return lstm ? concat({s.h, s.c}, 1) : s.h;
                    },
                    with_parameters({x, h, c}, *cell));
                CHECK(r.inputs_checked == (lstm ? 7 : 6));
            }
}

TEST_CASE(
    "lstm_cell, rnn_cell and their _step forms: gradcheck, and == the composed twin to "
    "1e-12 (value and every gradient), with finished rows as the skipped tail") {
    const int64_t B = 3, I = 2, H = 3, T = 2, t = 1;
    for (CellType type : new_cells)
        for (Tensor mask : {Tensor(), mask_of({1, 0, 1}), mask_of({1, 1, 0}), mask_of({0, 0, 0})}) {
            CAPTURE(cell_type_name(type));
            CAPTURE(mask.defined() ? mask.to_vector() : std::vector<real>{});
            const bool lstm = type == CellType::lstm;
            const int64_t G = cell_gate_count(type) * H;
            Tensor x = random_tensor({B, T, I}, 70), h = random_tensor({B, H}, 71);
            Tensor c = random_tensor({B, H}, 72, lstm);
            Tensor w_ih = random_tensor({G, I}, 73), w_hh = random_tensor({G, H}, 74);
            Tensor b_ih = random_tensor({G}, 75), b_hh = random_tensor({G}, 76);
            std::vector<Tensor> leaves{x, h, c, w_ih, w_hh, b_ih, b_hh};
            // the three forms, each of step t of x: composed, fused single-step, fused _step
            auto run = [&](int form, const std::vector<Tensor>& in) {
                Tensor x_t = reshape(slice(in[0], 1, t, t + 1), {B, I});
                if (form == 0)
                    return lstm ? lstm_cell_composed(x_t, in[1], in[2], in[3], in[4], in[5], in[6],
                                                     mask)
                                : rnn_cell_composed(x_t, in[1], in[3], in[4], in[5], in[6], mask);
                if (form == 1) {
                    Tensor gates = linear(x_t, in[3], in[5]);
                    return lstm ? lstm_cell(gates, in[1], in[2], in[4], in[6], mask)
                                : rnn_cell(gates, in[1], in[4], in[6], mask);
                }
                Tensor all_gates = linear(in[0], in[3], in[5]);  // [B,T,G]
                return lstm ? lstm_cell_step(all_gates, t, in[1], in[2], in[4], in[6], mask)
                            : rnn_cell_step(all_gates, t, in[1], in[4], in[6], mask);
            };
            Tensor weight = random_tensor(lstm ? Shape{2, B, H} : Shape{B, H}, 77, false);
            std::vector<std::vector<Tensor>> results;
            for (int form = 0; form < 3; ++form) {
                CAPTURE(form);
                expect_gradcheck([&](auto& in) { return run(form, in); }, leaves);
                for (Tensor& leaf : leaves) leaf.zero_grad();
                Tensor out = run(form, leaves);
                sum(out * weight).backward();
                std::vector<Tensor> r{out.detach()};
                for (const Tensor& leaf : leaves) r.push_back(leaf.grad());
                results.push_back(r);
            }
            for (int form = 1; form < 3; ++form)
                for (size_t i = 0; i < results[0].size(); ++i) {
                    CAPTURE(form);
                    CAPTURE(i);
                    CHECK(max_abs_diff(results[size_t(form)][i], results[0][i]) <= 1e-12);
                }
        }
}

TEST_CASE(
    "a cell stepped by hand, as a decoder does: the SharedOverStepsScope of step_weights() "
    "gives the unshared loop's gradients, with rows dropping out as in a sorted batch") {
    const int64_t T = 4, B = 3, I = 2, H = 3;
    const std::vector<int64_t> rows_at{3, 3, 2, 1};
    for (CellType type : {CellType::rnn, CellType::gru, CellType::lstm}) {
        CAPTURE(cell_type_name(type));
        const bool lstm = type == CellType::lstm;
        Rng rng(80);
        auto cell = make_cell(type, I, H, rng);
        Tensor xs = random_tensor({T, B, I}, 81);
        // Σ_t (t + 1) Σ h_t (+ the same of c_t), each step on the first rows_at[t] rows
        auto loss = [&](const std::vector<Tensor>& in, bool share) {
            std::unique_ptr<kernels::SharedOverStepsScope> scope;
            if (share)
                scope = std::make_unique<kernels::SharedOverStepsScope>(cell->step_weights());
            RecurrentState s = cell->zero_state(B);
            Tensor total = Tensor::scalar(0);
            for (int64_t t = 0; t < T; ++t) {
                const int64_t n = rows_at[size_t(t)];
                Tensor x_t = slice(reshape(slice(in[0], 0, t, t + 1), {B, I}), 0, 0, n);
                s = cell->step(x_t, {slice(s.h, 0, 0, n), lstm ? slice(s.c, 0, 0, n) : Tensor()});
                total = total + sum(s.h * real(t + 1));
                if (lstm) total = total + sum(s.c * real(t + 1));
            }
            return total;
        };
        std::vector<Tensor> leaves = with_parameters({xs}, *cell);
        expect_gradcheck([&](auto& in) { return loss(in, true); }, leaves);
        auto gradients = [&](bool share) {
            for (Tensor& t : leaves) t.zero_grad();
            loss(leaves, share).backward();
            std::vector<Tensor> g;
            for (const Tensor& t : leaves) g.push_back(t.grad());
            return g;
        };
        const auto shared = gradients(true), per_step = gradients(false);
        for (size_t i = 0; i < leaves.size(); ++i)
            CHECK(max_abs_diff(shared[i], per_step[i]) <= 1e-12);
    }
}

// ---- layers ----------------------------------------------------------------------------------

TEST_CASE("RNN, LSTM: PyTorch's parameter names, order and shapes (2 layers, bidirectional)") {
    for (CellType type : new_cells) {
        CAPTURE(cell_type_name(type));
        Rng rng(40);
        const int64_t I = 5, H = 3, G = cell_gate_count(type) * H;
        auto layer = make_recurrent(type, I, H, 2, true, 0, rng);
        CHECK(layer->type() == type);
        std::vector<std::pair<std::string, Shape>> expected;
        for (int l = 0; l < 2; ++l)
            for (std::string suffix : {"", "_reverse"}) {
                const int64_t in = l == 0 ? I : 2 * H;
                const std::string s = "_l" + std::to_string(l) + suffix;
                expected.push_back({"weight_ih" + s, {G, in}});
                expected.push_back({"weight_hh" + s, {G, H}});
                expected.push_back({"bias_ih" + s, {G}});
                expected.push_back({"bias_hh" + s, {G}});
            }
        auto named = layer->named_parameters();
        REQUIRE(named.size() == expected.size());
        for (size_t i = 0; i < named.size(); ++i) {
            CHECK(named[i].first == expected[i].first);
            CHECK(named[i].second.shape() == expected[i].second);
        }
        CHECK(layer->weights(1, 1).weight_ih.data() == named[12].second.data());
        const double bound = 1 / std::sqrt(3.0);
        for (auto& [name, p] : named)
            for (real v : p.to_vector()) CHECK(std::fabs(v) <= bound);
    }
}

TEST_CASE(
    "RNN, LSTM: gradcheck, padded batch {3,1,2} and sorted {3,2,1}, 1 and 2 layers, uni- "
    "and bidirectional, h0 and c0") {
    for (CellType type : new_cells)
        for (bool fused : fused_variants)
            for (int layers : {1, 2})
                for (bool bidirectional : {false, true}) {
                    CAPTURE(cell_type_name(type));
                    CAPTURE(fused);
                    CAPTURE(layers);
                    CAPTURE(bidirectional);
                    const bool lstm = type == CellType::lstm;
                    Rng rng(44);
                    auto layer = make_recurrent(type, 2, 3, layers, bidirectional, 0, rng);
                    layer->use_fused = fused;
                    const int64_t D = bidirectional ? 2 : 1;
                    Tensor x = random_tensor({3, 3, 2}, 45);
                    Tensor h0 = random_tensor({layers * D, 3, 3}, 46);
                    Tensor c0 = random_tensor({layers * D, 3, 3}, 47);
                    for (std::vector<int32_t> lengths :
                         {std::vector<int32_t>{3, 1, 2}, std::vector<int32_t>{3, 2, 1}})
                        expect_gradcheck(
                            [&](auto& in) {
                                return flat_result(
                                    layer->forward(in[0], lengths, in[1], lstm ? in[2] : Tensor()));
                            },
                            with_parameters({x, h0, lstm ? c0 : Tensor::zeros({1})}, *layer));
                }
}

TEST_CASE(
    "RNN, LSTM: fused == composed (values, step states and every gradient to 1e-12), "
    "sorted and unsorted lengths") {
    for (CellType type : new_cells)
        for (std::vector<int32_t> lengths :
             {std::vector<int32_t>{4, 1, 3}, std::vector<int32_t>{4, 3, 1}}) {
            CAPTURE(cell_type_name(type));
            const bool lstm = type == CellType::lstm;
            Rng rng(47);
            auto layer = make_recurrent(type, 3, 4, 2, true, 0, rng);
            Tensor x = random_tensor({3, 4, 3}, 48), h0 = random_tensor({4, 3, 4}, 49);
            Tensor c0 = random_tensor({4, 3, 4}, 50, lstm);
            Tensor w_out = random_tensor({3, 4, 8}, 51, false);
            Tensor w_h = random_tensor({4, 3, 4}, 52, false),
                   w_c = random_tensor({4, 3, 4}, 53, false);
            std::vector<Tensor> leaves = with_parameters({x, h0, c0}, *layer);
            auto run = [&](bool fused) {
                layer->use_fused = fused;
                for (Tensor& t : leaves) t.zero_grad();
                RecurrentOutput out = layer->forward(x, lengths, h0, lstm ? c0 : Tensor());
                Tensor loss = sum(out.outputs * w_out) + sum(out.final_hidden * w_h);
                if (lstm) loss = loss + sum(out.final_cell * w_c);
                loss.backward();
                std::vector<Tensor> result{out.outputs.detach(), out.final_hidden.detach()};
                if (lstm) result.push_back(out.final_cell.detach());
                for (const Tensor& s : out.step_states) result.push_back(s.detach());
                for (const Tensor& t : leaves) result.push_back(t.grad());
                return result;
            };
            std::vector<Tensor> fused = run(true), composed = run(false);
            REQUIRE(fused.size() == composed.size());
            for (size_t i = 0; i < fused.size(); ++i) {
                CAPTURE(i);
                CHECK(max_abs_diff(fused[i], composed[i]) <= 1e-12);
            }
        }
}

TEST_CASE(
    "every cell: step_states keep their gradients (retain_grad), fused == composed, as a "
    "gradient-flow study reads them") {
    const int64_t B = 2, T = 5, I = 2, H = 3;
    for (CellType type : {CellType::rnn, CellType::gru, CellType::lstm}) {
        CAPTURE(cell_type_name(type));
        Rng rng(90);
        auto layer = make_recurrent(type, I, H, 1, false, 0, rng);
        layer->sort_by_length = false;  // the recurrence's own tensors (see RecurrentOutput)
        Tensor x = random_tensor({B, T, I}, 91);
        Tensor w = random_tensor({1, B, H}, 92, false);
        auto run = [&](bool fused) {
            layer->use_fused = fused;
            RecurrentOutput out = layer->forward(x, {5, 3});
            for (Tensor& s : out.step_states) s.retain_grad();
            sum(out.final_hidden * w).backward();
            std::vector<Tensor> grads;
            for (const Tensor& s : out.step_states) grads.push_back(s.grad());
            return grads;
        };
        const std::vector<Tensor> fused = run(true), composed = run(false);
        REQUIRE(fused.size() == size_t(T));
        for (size_t t = 0; t < fused.size(); ++t) {
            CAPTURE(t);
            CHECK(max_abs_diff(fused[t], composed[t]) <= 1e-12);
        }
        // the loss reads the last state of each sequence directly: dL/dh there is w's row
        CHECK(fused[4].data()[0] == w.data()[0]);  // sequence 0 ends at t = 4
        CHECK(fused[2].data()[H] == w.data()[H]);  // sequence 1 ends at t = 2 and carries on
        // and the gradient reaches the first step, through the recurrence
        double first = 0;
        for (int64_t j = 0; j < B * H; ++j) first += std::fabs(fused[0].data()[j]);
        CHECK(first > 0);
    }
}

TEST_CASE("RNN, LSTM: a padded batch == each sequence alone (outputs and final states)") {
    for (CellType type : new_cells)
        for (bool fused : fused_variants) {
            CAPTURE(cell_type_name(type));
            CAPTURE(fused);
            Rng rng(52);
            const int64_t I = 2, H = 3;
            auto layer = make_recurrent(type, I, H, 2, true, 0, rng);
            layer->use_fused = fused;
            const std::vector<int32_t> lengths{2, 4, 1};
            Tensor x = random_tensor({3, 4, I}, 53, false);
            RecurrentOutput batch = layer->forward(x, lengths);
            for (int64_t b = 0; b < 3; ++b) {
                CAPTURE(b);
                const int64_t len = lengths[size_t(b)];
                Tensor x_b = slice(slice(x, 0, b, b + 1), 1, 0, len);
                RecurrentOutput alone = layer->forward(x_b, {int32_t(len)});
                CHECK(max_abs_diff(slice(slice(batch.outputs, 0, b, b + 1), 1, 0, len),
                                   alone.outputs) <= 1e-14);
                CHECK(max_abs_diff(slice(batch.final_hidden, 1, b, b + 1), alone.final_hidden) <=
                      1e-14);
                if (type == CellType::lstm)
                    CHECK(max_abs_diff(slice(batch.final_cell, 1, b, b + 1), alone.final_cell) <=
                          1e-14);
                else
                    CHECK(!batch.final_cell.defined());
                // zero past the sequence's length
                if (len < 4) {
                    for (real v : slice(slice(batch.outputs, 0, b, b + 1), 1, len, 4).to_vector())
                        CHECK(v == 0);
                }
            }
        }
}

TEST_CASE("recurrent layers and cells: bad inputs name the layer and the shapes") {
    Rng rng(60);
    LSTM lstm(2, 3, 1, false, 0, rng);
    RNN rnn(2, 3, 1, true, 0, rng);
    GRU gru(2, 3, 1, false, 0, rng);
    Tensor x = random_tensor({2, 4, 2}, 61, false);
    CHECK_THROWS_WITH_AS(lstm.forward(x, {4, 2}, Tensor(), Tensor::zeros({2, 2, 3})),
                         "LSTM(input 2, hidden 3, 1 layer): c0 [2,2,3] must be "
                         "[layers*directions, B, H] = [1,2,3]",
                         Error);
    CHECK_THROWS_WITH_AS(gru.forward(x, {4, 2}, Tensor(), Tensor::zeros({1, 2, 3})),
                         "GRU(input 2, hidden 3, 1 layer): c0 is given, but only an LSTM has a "
                         "cell state",
                         Error);
    CHECK_THROWS_WITH_AS(rnn.forward(x, {4, 5}),
                         "RNN(input 2, hidden 3, 1 layer, bidirectional): length 5 of sequence 1 "
                         "is not in 1..4 (inputs [2,4,2])",
                         Error);
    CHECK_THROWS_WITH_AS(rnn.weights(0, 2),
                         "RNN::weights: no layer 0 direction 2 (1 layers, 2 directions)", Error);
    CHECK_THROWS_WITH_AS(LSTM(2, 3, 0, false, 0, rng), doctest::Contains("LSTM: input_size 2"),
                         Error);
    LSTMCell cell(2, 3, rng);
    Tensor h = Tensor::zeros({2, 3});
    CHECK_THROWS_WITH_AS(cell.step(Tensor::zeros({2, 3}), {h, h}),
                         "LSTMCell(2 -> 3): x [2,3] must be [B, 2]", Error);
    CHECK_THROWS_WITH_AS(cell.step(Tensor::zeros({2, 2}), {h, Tensor()}),
                         "LSTMCell(2 -> 3): the state must have a cell state c", Error);
    CHECK_THROWS_WITH_AS(
        lstm_cell_composed(Tensor::zeros({2, 2}), h, Tensor::zeros({2, 4}), cell.weight_ih,
                           cell.weight_hh, cell.bias_ih, cell.bias_hh),
        "lstm_cell_composed: c [2,4] must be [B,H] like h [2,3]", Error);
    CHECK_THROWS_WITH_AS(
        lstm_cell_step(Tensor::zeros({2, 3, 12}), 3, h, h, cell.weight_hh, cell.bias_hh),
        doctest::Contains("lstm_cell_step: all_input_gates [2,3,12]"), Error);
    CHECK_THROWS_WITH_AS(lstm_cell(Tensor::zeros({2, 12}), h, h, cell.weight_hh, cell.bias_hh,
                                   Tensor::zeros({2}, true)),
                         doctest::Contains("step_mask must not require grad"), Error);
    CHECK_THROWS_WITH_AS(
        rnn_cell(Tensor::zeros({2, 4}), h, Tensor::zeros({3, 3}), Tensor::zeros({3})),
        doctest::Contains("rnn_cell: input_gates [2,4], h [2,3], weight_hh "
                          "[3,3], bias_hh [3]: input_gates must be [B,H] = [2,3]"),
        Error);
    CHECK_THROWS_WITH_AS(
        rnn_cell_composed(Tensor::zeros({2, 2}), h, Tensor::zeros({3, 2}), Tensor::zeros({4, 3}),
                          Tensor::zeros({3}), Tensor::zeros({3})),
        doctest::Contains("weight_hh must be [H,H] = [3,3]"), Error);
}
