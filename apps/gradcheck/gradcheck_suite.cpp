// The gradient-check suite: see apps/gradcheck/gradcheck_suite.h. How an entry is built:
// apps/gradcheck/gradcheck_registry.h; the recurrent cells' and layers' entries:
// apps/gradcheck/gradcheck_recurrent.cpp; whole models: apps/gradcheck/gradcheck_models.cpp.
#include "apps/gradcheck/gradcheck_suite.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "apps/gradcheck/gradcheck_registry.h"
#include "seqgrad/autograd/fused_attention.h"
#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/loss.h"

namespace seqgrad {
namespace {

using gradcheck_suite::add_models;
using gradcheck_suite::add_recurrent_layers;
using gradcheck_suite::add_recurrent_ops;
using gradcheck_suite::add_transformer;
using gradcheck_suite::Inputs;
using gradcheck_suite::mask_tensor;
using gradcheck_suite::random;
using gradcheck_suite::random_away_from_zero;
using gradcheck_suite::Registry;
using gradcheck_suite::scale_parameters;
using gradcheck_suite::with_parameters;

// ---- ops -------------------------------------------------------------------------------------

void add_binary_ops(Registry& r) {
    // Binary ops, with b broadcast (NumPy rules) in three ways: a bias row [4], a column [2,3,1]
    // and a middle [3,1]. The divisor stays in [0.5, 2], far from 0.
    struct Binary {
        const char* name;
        Tensor (*fn)(const Tensor&, const Tensor&);
    };
    const Binary binaries[] = {{"add", add}, {"sub", sub}, {"mul", mul}, {"div", div}};
    const std::pair<const char*, Shape> operands[] = {
        {"same shape", Shape{2, 3, 4}},
        {"broadcast [4]", Shape{4}},
        {"broadcast [2,3,1]", Shape{2, 3, 1}},
        {"broadcast [3,1]", Shape{3, 1}},
    };
    for (const Binary& op : binaries)
        for (const auto& [label, shape_b] : operands) {
            auto fn = op.fn;
            Shape sb = shape_b;
            r.add(
                "op", std::string(op.name) + " [2,3,4], " + label,
                [fn](const Inputs& x) { return fn(x[0], x[1]); },
                [sb] {
                    return Inputs{random({2, 3, 4}, 1), random(sb, 2, 0.5, 2)};
                });
        }
    r.add(
        "op", "div with the broadcast operand as numerator [4] / [2,3,4]",
        [](const Inputs& x) { return div(x[1], x[0]); },
        [] {
            return Inputs{random({2, 3, 4}, 3, 0.5, 2), random({4}, 4)};
        });
    r.add(
        "op", "scalar ops: (x + 0.7) * -1.3, neg, 2 - x",
        [](const Inputs& x) {
            return concat({mul(add(x[0], 0.7), -1.3), neg(x[0]), real(2) - x[0]}, 0);
        },
        [] {
            return Inputs{random({3, 4}, 5)};
        });
}

void add_unary_ops(Registry& r) {
    // Unary ops. relu and clamp get inputs at least 0.05 away from their kinks.
    r.add_unary_ops({
        {"tanh", [](const Tensor& x) { return tanh(x); }, {3, 5}, 6, -2, 2},
        {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, {3, 5}, 7, -3, 3},
        {"relu", [](const Tensor& x) { return relu(x); }, {3, 5}, 8, 0.05, 1, true},
        {"exp", [](const Tensor& x) { return exp(x); }, {3, 5}, 9, -2, 2},
        {"log", [](const Tensor& x) { return log(x); }, {3, 5}, 10, 0.2, 3},
    });
    r.add(
        "op", "clamp(x, -0.5, 0.5)", [](const Inputs& x) { return clamp(x[0], -0.5, 0.5); },
        [] {
            // |x| in [0.05, 0.45] or [0.55, 0.95]: never within 0.05 of a bound
            Tensor x = random_away_from_zero({4, 5}, 11, 0.05, 0.45);
            for (int64_t i = 0; i < x.numel(); i += 2)
                x.data()[i] += x.data()[i] > 0 ? real(0.5) : real(-0.5);
            return Inputs{x};
        });
}

void add_elementwise_ops(Registry& r) {
    add_binary_ops(r);
    add_unary_ops(r);
}

void add_matmul_ops(Registry& r) {
    // 2-D: op(A) [3,4] x op(B) [4,5], with A, B stored transposed when their flag is set.
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            Shape sa = ta ? Shape{4, 3} : Shape{3, 4}, sb = tb ? Shape{5, 4} : Shape{4, 5};
            r.add(
                "op",
                fmt::format("matmul 2-D{}{}", ta ? " transpose_a" : "", tb ? " transpose_b" : ""),
                [ta, tb](const Inputs& x) { return matmul(x[0], x[1], ta, tb); },
                [sa, sb] {
                    return Inputs{random(sa, 12), random(sb, 13)};
                });
        }
    // Batched: [2,3,4] x [2,4,5].
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            Shape sa = ta ? Shape{2, 4, 3} : Shape{2, 3, 4};
            Shape sb = tb ? Shape{2, 5, 4} : Shape{2, 4, 5};
            r.add(
                "op",
                fmt::format("matmul batched{}{}", ta ? " transpose_a" : "",
                            tb ? " transpose_b" : ""),
                [ta, tb](const Inputs& x) { return matmul(x[0], x[1], ta, tb); },
                [sa, sb] {
                    return Inputs{random(sa, 14), random(sb, 15)};
                });
        }
    // 3-D x 2-D (one gemm over B*n rows): [2,3,4] x [4,5] and x [5,4]ᵀ.
    for (bool tb : {false, true}) {
        Shape sb = tb ? Shape{5, 4} : Shape{4, 5};
        r.add(
            "op", fmt::format("matmul [B,n,m] x [m,p]{}", tb ? " transpose_b" : ""),
            [tb](const Inputs& x) { return matmul(x[0], x[1], false, tb); },
            [sb] {
                return Inputs{random({2, 3, 4}, 16), random(sb, 17)};
            });
    }
    r.add(
        "op", "linear 2-D with bias", [](const Inputs& x) { return linear(x[0], x[1], x[2]); },
        [] {
            return Inputs{random({3, 4}, 18), random({5, 4}, 19), random({5}, 20)};
        });
    r.add(
        "op", "linear 3-D without bias", [](const Inputs& x) { return linear(x[0], x[1]); },
        [] {
            return Inputs{random({2, 3, 4}, 21), random({5, 4}, 22)};
        });
}

void add_reduce_ops(Registry& r) {
    r.add(
        "op", "sum and mean over all elements",
        [](const Inputs& x) {
            return stack({sum(x[0]), mean(x[0])}, 0);
        },
        [] {
            return Inputs{random({2, 3, 4}, 23)};
        });
    r.add(
        "op", "sum and mean along a dim (keepdim and not)",
        [](const Inputs& x) {
            return concat({reshape(sum(x[0], 1, true), {-1}), reshape(mean(x[0], 0), {-1}),
                           reshape(sum(x[0], 2), {-1})},
                          0);
        },
        [] {
            return Inputs{random({2, 3, 4}, 24)};
        });
    r.add(
        "op", "softmax (last dim)", [](const Inputs& x) { return softmax(x[0]); },
        [] {
            return Inputs{random({2, 3, 5}, 25, -3, 3)};
        });
    r.add(
        "op", "log_softmax (last dim)", [](const Inputs& x) { return log_softmax(x[0]); },
        [] {
            return Inputs{random({2, 3, 5}, 26, -3, 3)};
        });
    r.add(
        "op", "masked_fill(-inf) + softmax",
        [](const Inputs& x) {
            // row 0 keeps 3 of 4 positions, row 1 keeps 1, row 2 all
            Tensor mask = mask_tensor({3, 4}, {0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0});
            return softmax(masked_fill(x[0], mask, -std::numeric_limits<real>::infinity()));
        },
        [] {
            return Inputs{random({3, 4}, 27, -3, 3)};
        });
    r.add(
        "op", "masked_fill(0.5) broadcast over leading dims",
        [](const Inputs& x) {
            return masked_fill(x[0], mask_tensor({4}, {0, 1, 0, 1}), 0.5);
        },
        [] {
            return Inputs{random({2, 3, 4}, 28)};
        });
}

void add_shape_ops(Registry& r) {
    r.add(
        "op", "reshape (a view) then tanh",
        [](const Inputs& x) {
            return tanh(reshape(x[0], {4, -1}));
        },
        [] {
            return Inputs{random({2, 3, 4}, 29)};
        });
    r.add(
        "op", "transpose of the last two dims", [](const Inputs& x) { return transpose(x[0]); },
        [] {
            return Inputs{random({2, 3, 4}, 30)};
        });
    for (int dim : {0, 1, 2})
        r.add(
            "op", fmt::format("concat along dim {}", dim),
            [dim](const Inputs& x) {
                return concat({x[0], x[1], x[0]}, dim);
            },
            [] {
                return Inputs{random({2, 3, 4}, 31), random({2, 3, 4}, 32)};
            });
    r.add(
        "op", "slice along dims 1 and 2",
        [](const Inputs& x) {
            return concat(
                {reshape(slice(x[0], 1, 1, 3), {-1}), reshape(slice(x[0], 2, 0, 2), {-1})}, 0);
        },
        [] {
            return Inputs{random({2, 3, 4}, 33)};
        });
    for (int dim : {0, 1, 2})
        r.add(
            "op", fmt::format("stack along dim {}", dim),
            [dim](const Inputs& x) {
                return stack({x[0], x[1], x[0]}, dim);
            },
            [] {
                return Inputs{random({2, 3}, 34), random({2, 3}, 35)};
            });
    r.add(
        "op", "embedding gather (repeated ids accumulate)",
        [](const Inputs& x) {
            return embedding(x[0], {2, 4, 2, 2, 1, 3}, {2, 3});
        },
        [] {
            return Inputs{random({5, 3}, 36)};
        });
    r.add(
        "op", "dropout p=0.3 (fixed seed: the same mask at every evaluation)",
        [](const Inputs& x) {
            Rng rng(7);
            return dropout(x[0], 0.3, true, rng);
        },
        [] {
            return Inputs{random({4, 6}, 37)};
        });
}

void add_fused_ops(Registry& r) {
    r.add(
        "op", "additive_attention_scores (fused)",
        [](const Inputs& x) { return additive_attention_scores(x[0], x[1], x[2]); },
        [] {
            return Inputs{random({3, 5}, 56, -2, 2), random({3, 4, 5}, 57, -2, 2),
                          random({1, 5}, 58, -2, 2)};
        });
    for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none}) {
        const char* name = reduction == Reduction::mean  ? "mean"
                           : reduction == Reduction::sum ? "sum"
                                                         : "none";
        r.add(
            "op", fmt::format("fused_cross_entropy ({}, ignore_index, smoothing 0.1)", name),
            [reduction](const Inputs& x) {
                return fused_cross_entropy(x[0], {3, 0, -100, 4, 1}, -100, reduction, real(0.1));
            },
            [] {
                return Inputs{random({5, 6}, 59, -3, 3)};
            });
    }
}

// ---- layers ----------------------------------------------------------------------------------

void add_linear_and_embedding(Registry& r) {
    r.add("layer", "Linear(4, 5) on [2,3,4]", [](const GradcheckOptions& o) {
        Rng rng(60);
        Linear layer(4, 5, true, rng);
        return gradcheck([&](const Inputs& x) { return layer.forward(x[0]); },
                         with_parameters({random({2, 3, 4}, 61)}, layer), o);
    });
    // PAD = 0 appears in the ids; as in a model, its positions are masked out downstream, so
    // the padding row's gradient (zero by convention) is also the true derivative.
    r.add("layer", "Embedding with padding_idx 0, PAD positions masked",
          [](const GradcheckOptions& o) {
              Rng rng(62);
              Embedding layer(6, 3, 0, rng);
              const std::vector<int32_t> ids{2, 5, 2, 1, 0, 0};
              Tensor keep = mask_tensor({2, 3, 1}, {1, 1, 1, 1, 0, 0});
              return gradcheck(
                  [&](const Inputs&) {
                      return mul(layer.forward(ids, {2, 3}), keep);
                  },
                  layer.parameters(), o);
          });
}

void add_attention_layers(Registry& r) {
    // Attention: two decoder steps sharing one key projection, lengths {3,1,4} (a padded
    // batch); output both steps' contexts and weights.
    struct AttentionCase {
        std::string name;
        int64_t query_dim, key_dim;
        std::function<std::unique_ptr<Attention>(Rng&)> make;
    };
    auto bahdanau = [](bool fused) {
        return [fused](Rng& rng) {
            auto a = std::make_unique<BahdanauAttention>(4, 6, 5, rng);
            a->use_fused = fused;
            return std::unique_ptr<Attention>(std::move(a));
        };
    };
    auto luong = [](LuongScore kind, int64_t dq, int64_t dk, bool scaled, bool fused) {
        return [=](Rng& rng) {
            auto a = std::make_unique<LuongAttention>(kind, dq, dk, rng, scaled, 5);
            a->use_fused = fused;
            return std::unique_ptr<Attention>(std::move(a));
        };
    };
    const AttentionCase attentions[] = {
        {"Bahdanau attention with mask (fused scores)", 4, 6, bahdanau(true)},
        {"Bahdanau attention with mask (composed scores)", 4, 6, bahdanau(false)},
        {"Luong dot attention with mask", 5, 5, luong(LuongScore::dot, 5, 5, false, true)},
        {"Luong dot attention scaled, with mask", 5, 5, luong(LuongScore::dot, 5, 5, true, true)},
        {"Luong general attention with mask", 4, 6, luong(LuongScore::general, 4, 6, false, true)},
        {"Luong concat attention with mask (fused scores)", 4, 6,
         luong(LuongScore::concat, 4, 6, false, true)},
        {"Luong concat attention with mask (composed scores)", 4, 6,
         luong(LuongScore::concat, 4, 6, false, false)},
    };
    for (const AttentionCase& c : attentions)
        r.add("layer", c.name, [c](const GradcheckOptions& o) {
            Rng rng(70);
            std::unique_ptr<Attention> attention = c.make(rng);
            scale_parameters(*attention, 2);
            const Tensor mask = padding_mask({3, 1, 4}, 4);
            return gradcheck(
                [&](const Inputs& x) {
                    Tensor keys_projected = attention->project_keys(x[0]);
                    AttentionResult a1 = attention->forward(x[1], x[0], keys_projected, mask);
                    AttentionResult a2 = attention->forward(x[2], x[0], keys_projected, mask);
                    return concat({a1.context, a1.weights, a2.context, a2.weights}, 1);
                },
                with_parameters({random({3, 4, c.key_dim}, 71), random({3, c.query_dim}, 72),
                                 random({3, c.query_dim}, 73)},
                                *attention),
                o);
        });
}

// The same two steps with coverage (model.coverage): the first step reads a given c_0 (an input,
// so the check reaches through c_s), the second c_1 = c_0 + α_0.
void add_coverage_attention_layers(Registry& r) {
    struct CoverageCase {
        std::string name;
        int64_t query_dim, key_dim;
        LuongScore kind;
        bool bahdanau;
    };
    const CoverageCase cases[] = {{"Bahdanau", 4, 6, LuongScore::dot, true},
                                  {"Luong dot", 5, 5, LuongScore::dot, false},
                                  {"Luong general", 4, 6, LuongScore::general, false},
                                  {"Luong concat", 4, 6, LuongScore::concat, false}};
    for (const CoverageCase& c : cases)
        for (Coverage coverage : {Coverage::subtract, Coverage::learned})
            r.add("layer",
                  fmt::format("{} attention with mask, coverage {} (through c)", c.name,
                              to_string(coverage)),
                  [c, coverage](const GradcheckOptions& o) {
                      Rng rng(75);
                      std::unique_ptr<Attention> attention;
                      if (c.bahdanau)
                          attention = std::make_unique<BahdanauAttention>(4, 6, 5, rng);
                      else
                          attention = std::make_unique<LuongAttention>(c.kind, c.query_dim,
                                                                       c.key_dim, rng, false, 5);
                      attention->set_coverage(coverage, 0.9, rng);
                      scale_parameters(*attention, 2);
                      const Tensor mask = padding_mask({3, 1, 4}, 4);
                      Tensor coverage0 = random({3, 4}, 79, 0, 1.5);
                      return gradcheck(
                          [&](const Inputs& x) {
                              Tensor keys_projected = attention->project_keys(x[0]);
                              AttentionResult a1 = attention->forward(x[1], x[0], keys_projected,
                                                                      mask, Tensor(), x[3]);
                              AttentionResult a2 =
                                  attention->forward(x[2], x[0], keys_projected, mask, Tensor(),
                                                     add(x[3], a1.weights));
                              return concat({a1.context, a1.weights, a2.context, a2.weights}, 1);
                          },
                          with_parameters(
                              {random({3, 4, c.key_dim}, 76), random({3, c.query_dim}, 77),
                               random({3, c.query_dim}, 78), coverage0},
                              *attention),
                          o);
                  });
}

void add_losses(Registry& r) {
    for (bool fused : {true, false})
        for (real smoothing : {real(0), real(0.1)}) {
            r.add(
                "layer",
                fmt::format("cross_entropy {} (ignore_index, label smoothing {:g})",
                            fused ? "fused" : "composed", double(smoothing)),
                [fused, smoothing](const Inputs& x) {
                    const std::vector<int32_t> targets{3, 0, -100, 4, 1};  // row 2 is padding
                    return fused ? cross_entropy(x[0], targets, -100, Reduction::mean, smoothing)
                                 : cross_entropy_composed(x[0], targets, -100, Reduction::mean,
                                                          smoothing);
                },
                [] {
                    return Inputs{random({5, 6}, 74, -3, 3)};
                });
        }
}

}  // namespace

std::vector<GradcheckEntry> gradcheck_entries() {
    Registry r;
    add_elementwise_ops(r);
    add_matmul_ops(r);
    add_reduce_ops(r);
    add_shape_ops(r);
    add_fused_ops(r);
    add_recurrent_ops(r);
    add_linear_and_embedding(r);
    add_recurrent_layers(r);
    add_attention_layers(r);
    add_coverage_attention_layers(r);
    add_losses(r);
    add_models(r);
    add_transformer(r);
    return std::move(r.entries);
}

const char* real_type_name() {
    return std::is_same_v<real, double> ? "double" : "float";
}

GradcheckOptions default_gradcheck_options() {
    GradcheckOptions options;  // eps 1e-6, atol 1e-7, rtol 1e-6: for double
    if (!std::is_same_v<real, double>) {
        options.eps = 1e-2;
        options.atol = 1e-3;
        options.rtol = 1e-2;
    }
    return options;
}

GradcheckRow run_gradcheck_entry(const GradcheckEntry& entry, const GradcheckOptions& options) {
    GradcheckRow row;
    row.name = entry.name;
    auto start = std::chrono::steady_clock::now();
    try {
        row.result = entry.run(options);
    } catch (const std::exception& e) {
        row.error = e.what();
        row.result.passed = false;
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return row;
}

}  // namespace seqgrad
