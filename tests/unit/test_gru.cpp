// The GRU cell (fused op and composed twin), GRUCell and GRU over padded batches: values by
// hand and against PyTorch, double-precision gradchecks, fused == composed to 1e-12, a padded
// batch == each sequence alone, PyTorch's parameter names, and errors.
#include <cmath>

#include "recurrent_util.h"
#include "seqgrad/autograd/fused_gru.h"
#include "seqgrad/layers/gru.h"

using namespace seqgrad;
using seqgrad::testing::expect_gradcheck;
using seqgrad::testing::fill_parameters;
using seqgrad::testing::flat_result;
using seqgrad::testing::mask_of;
using seqgrad::testing::max_abs_diff;
using seqgrad::testing::random_tensor;
using seqgrad::testing::with_parameters;

// ---- the cell ----------------------------------------------------------------------------

TEST_CASE("GRU cell: a 1-unit step computed by hand") {
    // x = 0.5, h = -0.3, W_ih = [0.1, 0.2, 0.3], W_hh = [0.4, 0.5, 0.6],
    // b_ih = [0.01, 0.02, 0.03], b_hh = [0.04, 0.05, 0.06]:
    //   r  = σ(0.1·0.5 + 0.01 + 0.4·(−0.3) + 0.04) = σ(−0.02)           = 0.4950001666600003
    //   z  = σ(0.2·0.5 + 0.02 + 0.5·(−0.3) + 0.05) = σ(0.02)            = 0.5049998333399998
    //   n  = tanh(0.3·0.5 + 0.03 + r (0.6·(−0.3) + 0.06)) = tanh(0.18 − 0.12 r)
    //                                                                   = 0.12001867864694495
    //   h' = (1 − z) n + z (−0.3)                                       = −0.09209068406944916
    Tensor x = Tensor::from_vector({1, 1}, {0.5});
    Tensor h = Tensor::from_vector({1, 1}, {-0.3});
    Tensor w_ih = Tensor::from_vector({3, 1}, {0.1, 0.2, 0.3});
    Tensor w_hh = Tensor::from_vector({3, 1}, {0.4, 0.5, 0.6});
    Tensor b_ih = Tensor::from_vector({3}, {0.01, 0.02, 0.03});
    Tensor b_hh = Tensor::from_vector({3}, {0.04, 0.05, 0.06});
    const double expected = -0.09209068406944916;
    CHECK(gru_cell(linear(x, w_ih, b_ih), h, w_hh, b_hh).item() ==
          doctest::Approx(expected).epsilon(1e-14));
    CHECK(gru_cell_composed(x, h, w_ih, w_hh, b_ih, b_hh).item() ==
          doctest::Approx(expected).epsilon(1e-14));
    // a masked step keeps h exactly
    CHECK(gru_cell(linear(x, w_ih, b_ih), h, w_hh, b_hh, mask_of({0})).item() == -0.3);
}

TEST_CASE("gru_cell (fused): gradcheck of all four inputs, with and without a step mask") {
    const int64_t B = 3, H = 4;
    Tensor gates = random_tensor({B, 3 * H}, 1, true, -2, 2);
    Tensor h = random_tensor({B, H}, 2);
    Tensor w_hh = random_tensor({3 * H, H}, 3);
    Tensor b_hh = random_tensor({3 * H}, 4);
    auto r = expect_gradcheck([](auto& in) { return gru_cell(in[0], in[1], in[2], in[3]); },
                              {gates, h, w_hh, b_hh});
    CHECK(r.inputs_checked == 4);
    for (const Tensor& mask : {mask_of({1, 0, 1}), Tensor::from_vector({B, 1}, {0, 1, 0}),
                               mask_of({1, 1, 0}), mask_of({0, 0, 0}), mask_of({0.25, 1, 0})}) {
        CAPTURE(mask.shape().str());
        expect_gradcheck([&](auto& in) { return gru_cell(in[0], in[1], in[2], in[3], mask); },
                         {gates, h, w_hh, b_hh});
    }
}

TEST_CASE("gru_cell_step reads step t of the B,T,3H gates and sends the gradient back there") {
    const int64_t B = 2, T = 3, H = 3;
    Tensor all_gates = random_tensor({B, T, 3 * H}, 5, true, -2, 2);
    Tensor h = random_tensor({B, H}, 6);
    Tensor w_hh = random_tensor({3 * H, H}, 7);
    Tensor b_hh = random_tensor({3 * H}, 8);
    for (int64_t t = 0; t < T; ++t) {
        CAPTURE(t);
        Tensor gates_t = reshape(slice(all_gates, 1, t, t + 1), {B, 3 * H});
        CHECK(max_abs_diff(gru_cell_step(all_gates, t, h, w_hh, b_hh),
                           gru_cell(gates_t, h, w_hh, b_hh)) == 0);
        expect_gradcheck(
            [t](auto& in) {
                return gru_cell_step(in[0], t, in[1], in[2], in[3], mask_of({1, 0}));
            },
            {all_gates, h, w_hh, b_hh});
    }
    // gradient only in the rows of step 1
    all_gates.zero_grad();
    sum(gru_cell_step(all_gates, 1, h, w_hh, b_hh)).backward();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
            for (int64_t j = 0; j < 3 * H; ++j) {
                real g = all_gates.grad_data()[(b * T + t) * 3 * H + j];
                if (t != 1) CHECK(g == 0);
            }
}

TEST_CASE("gru_cell fused == composed in value and every gradient (1e-12), with and without mask") {
    const int64_t B = 4, I = 5, H = 3;
    for (bool masked : {false, true}) {
        CAPTURE(masked);
        Tensor mask = masked ? mask_of({1, 0, 0, 1}) : Tensor();
        std::vector<Tensor> leaves{random_tensor({B, I}, 10),     random_tensor({B, H}, 11),
                                   random_tensor({3 * H, I}, 12), random_tensor({3 * H, H}, 13),
                                   random_tensor({3 * H}, 14),    random_tensor({3 * H}, 15)};
        Tensor upstream = random_tensor({B, H}, 16, false);
        auto run = [&](bool fused) {
            for (Tensor& t : leaves) t.zero_grad();
            const Tensor &x = leaves[0], &h = leaves[1], &w_ih = leaves[2], &w_hh = leaves[3],
                         &b_ih = leaves[4], &b_hh = leaves[5];
            Tensor out = fused ? gru_cell(linear(x, w_ih, b_ih), h, w_hh, b_hh, mask)
                               : gru_cell_composed(x, h, w_ih, w_hh, b_ih, b_hh, mask);
            out.backward(upstream);
            std::vector<Tensor> result{out.detach()};
            for (const Tensor& t : leaves) result.push_back(t.grad());
            return result;
        };
        std::vector<Tensor> fused = run(true), composed = run(false);
        const char* names[] = {"h'", "dx", "dh", "dW_ih", "dW_hh", "db_ih", "db_hh"};
        for (size_t i = 0; i < fused.size(); ++i) {
            CAPTURE(names[i]);
            CHECK(max_abs_diff(fused[i], composed[i]) <= 1e-12);
        }
        if (masked)  // rows 1 and 2 are finished: h' = h and the gradient passes straight to h
            for (int64_t j = 0; j < H; ++j) {
                CHECK(fused[0].data()[1 * H + j] == leaves[1].data()[1 * H + j]);
                CHECK(fused[2].data()[2 * H + j] == upstream.data()[2 * H + j]);
            }
    }
}

TEST_CASE("gru_cell_composed: gradcheck with mask") {
    Tensor x = random_tensor({2, 3}, 20), h = random_tensor({2, 2}, 21);
    Tensor w_ih = random_tensor({6, 3}, 22), w_hh = random_tensor({6, 2}, 23);
    Tensor b_ih = random_tensor({6}, 24), b_hh = random_tensor({6}, 25);
    expect_gradcheck(
        [](auto& in) {
            return gru_cell_composed(in[0], in[1], in[2], in[3], in[4], in[5], mask_of({0, 1}));
        },
        {x, h, w_ih, w_hh, b_ih, b_hh});
}

TEST_CASE("gru_cell: bad shapes name the op and every shape") {
    Tensor h = Tensor::zeros({2, 4}), w_hh = Tensor::zeros({12, 4}), b_hh = Tensor::zeros({12});
    CHECK_THROWS_WITH_AS(
        gru_cell(Tensor::zeros({2, 9}), h, w_hh, b_hh),
        "gru_cell: input_gates [2,9], h [2,4], weight_hh [12,4], bias_hh [12]: input_gates "
        "must be [B,3H] = [2,12]",
        Error);
    CHECK_THROWS_WITH_AS(gru_cell(Tensor::zeros({2, 12}), h, Tensor::zeros({12, 3}), b_hh),
                         doctest::Contains("weight_hh must be [3H,H] = [12,4]"), Error);
    CHECK_THROWS_WITH_AS(gru_cell(Tensor::zeros({2, 12}), h, w_hh, Tensor::zeros({4})),
                         doctest::Contains("bias_hh must be [3H] = [12]"), Error);
    CHECK_THROWS_WITH_AS(gru_cell(Tensor::zeros({2, 12}), h, w_hh, b_hh, Tensor::zeros({3})),
                         doctest::Contains("step_mask [3] must be [B] or [B,1] with B = 2"), Error);
    CHECK_THROWS_WITH_AS(gru_cell(Tensor::zeros({2, 12}), h, w_hh, b_hh, Tensor::zeros({2}, true)),
                         doctest::Contains("step_mask must not require grad"), Error);
    CHECK_THROWS_WITH_AS(gru_cell_step(Tensor::zeros({2, 3, 12}), 3, h, w_hh, b_hh),
                         doctest::Contains("gru_cell_step: all_input_gates [2,3,12]"), Error);
    CHECK_THROWS_WITH_AS(
        gru_cell_composed(Tensor::zeros({3, 5}), h, Tensor::zeros({12, 5}), w_hh, b_hh, b_hh),
        doctest::Contains("gru_cell_composed: x [3,5] and h [2,4]"), Error);
}

TEST_CASE("GRUCell: PyTorch's parameter names and shapes, init U(-1/sqrt(H), 1/sqrt(H))") {
    Rng rng(30);
    GRUCell cell(5, 4, rng);
    auto named = cell.named_parameters();
    REQUIRE(named.size() == 4);
    const char* names[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    const Shape shapes[] = {{12, 5}, {12, 4}, {12}, {12}};
    for (size_t i = 0; i < 4; ++i) {
        CHECK(named[i].first == names[i]);
        CHECK(named[i].second.shape() == shapes[i]);
        for (real v : named[i].second.to_vector()) CHECK(std::fabs(v) <= 0.5);  // 1/sqrt(4)
    }
}

TEST_CASE("GRUCell: gradcheck (fused and composed) and the two agree") {
    Rng rng(31);
    GRUCell cell(3, 4, rng);
    Tensor x = random_tensor({2, 3}, 32), h = random_tensor({2, 4}, 33);
    auto inputs = with_parameters({x, h}, cell);
    auto r = expect_gradcheck([&](auto& in) { return cell.forward(in[0], in[1]); }, inputs);
    CHECK(r.inputs_checked == 6);
    expect_gradcheck(
        [&](auto& in) {
            return cell.forward_composed(in[0], in[1], mask_of({0, 1}));
        },
        inputs);
    CHECK(max_abs_diff(cell.forward(x, h, mask_of({1, 0})),
                       cell.forward_composed(x, h, mask_of({1, 0}))) <= 1e-14);
    CHECK_THROWS_WITH_AS(cell.forward(Tensor::zeros({2, 4}), h),
                         "GRUCell(3 -> 4): x [2,4] must be [B, 3]", Error);
}

// ---- GRU ---------------------------------------------------------------------------------

TEST_CASE("GRU: PyTorch's parameter names, order and shapes (2 layers, bidirectional)") {
    Rng rng(40);
    const int64_t I = 5, H = 3;
    GRU gru(I, H, 2, true, 0, rng);
    std::vector<std::pair<std::string, Shape>> expected;
    for (int layer = 0; layer < 2; ++layer)
        for (std::string suffix : {"", "_reverse"}) {
            const int64_t in = layer == 0 ? I : 2 * H;
            const std::string s = "_l" + std::to_string(layer) + suffix;
            expected.push_back({"weight_ih" + s, {3 * H, in}});
            expected.push_back({"weight_hh" + s, {3 * H, H}});
            expected.push_back({"bias_ih" + s, {3 * H}});
            expected.push_back({"bias_hh" + s, {3 * H}});
        }
    auto named = gru.named_parameters();
    REQUIRE(named.size() == expected.size());
    for (size_t i = 0; i < named.size(); ++i) {
        CHECK(named[i].first == expected[i].first);
        CHECK(named[i].second.shape() == expected[i].second);
    }
    CHECK(named[5].first == "weight_hh_l0_reverse");
    CHECK(named[5].second.shape() == Shape{9, 3});
    CHECK(gru.weights(1, 1).weight_ih.data() == named[12].second.data());
    const double bound = 1 / std::sqrt(3.0);
    for (auto& [name, p] : named)
        for (real v : p.to_vector()) CHECK(std::fabs(v) <= bound);
}

TEST_CASE("GRU: matches PyTorch nn.GRU (2 layers, bidirectional, packed lengths {3,1}, h0)") {
    // Reference: torch 1.13, float64, nn.GRU(2, 2, num_layers=2, bidirectional=True,
    // batch_first=True), every parameter element k (in named order) = 0.5 sin(0.7k + 0.3),
    // x[k] = cos(1.3k), h0[k] = 0.1 sin(k), run through pack_padded_sequence(lengths [3,1]) and
    // pad_packed_sequence(total_length=3); loss = Σ out ⊙ cos(0.3k) + Σ h_n ⊙ sin(0.2k).
    const std::vector<double> torch_out = {0.175311306537542,
                                           -0.104079975740031,
                                           -0.14740642994988,
                                           -0.640132938295345,
                                           0.189640975985621,
                                           -0.117424488303929,
                                           -0.103085449459397,
                                           -0.54690268737482,
                                           0.213651477430588,
                                           -0.118710804965896,
                                           -0.0265335212477167,
                                           -0.418483951355959,
                                           0.0313451832207519,
                                           -0.0943939212260676,
                                           -0.12022698986698,
                                           -0.159179289100023,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0};
    const std::vector<double> torch_h_n = {
        0.322162571553417, 0.625880230000853,  0.11560239105098,   0.00401965957591477,
        0.25479538003015,  0.588465603947348,  0.0531500972396304, 0.0328481734873894,
        0.213651477430588, -0.118710804965896, 0.0313451832207519, -0.0943939212260676,
        -0.14740642994988, -0.640132938295345, -0.12022698986698,  -0.159179289100023};
    const std::vector<double> torch_grad_weight_hh_l0_reverse = {
        -0.00477745272675366, -0.0115858851639634,  -0.00358912383406925, -0.00653015105752491,
        0.00155234764919081,  -0.00957006414833039, -0.0076898879157488,  0.0157107875610848,
        0.0745610155705813,   0.116271872312734,    0.0232918159376986,   0.0418692760305258};

    Rng rng(41);
    GRU gru(2, 2, 2, true, 0, rng);
    fill_parameters(gru);
    std::vector<real> x(2 * 3 * 2), h0(4 * 2 * 2);
    for (size_t k = 0; k < x.size(); ++k) x[k] = real(std::cos(1.3 * double(k)));
    for (size_t k = 0; k < h0.size(); ++k) h0[k] = real(0.1 * std::sin(double(k)));
    for (bool fused : {true, false}) {
        CAPTURE(fused);
        gru.use_fused = fused;
        gru.zero_grad();
        GRUOutput out = gru.forward(Tensor::from_vector({2, 3, 2}, x), {3, 1},
                                    Tensor::from_vector({4, 2, 2}, h0));
        REQUIRE(out.outputs.shape() == Shape{2, 3, 4});
        REQUIRE(out.final_hidden.shape() == Shape{4, 2, 2});
        for (size_t i = 0; i < torch_out.size(); ++i)
            CHECK(out.outputs.data()[i] == doctest::Approx(torch_out[i]).epsilon(1e-12));
        for (size_t i = 0; i < torch_h_n.size(); ++i)
            CHECK(out.final_hidden.data()[i] == doctest::Approx(torch_h_n[i]).epsilon(1e-12));

        std::vector<real> w_out(24), w_h(16);
        for (size_t k = 0; k < w_out.size(); ++k) w_out[k] = real(std::cos(0.3 * double(k)));
        for (size_t k = 0; k < w_h.size(); ++k) w_h[k] = real(std::sin(0.2 * double(k)));
        Tensor loss = sum(out.outputs * Tensor::from_vector({2, 3, 4}, w_out)) +
                      sum(out.final_hidden * Tensor::from_vector({4, 2, 2}, w_h));
        loss.backward();
        const Tensor& w = gru.weights(0, 1).weight_hh;
        for (size_t i = 0; i < torch_grad_weight_hh_l0_reverse.size(); ++i)
            CHECK(w.grad_data()[i] ==
                  doctest::Approx(torch_grad_weight_hh_l0_reverse[i]).epsilon(1e-10));
    }
}

TEST_CASE("GRU: gradcheck, 1 layer, full-length batch") {
    Rng rng(42);
    GRU gru(2, 3, 1, false, 0, rng);
    Tensor x = random_tensor({2, 4, 2}, 43);
    auto inputs = with_parameters({x}, gru);
    auto r = expect_gradcheck(
        [&](auto& in) {
            return flat_result(gru.forward(in[0], {4, 4}));
        },
        inputs);
    CHECK(r.inputs_checked == 5);
}

TEST_CASE("GRU: gradcheck, padded batch {3,1,2}, 1 and 2 layers, uni- and bidirectional, h0") {
    const std::vector<int32_t> lengths{3, 1, 2};
    for (int layers : {1, 2})
        for (bool bidirectional : {false, true}) {
            CAPTURE(layers);
            CAPTURE(bidirectional);
            Rng rng(44);
            GRU gru(2, 3, layers, bidirectional, 0, rng);
            const int64_t D = bidirectional ? 2 : 1;
            Tensor x = random_tensor({3, 3, 2}, 45);
            Tensor h0 = random_tensor({layers * D, 3, 3}, 46);
            expect_gradcheck(
                [&](auto& in) { return flat_result(gru.forward(in[0], lengths, in[1])); },
                with_parameters({x, h0}, gru));
        }
}

TEST_CASE("GRU: fused == composed (values and every gradient to 1e-12)") {
    Rng rng(47);
    GRU gru(3, 4, 2, true, 0, rng);
    Tensor x = random_tensor({3, 4, 3}, 48), h0 = random_tensor({4, 3, 4}, 49);
    const std::vector<int32_t> lengths{4, 1, 3};
    Tensor w_out = random_tensor({3, 4, 8}, 50, false), w_h = random_tensor({4, 3, 4}, 51, false);
    std::vector<Tensor> leaves = with_parameters({x, h0}, gru);
    auto run = [&](bool fused) {
        gru.use_fused = fused;
        for (Tensor& t : leaves) t.zero_grad();
        GRUOutput out = gru.forward(x, lengths, h0);
        (sum(out.outputs * w_out) + sum(out.final_hidden * w_h)).backward();
        std::vector<Tensor> result{out.outputs.detach(), out.final_hidden.detach()};
        for (const Tensor& t : leaves) result.push_back(t.grad());
        return result;
    };
    std::vector<Tensor> fused = run(true), composed = run(false);
    for (size_t i = 0; i < fused.size(); ++i) {
        CAPTURE(i);
        CHECK(max_abs_diff(fused[i], composed[i]) <= 1e-12);
    }
}

TEST_CASE("GRU: a padded batch == each sequence alone (outputs, final state, all gradients)") {
    // 2 layers, bidirectional, lengths {3,1,2} and {3,2,1} (sorted: the cell skips the finished
    // tail of the batch): the loss weights every output position and the final state; run as
    // one padded batch, then each sequence on its own (its own length, no padding) with the
    // same weights, summing the gradients.
    const int64_t B = 3, T = 3, I = 2, H = 3, L = 2, D = 2;
    for (const std::vector<int32_t>& lengths :
         {std::vector<int32_t>{3, 1, 2}, std::vector<int32_t>{3, 2, 1}}) {
        CAPTURE(lengths[1]);
        Rng rng(52);
        GRU gru(I, H, L, true, 0, rng);
        Tensor x = random_tensor({B, T, I}, 53);
        Tensor w_out = random_tensor({B, T, D * H}, 54, false);
        Tensor w_h = random_tensor({L * D, B, H}, 55, false);

        gru.zero_grad();
        x.zero_grad();
        GRUOutput batch = gru.forward(x, lengths);
        (sum(batch.outputs * w_out) + sum(batch.final_hidden * w_h)).backward();
        std::vector<Tensor> batch_grads{x.grad()};
        for (const Tensor& p : gru.parameters()) batch_grads.push_back(p.grad());

        gru.zero_grad();
        for (int64_t b = 0; b < B; ++b) {
            CAPTURE(b);
            const int64_t len = lengths[b];
            Tensor x_b = slice(slice(x.detach(), 0, b, b + 1), 1, 0, len).detach();
            x_b.set_requires_grad();
            GRUOutput alone = gru.forward(x_b, {int32_t(len)});
            Tensor w_out_b = slice(slice(w_out, 0, b, b + 1), 1, 0, len);
            Tensor w_h_b = slice(w_h, 1, b, b + 1);
            (sum(alone.outputs * w_out_b) + sum(alone.final_hidden * w_h_b)).backward();
            // outputs at valid positions, zeros past the length, the same final state
            for (int64_t t = 0; t < T; ++t)
                for (int64_t j = 0; j < D * H; ++j) {
                    real got = batch.outputs.data()[(b * T + t) * D * H + j];
                    if (t < len)
                        CHECK(std::fabs(got - alone.outputs.data()[t * D * H + j]) <= 1e-14);
                    else
                        CHECK(got == 0);
                }
            for (int64_t k = 0; k < L * D; ++k)
                for (int64_t j = 0; j < H; ++j)
                    CHECK(std::fabs(batch.final_hidden.data()[(k * B + b) * H + j] -
                                    alone.final_hidden.data()[k * H + j]) <= 1e-14);
            // input gradient of this sequence: equal at valid positions, zero at padded ones
            for (int64_t t = 0; t < T; ++t)
                for (int64_t i = 0; i < I; ++i) {
                    real got = batch_grads[0].data()[(b * T + t) * I + i];
                    if (t < len)
                        CHECK(std::fabs(got - x_b.grad_data()[t * I + i]) <= 1e-12);
                    else
                        CHECK(got == 0);
                }
        }
        auto params = gru.parameters();
        for (size_t i = 0; i < params.size(); ++i) {
            CAPTURE(gru.named_parameters()[i].first);
            CHECK(max_abs_diff(batch_grads[i + 1], params[i].grad()) <= 1e-12);
        }
    }
}

TEST_CASE("GRU: final state is the state at each sequence's own last token") {
    Rng rng(56);
    const int64_t H = 3;
    GRU gru(2, H, 1, true, 0, rng);
    const std::vector<int32_t> lengths{2, 4, 1};
    GRUOutput out = gru.forward(random_tensor({3, 4, 2}, 57), lengths);
    for (int64_t b = 0; b < 3; ++b)
        for (int64_t j = 0; j < H; ++j) {
            // forward direction: output at t = len-1;  reverse direction: output at t = 0
            CHECK(out.final_hidden.data()[(0 * 3 + b) * H + j] ==
                  out.outputs.data()[(b * 4 + lengths[b] - 1) * 2 * H + j]);
            CHECK(out.final_hidden.data()[(1 * 3 + b) * H + j] ==
                  out.outputs.data()[(b * 4 + 0) * 2 * H + H + j]);
        }
    CHECK(out.step_states.size() == 2 * 4);
    // the lengths are not sorted: the rows ran sorted, the step states come back in row order
    gru.use_fused = false;
    GRUOutput composed = gru.forward(random_tensor({3, 4, 2}, 57), lengths);
    for (size_t k = 0; k < out.step_states.size(); ++k)
        CHECK(max_abs_diff(out.step_states[k], composed.step_states[k]) < 1e-14);
}

TEST_CASE("GRU: padded positions do not matter, steps where every sequence ended are skipped") {
    Rng rng(58);
    GRU gru(2, 3, 2, true, 0, rng);
    Tensor x = random_tensor({2, 4, 2}, 59, false);
    GRUOutput a = gru.forward(x, {2, 1});
    // change every padded position: nothing changes
    Tensor y = x.detach();
    for (int64_t t : {2, 3}) y.data()[(0 * 4 + t) * 2] = 7;
    for (int64_t t : {1, 2, 3}) y.data()[(1 * 4 + t) * 2 + 1] = -5;
    GRUOutput b = gru.forward(y, {2, 1});
    CHECK(max_abs_diff(a.outputs, b.outputs) == 0);
    CHECK(max_abs_diff(a.final_hidden, b.final_hidden) == 0);
    // the same batch cut to T = 2 (its longest length) gives the same numbers
    GRUOutput c = gru.forward(slice(x, 1, 0, 2), {2, 1});
    CHECK(max_abs_diff(slice(a.outputs, 1, 0, 2), c.outputs) == 0);
    CHECK(max_abs_diff(a.final_hidden, c.final_hidden) == 0);
}

TEST_CASE("GRU: dropout between layers only in training mode") {
    Rng rng(60);
    GRU gru(2, 3, 2, false, 0.5, rng);
    Tensor x = random_tensor({2, 3, 2}, 61, false);
    gru.eval();
    Tensor e1 = gru.forward(x, {3, 2}).outputs, e2 = gru.forward(x, {3, 2}).outputs;
    CHECK(max_abs_diff(e1, e2) == 0);
    gru.train();
    Tensor t1 = gru.forward(x, {3, 2}).outputs;
    CHECK(max_abs_diff(e1, t1) > 0);
    // a 1-layer GRU has no layer to drop between
    GRU single(2, 3, 1, false, 0.5, rng);
    CHECK(max_abs_diff(single.forward(x, {3, 2}).outputs, single.forward(x, {3, 2}).outputs) == 0);
}

TEST_CASE("GRU: bad inputs name the layer and the shapes") {
    Rng rng(62);
    GRU gru(2, 3, 2, true, 0, rng);
    CHECK_THROWS_WITH_AS(gru.forward(Tensor::zeros({2, 4, 5}), {4, 4}),
                         "GRU(input 2, hidden 3, 2 layers, bidirectional): inputs [2,4,5] must "
                         "be [B, T, 2] (batch first, T >= 1)",
                         Error);
    CHECK_THROWS_WITH_AS(gru.forward(Tensor::zeros({2, 4, 2}), {4}),
                         doctest::Contains("1 lengths for inputs [2,4,2] (batch of 2)"), Error);
    CHECK_THROWS_WITH_AS(gru.forward(Tensor::zeros({2, 4, 2}), {4, 0}),
                         doctest::Contains("length 0 of sequence 1 is not in 1..4"), Error);
    CHECK_THROWS_WITH_AS(gru.forward(Tensor::zeros({2, 4, 2}), {5, 1}),
                         doctest::Contains("length 5 of sequence 0 is not in 1..4"), Error);
    CHECK_THROWS_WITH_AS(
        gru.forward(Tensor::zeros({2, 4, 2}), {4, 1}, Tensor::zeros({2, 2, 3})),
        doctest::Contains("h0 [2,2,3] must be [layers*directions, B, H] = [4,2,3]"), Error);
    CHECK_THROWS_AS(GRU(2, 3, 0, false, 0, rng), Error);
    CHECK_THROWS_AS(GRU(2, 3, 1, false, 1.0, rng), Error);
    CHECK_THROWS_AS(gru.weights(2, 0), Error);
}

TEST_CASE("gather_step_states: gradcheck and layout") {
    const std::vector<int32_t> lengths{2, 1};
    std::vector<Tensor> states;
    for (int i = 0; i < 4; ++i) states.push_back(random_tensor({2, 3}, 70 + i));  // 2 dirs x T=2
    Tensor out = gather_step_states(states, 2, lengths);
    CHECK(out.shape() == Shape{2, 2, 6});
    CHECK(out.data()[(1 * 2 + 0) * 6 + 3 + 1] == states[2].data()[1 * 3 + 1]);  // b=1,t=0,dir 1
    CHECK(out.data()[(1 * 2 + 1) * 6 + 2] == 0);                                // b=1,t=1: pad
    expect_gradcheck([&](auto& in) { return gather_step_states(in, 2, lengths); }, states);
    CHECK_THROWS_AS(gather_step_states(states, 3, lengths), Error);
    CHECK_THROWS_AS(gather_step_states(states, 2, {3, 1}), Error);
}
