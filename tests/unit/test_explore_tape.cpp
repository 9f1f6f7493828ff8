// The explorer's tape view (apps/explore/explore_tape.h): it holds exactly the nodes backward
// visits, each labelled with its module and time step, with the gradient backward computes; the
// scope labels (autograd/tape_scope.h); and the op maths table (apps/explore/op_maths.h), held
// equal to the comments above the ops in autograd/ and complete for every op autograd/ records.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_set>

#include "apps/explore/explore_tape.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/model/transformer.h"
#include "apps/explore/op_maths.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/model/transformer.h"
#include "transformer_util.h"

using namespace seqgrad;
namespace fs = std::filesystem;

namespace {

ModelConfig tiny_config(const std::string& attention, const std::string& cell, bool bidirectional,
                        const std::string& coverage) {
    ModelConfig c;
    c.embedding_size = 3;
    c.hidden_size = 4;
    c.attention_size = 5;
    c.attention = attention;
    c.cell = cell;
    c.bidirectional = bidirectional;
    c.coverage = coverage;
    return c;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The nodes reachable from `root` through inputs that require grad, counted without the engine.
size_t count_graph(const Tensor& root) {
    std::unordered_set<const Node*> seen{&root.node()};
    std::vector<const Node*> stack{&root.node()};
    while (!stack.empty()) {
        const Node* node = stack.back();
        stack.pop_back();
        for (const NodePtr& p : node->parents)
            if (p->requires_grad && seen.insert(p.get()).second) stack.push_back(p.get());
    }
    return seen.size();
}

double grad_norm(const Tensor& t) {
    double s = 0;
    if (const real* g = t.grad_data())
        for (int64_t i = 0; i < t.numel(); ++i) s += double(g[i]) * double(g[i]);
    return std::sqrt(s);
}

}  // namespace

TEST_CASE("TapeScope labels the ops recorded under it, only while a recording is on") {
    Tensor x = Tensor::from_vector({2}, {1, 2}, true);
    TapeScope ignored("ignored", 7);  // no recording yet: does nothing
    const Tensor before = tanh(x);
    TapeRecording recording;
    Tensor outside = tanh(x), encoder, attention, step;
    {
        TapeScope scope("encoder", 3);
        encoder = tanh(x);
        {
            TapeScope inner("attention");  // the enclosing step
            attention = exp(x);
        }
        {
            TapeScope inner(5);  // the enclosing module
            step = sigmoid(x);
        }
    }
    const Tensor after = neg(x);
    CHECK(recording.label(before.node()).module == nullptr);
    CHECK(recording.label(outside.node()).module == nullptr);
    CHECK(recording.label(after.node()).module == nullptr);
    CHECK(std::string(recording.label(encoder.node()).module) == "encoder");
    CHECK(recording.label(encoder.node()).step == 3);
    CHECK(std::string(recording.label(attention.node()).module) == "attention");
    CHECK(recording.label(attention.node()).step == 3);
    CHECK(std::string(recording.label(step.node()).module) == "encoder");
    CHECK(recording.label(step.node()).step == 5);
    CHECK(recording.label(x.node()).module == nullptr);  // a leaf: not recorded
}

TEST_CASE("the tape holds every node backward visits, grouped, with backward's gradients") {
    struct Case {
        const char* attention;
        const char* cell;
        bool bidirectional, fused;
        const char* coverage = "none";
    };
    const std::vector<int32_t> source = {4, 5, 6, Vocab::EOS}, target = {5, 7, 4, 6, Vocab::EOS};
    const int S = int(source.size()), T = int(target.size());
    for (Case c : {Case{"bahdanau", "gru", false, true}, Case{"bahdanau", "gru", false, false},
                   Case{"luong_general", "lstm", true, true}, Case{"luong_dot", "rnn", false, true},
                   Case{"luong_concat", "lstm", false, false}, Case{"none", "gru", false, true},
                   Case{"bahdanau", "gru", false, true, "subtract"},
                   Case{"luong_general", "gru", false, true, "learned"}}) {
        const std::string described =
            std::string(c.attention) + " " + c.cell + (c.bidirectional ? " bidirectional" : "") +
            (c.fused ? " fused" : " composed") + " coverage " + c.coverage;
        INFO(described);
        Rng rng(3);
        Seq2Seq model(tiny_config(c.attention, c.cell, c.bidirectional, c.coverage), 10, 10, rng,
                      FusedLayers{c.fused, c.fused});
        model.eval();
        const Batch batch = make_batch({{source, target}}, {0});
        const nlohmann::json tape = tape_json(model, batch);
        for (const auto& [name, p] : model.named_parameters()) CHECK(grad_norm(p) == 0);

        // The same graph again: the engine's traversal and a plain one count the tape's nodes.
        Tensor loss = model.forward_loss(batch).loss;
        const nlohmann::json& nodes = tape["nodes"];
        const size_t count = nodes["op"].size();
        CHECK(count == recorded_graph(loss).size());
        CHECK(count == count_graph(loss));
        CHECK(tape["loss"].get<double>() == doctest::Approx(double(loss.item())).epsilon(1e-2));
        for (const char* column : {"shape", "value", "grad", "group", "inputs"})
            CHECK(nodes[column].size() == count);

        // Inputs come first; the last node is the loss, its gradient 1.
        for (size_t i = 0; i < count; ++i)
            for (int j : nodes["inputs"][i]) CHECK(size_t(j) < i);
        CHECK(nodes["grad"][count - 1] == 1);
        // Every op has a maths line; every group the model's scopes name is there.
        for (const std::string op : tape["ops"])
            if (op != "parameter") CHECK_MESSAGE(find_op_maths(op), op);
        std::set<std::pair<std::string, int>> groups;
        for (const auto& g : tape["groups"])
            groups.insert({g["module"].get<std::string>(), g["step"].get<int>()});
        for (int s = 0; s < S; ++s) CHECK(groups.count({"encoder", s}));
        for (int t = 0; t < T; ++t) {
            CHECK(groups.count({"decoder", t}));
            CHECK(groups.count({"attention", t}) == (std::string(c.attention) != "none"));
        }
        for (const char* g : {"encoder", "output", "loss", "parameters"})
            CHECK(groups.count({g, -1}));
        CHECK(groups.count({"other", -1}) == 0);  // every op is in a scope

        // Each parameter's gradient norm is what backward gives it.
        loss.backward();
        std::map<std::string, size_t> by_name;
        for (const auto& [index, name] : tape["names"].items())
            by_name[name.get<std::string>()] = std::stoul(index);
        for (const auto& parameter : model.named_parameters()) {
            const std::string& name = parameter.first;
            const Tensor& p = parameter.second;
            CAPTURE(name);
            REQUIRE(by_name.count(name));
            CHECK(nodes["grad"][by_name[name]].get<double>() ==
                  doctest::Approx(grad_norm(p)).epsilon(1e-2).scale(1e-12));
        }

        // The paths to the first source embedding: through the recurrence always, through
        // attention only with attention; both start at the loss and end at the embedding.
        const nlohmann::json& paths = tape["paths"];
        const int embedding = paths["embedding"], outputs = paths["encoder_outputs"];
        REQUIRE(embedding >= 0);
        CHECK((outputs >= 0) == (std::string(c.attention) != "none"));  // what attention reads
        auto has = [](const nlohmann::json& list, int i) {
            for (int j : list)
                if (j == i) return true;
            return false;
        };
        CHECK(has(paths["recurrence"], embedding));
        CHECK(has(paths["recurrence"], int(count - 1)));
        CHECK(!has(paths["recurrence"], outputs));
        if (std::string(c.attention) == "none") {
            CHECK(paths["attention"].empty());
        } else {
            CHECK(has(paths["attention"], embedding));
            CHECK(has(paths["attention"], int(count - 1)));
            CHECK(has(paths["attention"], outputs));
        }
    }
}

TEST_CASE(
    "a Transformer's tape: groups by layer, the loss and gradients of forward_loss, one path") {
    const std::vector<int32_t> source = {4, 5, 6, Vocab::EOS}, target = {5, 7, 4, 6, Vocab::EOS};
    for (bool norm_first : {false, true}) {
        CAPTURE(norm_first);
        ModelConfig c =
            testing::tiny_transformer_config(norm_first, norm_first ? "learned" : "sinusoidal");
        c.encoder_layers = 1;
        Rng rng(3);
        Transformer model(c, 10, 10, rng);
        model.eval();
        const Batch batch = make_batch({{source, target}}, {0});
        const nlohmann::json tape = tape_json(model, batch);
        CHECK(tape["kind"] == "transformer");
        for (const auto& [name, p] : model.named_parameters()) CHECK(grad_norm(p) == 0);

        Tensor loss = model.forward_loss(batch).loss;
        const nlohmann::json& nodes = tape["nodes"];
        const size_t count = nodes["op"].size();
        CHECK(tape["loss"].get<double>() == doctest::Approx(double(loss.item())).epsilon(1e-2));
        for (size_t i = 0; i < count; ++i)
            for (int j : nodes["inputs"][i]) CHECK(size_t(j) < i);
        for (const std::string op : tape["ops"])
            if (op != "parameter") CHECK_MESSAGE(find_op_maths(op), op);
        // groups: the embeddings, each layer and each stack's final norm (step L), each decoder
        // layer's cross-attention, the output, the loss, the parameters, and nothing else
        std::set<std::pair<std::string, int>> groups;
        for (const auto& g : tape["groups"])
            groups.insert({g["module"].get<std::string>(), g["step"].get<int>()});
        const std::set<std::pair<std::string, int>> expected = {
            {"encoder", -1},  {"encoder", 0}, {"encoder", 1}, {"decoder", -1},
            {"decoder", 0},   {"decoder", 1}, {"decoder", 2}, {"attention", 0},
            {"attention", 1}, {"output", -1}, {"loss", -1},   {"parameters", -1}};
        CHECK(groups == expected);
        // each parameter's gradient norm is forward_loss's
        loss.backward();
        std::map<std::string, size_t> by_name;
        for (const auto& [index, name] : tape["names"].items())
            by_name[name.get<std::string>()] = std::stoul(index);
        for (const auto& [name, p] : model.named_parameters()) {
            CAPTURE(name);
            REQUIRE(by_name.count(name));
            CHECK(nodes["grad"][by_name[name]].get<double>() ==
                  doctest::Approx(grad_norm(p)).epsilon(1e-2).scale(1e-12));
        }
        // one path, loss -> memory -> source embeddings; no recurrence
        const nlohmann::json& paths = tape["paths"];
        const int embedding = paths["embedding"], memory = paths["encoder_outputs"];
        REQUIRE(embedding >= 0);
        REQUIRE(memory >= 0);
        std::set<int> on;
        for (int i : paths["attention"]) on.insert(i);
        CHECK(on.count(embedding));
        CHECK(on.count(memory));
        CHECK(on.count(int(count - 1)));
        CHECK(paths["recurrence"].empty());
    }
}

TEST_CASE("the op maths table equals the comments in autograd/ and covers every recorded op") {
    const fs::path root(SEQGRAD_SOURCE_DIR);
    // Every entry: its comment lines, consecutive, in the file it names; its op name recorded.
    std::string all_sources;
    for (const auto& f : fs::recursive_directory_iterator(root / "autograd"))
        if (f.path().extension() == ".cpp" || f.path().extension() == ".h")
            all_sources += read_file(f.path());
    std::set<std::string> table;
    for (const OpMaths& entry : op_maths_table()) {
        CAPTURE(entry.op);
        CHECK(table.insert(entry.op).second);  // one entry per op
        CHECK(all_sources.find('"' + std::string(entry.op) + '"') != std::string::npos);
        REQUIRE(!entry.blocks.empty());
        for (const OpMathsBlock& block : entry.blocks) {
            CAPTURE(block.file);
            std::vector<std::string> lines;
            std::istringstream file(read_file(root / block.file));
            for (std::string line; std::getline(file, line);) {
                const size_t start = line.find_first_not_of(' ');
                lines.push_back(start == std::string::npos ? "" : line.substr(start));
            }
            std::vector<std::string> expected;
            std::istringstream text(block.text);
            for (std::string line; std::getline(text, line);)
                expected.push_back(line.empty() ? "//" : "// " + line);
            REQUIRE(!expected.empty());
            bool found = false;
            for (size_t i = 0; !found && i + expected.size() <= lines.size(); ++i)
                found = std::equal(expected.begin(), expected.end(), lines.begin() + long(i));
            CHECK_MESSAGE(found, "the comment\n" << block.text << "\nis not in " << block.file);
        }
    }
    // Every op name autograd/ records (record(out, "name", ...) or through its helpers) has one.
    const std::regex recorded(
        R"re((?:record|binary|unary|sum_all_scaled|sum_dim_scaled|join|fused_cell)\(\s*(?:\w+,\s*)?"(\w+)")re");
    std::set<std::string> ops;
    for (auto it = std::sregex_iterator(all_sources.begin(), all_sources.end(), recorded);
         it != std::sregex_iterator(); ++it)
        ops.insert((*it)[1]);
    CHECK(ops.size() >= 40);
    for (const std::string& op : ops) CHECK_MESSAGE(table.count(op), op << " has no maths line");
}
