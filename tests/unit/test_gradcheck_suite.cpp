// The `seqgrad gradcheck` suite (apps/gradcheck/gradcheck_suite.h), run here in double precision: every
// entry must pass, each as its own SUBCASE so that a failure names the entry; and a
// deliberately wrong gradient must fail, to show that the harness can fail at all.
#include <set>

#include "apps/gradcheck/gradcheck_suite.h"
#include "test_util.h"

using namespace seqgrad;

namespace {

// Runs every entry of one group ("op", "layer" or "model") as a SUBCASE.
void check_group(const std::string& group) {
    static_assert(sizeof(real) == 8, "the suite is only sharp in double (link seqgrad_app_f64)");
    const GradcheckOptions options = default_gradcheck_options();
    for (const GradcheckEntry& entry : gradcheck_entries()) {
        if (entry.group != group) continue;
        SUBCASE(entry.name.c_str()) {
            GradcheckRow row = run_gradcheck_entry(entry, options);
            INFO(fmt::format(
                "{}: inputs {}, elements {}, max abs err {:.3g}, max rel err {:.3g}; "
                "{}{}",
                row.name, row.result.inputs_checked, row.result.elements_checked,
                row.result.max_abs_error, row.result.max_rel_error, row.result.worst, row.error));
            CHECK(row.error == "");
            CHECK(row.result.passed);
            CHECK(row.result.inputs_checked > 0);
            CHECK(row.passed());
        }
    }
}

// x ↦ 2x with a backward that forgets the factor 2: the kind of bug gradcheck exists for.
Tensor double_with_wrong_gradient(const Tensor& x) {
    Tensor out = make_result(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) out.data()[i] = 2 * x.data()[i];
    record(out, "double_with_wrong_gradient", {x}, [](Node& node) {
        real* gx = parent_grad(node, 0);
        if (!gx) return;
        for (int64_t i = 0; i < node.numel(); ++i) gx[i] += node.grad.data()[i];  // should be 2 g
    });
    return out;
}

}  // namespace

TEST_CASE("the suite runs in double with sharp default tolerances") {
    CHECK(std::string(real_type_name()) == "double");
    GradcheckOptions o = default_gradcheck_options();
    CHECK(o.eps == 1e-6);
    CHECK(o.rtol == 1e-6);
}

TEST_CASE("the suite has unique names and covers every op, layer and attention kind") {
    std::set<std::string> names;
    for (const GradcheckEntry& e : gradcheck_entries()) {
        CHECK(names.insert(e.name).second);
        CHECK((e.group == "op" || e.group == "layer" || e.group == "model"));
        CHECK(e.name.rfind(e.group + "/", 0) == 0);
    }
    auto has = [&](const std::string& part) {
        for (const std::string& n : names)
            if (n.find(part) != std::string::npos) return true;
        return false;
    };
    for (const char* part : {"op/add",
                             "op/sub",
                             "op/mul",
                             "op/div",
                             "op/scalar",
                             "op/matmul 2-D transpose_a",
                             "op/matmul batched transpose_a transpose_b",
                             "op/linear",
                             "op/tanh",
                             "op/sigmoid",
                             "op/relu",
                             "op/exp",
                             "op/log",
                             "op/clamp",
                             "op/softmax",
                             "op/log_softmax",
                             "op/sum",
                             "op/reshape",
                             "op/transpose",
                             "op/concat",
                             "op/slice",
                             "op/stack",
                             "op/embedding",
                             "op/masked_fill(-inf) + softmax",
                             "op/dropout",
                             "op/gru_cell (fused)",
                             "op/gru_cell_composed",
                             "op/gru_cell_step",
                             "op/lstm_cell (fused)",
                             "op/lstm_cell_composed",
                             "op/lstm_cell_step",
                             "op/rnn_cell (fused)",
                             "op/rnn_cell_composed",
                             "op/rnn_cell_step",
                             "op/additive_attention_scores",
                             "op/fused_cross_entropy",
                             "layer/Linear",
                             "layer/Embedding with padding_idx",
                             "layer/GRUCell (fused cell)",
                             "layer/GRUCell (composed cell)",
                             "layer/GRU padded batch",
                             "layer/GRU bidirectional",
                             "layer/LSTMCell (fused cell)",
                             "layer/LSTMCell (composed cell)",
                             "layer/LSTM padded batch",
                             "layer/LSTM bidirectional, 2 layers, padded, h0 and c0 (fused)",
                             "layer/LSTM bidirectional, 2 layers, padded, h0 and c0 (composed)",
                             "layer/RNNCell (fused cell)",
                             "layer/RNNCell (composed cell)",
                             "layer/RNN padded batch",
                             "layer/RNN bidirectional, 2 layers, padded (fused)",
                             "layer/RNN bidirectional, 2 layers, padded (composed)",
                             "layer/Bahdanau",
                             "layer/Luong dot",
                             "layer/Luong general",
                             "layer/Luong concat",
                             "layer/cross_entropy fused",
                             "layer/cross_entropy composed",
                             "model/Seq2Seq attention none",
                             "model/Seq2Seq attention bahdanau",
                             "model/Seq2Seq attention luong_dot",
                             "model/Seq2Seq attention luong_general",
                             "model/Seq2Seq attention luong_concat",
                             "model/Seq2Seq bahdanau, 2 decoder layers, deep output",
                             "model/Seq2Seq none, deep output",
                             "model/Seq2Seq lstm bahdanau",
                             "model/Seq2Seq lstm none",
                             "model/Seq2Seq rnn bahdanau",
                             "model/Seq2Seq rnn none",
                             "op/layer_norm",
                             "op/gelu",
                             "op/sqrt",
                             "op/transpose (dims 1, 2)",
                             "op/scaled_dot_product_attention (key padding + causal)",
                             "op/scaled_dot_product_attention (a fully masked row)",
                             "layer/MultiheadAttention",
                             "layer/TransformerEncoderLayer (post-norm)",
                             "layer/TransformerEncoderLayer (pre-norm)",
                             "layer/TransformerDecoderLayer (post-norm)",
                             "layer/TransformerDecoderLayer (pre-norm)",
                             "layer/PositionalEncoding (learned)",
                             "model/Transformer post-norm",
                             "model/Transformer pre-norm"}) {
        CAPTURE(part);
        CHECK(has(part));
    }
}

TEST_CASE("gradcheck suite: ops") {
    check_group("op");
}

TEST_CASE("gradcheck suite: layers") {
    check_group("layer");
}

TEST_CASE("gradcheck suite: whole Seq2Seq and Transformer models") {
    check_group("model");
}

TEST_CASE("a wrong gradient fails the check, and the report says where") {
    GradcheckEntry broken{
        "op/double with a wrong gradient", "op", [](const GradcheckOptions& o) {
            Tensor x = testing::random_tensor({2, 3}, 1);
            return gradcheck([](auto& in) { return double_with_wrong_gradient(in[0]); }, {x}, o);
        }};
    GradcheckRow row = run_gradcheck_entry(broken, default_gradcheck_options());
    CHECK_FALSE(row.passed());
    CHECK_FALSE(row.result.passed);
    CHECK(row.result.max_rel_error == doctest::Approx(0.5));  // |1 − 2| / 2
    CHECK(row.result.worst.find("input 0") != std::string::npos);
}

TEST_CASE("an entry that throws is reported as a failure with its message") {
    GradcheckEntry throwing{"op/throws", "op", [](const GradcheckOptions&) -> GradcheckResult {
                                throw Error("matmul: [2,3] x [4,5]: inner dims 3 != 4");
                            }};
    GradcheckRow row = run_gradcheck_entry(throwing, default_gradcheck_options());
    CHECK_FALSE(row.passed());
    CHECK(row.error == "matmul: [2,3] x [4,5]: inner dims 3 != 4");
}
