// Exercises 01-05: unary backward, broadcasting, matmul, log_softmax, cross-entropy.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "apps/exercises/grader.h"
#include "seqgrad/autograd/broadcast.h"
#include "seqgrad/layers/loss.h"

namespace seqgrad::grading {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

std::vector<double> times(const std::vector<double>& v, double f) {
    std::vector<double> out(v);
    for (double& x : out) x *= f;
    return out;
}

void grade_unary(Grader& g) {
    Rng rng = g.rng(1);
    const int64_t rows = g.random_size(rng, 2, 9), cols = g.random_size(rng, 1, 13);
    struct Case {
        std::string label;
        Tensor x;
    };
    std::vector<Case> cases = {
        {fmt::format("[{},{}]", rows, cols), random_leaf(rng, {rows, cols}, -3, 3)},
        {"odd size [7]", random_leaf(rng, {7}, -2, 2)},
        {"large |x| [2,3]", Tensor::from_vector({2, 3}, {-30, -12, 0, 0.5, 12, 30}, true)},
    };
    for (const Case& c : cases) {
        GradCase t{"tanh " + c.label,
                   {c.x},
                   {"x"},
                   [&](const std::vector<Tensor>& in) { return g.t.tanh(in[0]); },
                   [](const std::vector<Tensor>& in) { return seqgrad::tanh(in[0]); }};
        Tensor y = seqgrad::tanh(c.x.detach());
        std::vector<double> wrong;  // dy (1 − y) instead of dy (1 − y²)
        // the weights the backward check uses are random; the alternative is built on them
        Rng w(99);
        Tensor weight = random_leaf(w, y.shape(), -1, 1, false);
        for (int64_t i = 0; i < y.numel(); ++i) {
            double yi = y.data()[i], wi = weight.data()[i];
            wrong.push_back(wi * (1 - yi));
        }
        CompareContext dx;
        dx.alternatives = {
            {"dx = dy (1 − y): the derivative of tanh is 1 − y² (y squared)", wrong}};
        t.grad_contexts = {dx};
        check_gradients(g, t);
    }
    for (const Case& c : cases) {
        GradCase t{"sigmoid " + c.label,
                   {c.x},
                   {"x"},
                   [&](const std::vector<Tensor>& in) { return g.t.sigmoid(in[0]); },
                   [](const std::vector<Tensor>& in) { return seqgrad::sigmoid(in[0]); }};
        t.forward_context.nan_hint = "e^(−x) overflows for large |x|; 1 / (1 + e^(−x)) is safe";
        Tensor y = seqgrad::sigmoid(c.x.detach());
        Rng w(99);
        Tensor weight = random_leaf(w, y.shape(), -1, 1, false);
        std::vector<double> wrong;  // dy y instead of dy y (1 − y)
        for (int64_t i = 0; i < y.numel(); ++i) wrong.push_back(weight.data()[i] * y.data()[i]);
        CompareContext dx;
        dx.alternatives = {{"dx = dy y: the derivative of σ is y (1 − y)", wrong}};
        t.grad_contexts = {dx};
        check_gradients(g, t);
    }
}

void grade_broadcast(Grader& g) {
    Rng rng = g.rng(2);
    const int64_t B = g.random_size(rng, 2, 5), S = g.random_size(rng, 2, 5),
                  H = g.random_size(rng, 2, 7);
    std::vector<std::pair<Shape, Shape>> shapes = {
        {{B, H}, {B, H}}, {{B, H}, {H}}, {{B, 1, H}, {S, H}}, {{4, 1}, {1, 5}}, {{}, {3, 5}}};
    for (auto [sa, sb] : shapes) {
        for (int op = 0; op < 2; ++op) {
            Tensor a = random_leaf(rng, sa), b = random_leaf(rng, sb);
            const char* name = op == 0 ? "add" : "mul";
            GradCase c{fmt::format("{} {} and {}", name, sa.str(), sb.str()),
                       {a, b},
                       {"a", "b"},
                       [&g, op](const std::vector<Tensor>& in) {
                           return op == 0 ? g.t.add(in[0], in[1]) : g.t.mul(in[0], in[1]);
                       },
                       [op](const std::vector<Tensor>& in) {
                           return op == 0 ? seqgrad::add(in[0], in[1]) : seqgrad::mul(in[0], in[1]);
                       }};
            // A stretched operand's gradient must sum over the broadcast dims; the usual slip
            // writes (=) instead of adding (+=), leaving only the last term.
            Tensor out = seqgrad::add(a.detach(), b.detach());
            Rng w(99);
            Tensor weight = random_leaf(w, out.shape(), -1, 1, false);
            std::vector<CompareContext> contexts(2);
            for (int side = 0; side < 2; ++side) {
                const Tensor& self = side == 0 ? a : b;
                const Tensor& other = side == 0 ? b : a;
                if (self.numel() == out.numel()) continue;
                Broadcast bc = Broadcast::make("check", a.shape(), b.shape());
                std::vector<double> last(size_t(self.numel()), 0.0),
                    first(size_t(self.numel()), kInf);
                bc.for_each([&](int64_t o, int64_t ia, int64_t ib) {
                    int64_t mine = side == 0 ? ia : ib, theirs = side == 0 ? ib : ia;
                    double term = weight.data()[o] * (op == 0 ? 1.0 : double(other.data()[theirs]));
                    last[size_t(mine)] = term;
                });
                contexts[size_t(side)].alternatives = {
                    {"missing reduction over a broadcast dimension: only one of the terms "
                     "reached each element (=, not +=); a stretched operand's gradient is the "
                     "SUM over the dimensions it was stretched along",
                     last}};
                (void)first;
            }
            c.grad_contexts = contexts;
            check_gradients(g, c);
        }
    }
}

void grade_matmul(Grader& g) {
    Rng rng = g.rng(3);
    const int64_t n = g.random_size(rng, 2, 7), m = g.random_size(rng, 2, 7),
                  p = g.random_size(rng, 2, 7), N = g.random_size(rng, 2, 4);
    std::vector<std::pair<Shape, Shape>> shapes = {{{n, m}, {m, p}},       {{5, 5}, {5, 5}},
                                                   {{1, 1}, {1, 1}},       {{N, n, m}, {N, m, p}},
                                                   {{2, 3, 3}, {2, 3, 3}}, {{1, m}, {m, 1}}};
    for (auto [sa, sb] : shapes) {
        GradCase c{fmt::format("{} x {}", sa.str(), sb.str()),
                   {random_leaf(rng, sa), random_leaf(rng, sb)},
                   {"A", "B"},
                   [&g](const std::vector<Tensor>& in) { return g.t.matmul(in[0], in[1]); },
                   [](const std::vector<Tensor>& in) { return seqgrad::matmul(in[0], in[1]); }};
        check_gradients(g, c);
    }
    g.check("shape error [2,3] x [4,5] throws", [&]() -> std::string {
        try {
            g.t.matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5}));
        } catch (const practice::NotImplemented&) {
            throw;
        } catch (const std::exception&) {
            return "";
        }
        return "returned a result for [2,3] x [4,5]: throw seqgrad::Error naming both shapes";
    });
}

void grade_log_softmax(Grader& g) {
    Rng rng = g.rng(4);
    const int64_t rows = g.random_size(rng, 1, 6), n = g.random_size(rng, 2, 11);
    std::vector<std::pair<std::string, Tensor>> cases = {
        {fmt::format("[{},{}]", rows, n), random_leaf(rng, {rows, n}, -3, 3)},
        {"3-D [2,3,5]", random_leaf(rng, {2, 3, 5}, -3, 3)},
        {"one column [4,1]", random_leaf(rng, {4, 1}, -3, 3)},
        {"large logits [2,3]",
         Tensor::from_vector({2, 3}, {1000, 1001, 999, -1000, -1002, -1001}, true)},
    };
    for (auto& [label, x] : cases) {
        GradCase c{label,
                   {x},
                   {"x"},
                   [&g](const std::vector<Tensor>& in) { return g.t.log_softmax(in[0]); },
                   [](const std::vector<Tensor>& in) { return seqgrad::log_softmax(in[0]); }};
        c.forward_context.nan_hint =
            "e^x overflows for large x: subtract the row max before exp (the stable form)";
        check_gradients(g, c);
    }
    // masked entries (-inf): y = -inf there, finite elsewhere
    Tensor masked = Tensor::from_vector(
        {2, 4}, {0.5, real(-kInf), 1.5, -0.25, real(-kInf), 2, real(-kInf), 1}, true);
    GradCase c{"-inf entries [2,4]",
               {masked},
               {"x"},
               [&g](const std::vector<Tensor>& in) { return g.t.log_softmax(in[0]); },
               [](const std::vector<Tensor>& in) { return seqgrad::log_softmax(in[0]); }};
    c.forward_context.nan_hint = "NaN from log(0) or −∞ − (−∞): take the max over the row first";
    c.finite_differences = false;
    check_gradients(g, c);
}

constexpr int32_t kIgnore = -100;  // the ignore_index of most cases

struct CrossEntropyCase {
    std::string label;
    int64_t rows, classes;
    std::vector<int32_t> targets;
    real smoothing;
    double scale;  // the logits are drawn from [-scale, scale]
};

// The cases, their targets drawn from `rng` ([N,V] random sizes).
std::vector<CrossEntropyCase> cross_entropy_cases(Rng& rng, int64_t N, int64_t V) {
    auto targets_for = [&](int64_t rows, int64_t classes, int every_ignored) {
        std::vector<int32_t> t;
        for (int64_t i = 0; i < rows; ++i)
            t.push_back(every_ignored && i % every_ignored == 1
                            ? kIgnore
                            : int32_t(rng.below(uint64_t(classes))));
        return t;
    };
    return {
        {fmt::format("[{},{}]", N, V), N, V, targets_for(N, V, 0), 0, 2},
        {fmt::format("[{},{}] with ignored rows", N, V), N, V, targets_for(N, V, 2), 0, 2},
        {"label smoothing 0.1 with ignored rows", 6, 7, targets_for(6, 7, 3), real(0.1), 2},
        {"ignore_index 0 (PAD) [4,5]", 4, 5, {0, 3, 0, 4}, 0, 2},
        {"large logits [3,4]", 3, 4, {0, kIgnore, 1}, 0, 500},
    };
}

// The known slips' losses: averaging over every row (ignored ones too), smoothing left out.
std::vector<std::pair<std::string, std::vector<double>>> cross_entropy_slips(
    const CrossEntropyCase& k, const Tensor& logits, int32_t ig) {
    const int64_t count = count_targets(k.targets, ig);
    std::vector<std::pair<std::string, std::vector<double>>> alternatives;
    if (count != k.rows)
        alternatives.push_back(
            {fmt::format("divided by all {} rows instead of the {} rows not ignored", k.rows,
                         count),
             times(values(seqgrad::cross_entropy(logits.detach(), k.targets, ig, Reduction::mean,
                                                 k.smoothing)),
                   double(count) / double(k.rows))});
    if (k.smoothing > 0)
        alternatives.push_back(
            {"label smoothing left out (q = onehot instead of (1 − ε) onehot + ε/V)",
             values(seqgrad::cross_entropy(logits.detach(), k.targets, ig, Reduction::mean, 0))});
    return alternatives;
}

void check_cross_entropy_case(Grader& g, Rng& rng, const CrossEntropyCase& k) {
    const int32_t ig = k.label.find("PAD") != std::string::npos ? 0 : kIgnore;
    Tensor logits = random_leaf(rng, {k.rows, k.classes}, -k.scale, k.scale);
    if (k.scale > 100)  // targets ~900 below the row max: their softmax underflows to 0
        logits = Tensor::from_vector({3, 4}, {-400, 500, 0, 10, 1, 2, 3, 4, 800, -100, 2, 1}, true);
    auto targets = k.targets;
    real ls = k.smoothing;
    GradCase c{k.label,
               {logits},
               {"logits"},
               [&g, targets, ig, ls](const std::vector<Tensor>& in) {
                   return g.t.cross_entropy(in[0], targets, ig, ls);
               },
               [targets, ig, ls](const std::vector<Tensor>& in) {
                   return seqgrad::cross_entropy(in[0], targets, ig, Reduction::mean, ls);
               }};
    c.forward_context.alternatives = cross_entropy_slips(k, logits, ig);
    c.forward_context.nan_hint =
        "NaN or inf from log(0): the softmax underflowed to 0; use log_softmax (stable)";
    check_gradients(g, c);
}

void check_every_row_ignored(Grader& g, Rng& rng) {
    g.check("every row ignored: loss 0 and zero gradient, not NaN", [&]() -> std::string {
        Tensor logits = random_leaf(rng, {3, 4});
        g.phase("forward");
        Tensor loss = g.t.cross_entropy(logits, {kIgnore, kIgnore, kIgnore}, kIgnore, 0);
        if (std::isnan(loss.item()))
            return "NaN: with every target ignored the count is 0; return 0, not 0/0";
        if (loss.item() != 0) return fmt::format("loss {}, expected 0", loss.item());
        g.phase("backward");
        if (loss.requires_grad()) loss.backward();
        for (double v : gradient(logits))
            if (v != 0 || std::isnan(v)) return fmt::format("gradient {} where 0 was expected", v);
        return "";
    });
}

void grade_cross_entropy(Grader& g) {
    Rng rng = g.rng(5);
    const int64_t N = g.random_size(rng, 3, 9), V = g.random_size(rng, 3, 11);
    for (const CrossEntropyCase& k : cross_entropy_cases(rng, N, V))
        check_cross_entropy_case(g, rng, k);
    check_every_row_ignored(g, rng);
}

}  // namespace

void add_op_exercises(std::vector<Exercise>& out) {
    out.push_back(
        {1, "01_tanh_sigmoid", "the backward of a unary op: tanh and sigmoid", "15-30",
         "autograd/ops_elementwise.cpp: tanh() and sigmoid() (the `unary` helper above "
         "them records the backward); autograd/tensor.h: make_result, record, parent_grad",
         grade_unary});
    out.push_back({2, "02_broadcast_add_mul",
                   "broadcasting add and mul: the backward sums over the broadcast dims", "20-40",
                   "autograd/ops_elementwise.cpp: add(), mul() and the `binary` helper (its "
                   "broadcast branch); autograd/broadcast.h: Broadcast::for_each",
                   grade_broadcast});
    out.push_back({3, "03_matmul", "matmul's backward: dA = dC Bᵀ, dB = Aᵀ dC, 2-D and batched",
                   "20-40",
                   "autograd/ops_matmul.cpp: matmul() (the backward is two more products with "
                   "transpose flags)",
                   grade_matmul});
    out.push_back(
        {4, "04_log_softmax", "the stable log_softmax and its backward", "20-30",
         "autograd/ops_reduce.cpp: log_softmax() (and row_max / sum_exp_shifted above it)",
         grade_log_softmax});
    out.push_back(
        {5, "05_cross_entropy", "cross-entropy with ignore_index and label smoothing", "30-45",
         "layers/loss.cpp: cross_entropy_composed() (from ops); autograd/ops_fused_loss.cpp: "
         "fused_cross_entropy() (one op with its backward); the maths: autograd/fused_loss.h",
         grade_cross_entropy});
}

}  // namespace seqgrad::grading
