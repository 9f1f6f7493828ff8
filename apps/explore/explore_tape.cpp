#include "apps/explore/explore_tape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>

#include "apps/explore/explore_gradients.h"
#include "apps/explore/op_maths.h"
#include "apps/studies/gradflow.h"
#include "seqgrad/autograd/tape_scope.h"

namespace seqgrad {

using nlohmann::json;

namespace {

double norm(const real* x, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(x[i]) * double(x[i]);
    return std::sqrt(s);
}

// A node's group: its TapeScope label, "loss" for the root, "parameters" for the leaves.
struct GroupKey {
    std::string module;
    int step;
    bool operator<(const GroupKey& o) const {
        return module != o.module ? module < o.module : step < o.step;
    }
};

// Where a group comes in the model's computation: the encoder's shared part and its steps, the
// attention's keys, then per output step the decoder and its attention, the output, the loss,
// the parameters.
std::tuple<int, int, int> computation_order(const GroupKey& g) {
    static const char* const modules[] = {"encoder", "attention", "decoder",
                                          "output",  "loss",      "parameters"};
    int m = int(std::size(modules));
    for (int i = 0; i < int(std::size(modules)); ++i)
        if (g.module == modules[i]) m = i;
    if (m <= 2 && g.step >= 0)  // encoder step s; decoder step t, then attention at t
        return {m == 0 ? 1 : 3, g.step, m == 1 ? 1 : 0};
    return {m == 0 ? 0 : m == 1 ? 2 : m + 1, g.step, 0};
}

// The nodes on some path from a node of `from` down (through inputs) to a node of `to`, none of
// whose nodes is `excluded` (may be -1).
std::vector<bool> on_paths(const std::vector<std::vector<int>>& inputs,
                           const std::vector<int>& from, const std::vector<int>& to, int excluded) {
    const size_t n = inputs.size();
    std::vector<std::vector<int>> users(n);
    for (size_t i = 0; i < n; ++i)
        for (int j : inputs[i]) users[size_t(j)].push_back(int(i));
    auto reach = [&](const std::vector<int>& start, const std::vector<std::vector<int>>& next) {
        std::vector<bool> seen(n, false);
        std::vector<int> stack;
        for (int s : start)
            if (s != excluded && !seen[size_t(s)]) seen[size_t(s)] = true, stack.push_back(s);
        while (!stack.empty()) {
            const int i = stack.back();
            stack.pop_back();
            for (int j : next[size_t(i)])
                if (j != excluded && !seen[size_t(j)]) seen[size_t(j)] = true, stack.push_back(j);
        }
        return seen;
    };
    const std::vector<bool> below = reach(from, inputs), above = reach(to, users);
    std::vector<bool> both(n);
    for (size_t i = 0; i < n; ++i) both[i] = below[i] && above[i];
    return both;
}

json indices(const std::vector<bool>& set) {
    json out = json::array();
    for (size_t i = 0; i < set.size(); ++i)
        if (set[i]) out.push_back(i);
    return out;
}

// The two highlighted routes from the loss (the last node) to the first source embedding E:
//   attention   loss -> ... -> the encoder outputs O the attention reads -> the encoder's states
//               at position 0 (O's inputs there) -> ... -> E: a path of one encoder step
//   recurrence  loss -> ... -> the encoder's states at position 0, avoiding O (through the
//               decoder's initial state and every encoder step) -> ... -> E
json paths_json(const std::vector<std::vector<int>>& inputs, const std::vector<GroupKey>& groups,
                const std::vector<int>& group_of, int embedding, int outputs) {
    const int loss = int(inputs.size()) - 1;
    json out = {{"embedding", embedding},
                {"encoder_outputs", outputs},
                {"attention", json::array()},
                {"recurrence", json::array()}};
    if (embedding < 0) return out;
    std::vector<int> first_step;  // the nodes of encoder step 0
    for (size_t i = 0; i < inputs.size(); ++i)
        if (groups[size_t(group_of[i])].module == "encoder" &&
            groups[size_t(group_of[i])].step == 0)
            first_step.push_back(int(i));
    std::vector<bool> attention(inputs.size(), false), recurrence(inputs.size(), false);
    if (outputs >= 0) {
        std::vector<int> read;  // O's inputs at position 0
        for (int j : inputs[size_t(outputs)])
            if (std::find(first_step.begin(), first_step.end(), j) != first_step.end())
                read.push_back(j);
        const std::vector<bool> to_outputs = on_paths(inputs, {loss}, {outputs}, -1);
        if (to_outputs[size_t(outputs)] && !read.empty()) {
            const std::vector<bool> down = on_paths(inputs, read, {embedding}, -1);
            for (size_t i = 0; i < inputs.size(); ++i) attention[i] = to_outputs[i] || down[i];
        }
    }
    const std::vector<bool> to_first = on_paths(inputs, {loss}, first_step, outputs);
    const std::vector<bool> down = on_paths(inputs, first_step, {embedding}, outputs);
    bool reached = false;
    for (int i : first_step) reached = reached || (to_first[size_t(i)] && down[size_t(i)]);
    if (reached)
        for (size_t i = 0; i < inputs.size(); ++i)
            recurrence[i] = (to_first[i] && std::find(first_step.begin(), first_step.end(),
                                                      int(i)) == first_step.end()) ||
                            down[i];
    out["attention"] = indices(attention);
    out["recurrence"] = indices(recurrence);
    return out;
}

// A node's group: "loss" for the root, "parameters" for the leaves, else its TapeScope label.
GroupKey group_key(const Node& node, bool root, const TapeRecording& recording) {
    if (root) return {"loss", -1};
    if (node.is_leaf) return {"parameters", -1};
    const TapeLabel label = recording.label(node);
    return label.module ? GroupKey{label.module, label.step} : GroupKey{"other", -1};
}

// The groups (in order of first appearance) as a list in the order of the model's computation,
// whatever the order backward visits; `column` gets each node's index into that list.
json sorted_groups(const std::vector<GroupKey>& groups, const std::vector<int>& group_of,
                   json& column) {
    std::vector<int> sorted(groups.size()), position(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) sorted[g] = int(g);
    std::sort(sorted.begin(), sorted.end(), [&](int a, int b) {
        return computation_order(groups[size_t(a)]) < computation_order(groups[size_t(b)]);
    });
    json list = json::array();
    for (size_t k = 0; k < sorted.size(); ++k) {
        const GroupKey& key = groups[size_t(sorted[k])];
        position[size_t(sorted[k])] = int(k);
        list.push_back({{"module", key.module}, {"step", key.step}});
    }
    column = json::array();
    for (int g : group_of) column.push_back(position[size_t(g)]);
    return list;
}

// ‖.grad‖ after backward (kept: retains_grad); 0 when no gradient reached the node; null when a
// fast kernel held it on the node's extension instead (a shared_over_steps view).
json gradient_norm(const Node& node, bool held_by_kernel) {
    if (node.grad.size() > 0) return significant(norm(node.grad.data(), node.numel()));
    return held_by_kernel ? json(nullptr) : json(0);
}

// A Transformer's one route: loss -> ... -> the memory (which only the cross-attention reads)
// -> ... -> the source embeddings. No recurrence.
json transformer_paths(const std::vector<std::vector<int>>& inputs, int embedding, int memory) {
    json out = {{"embedding", embedding},
                {"encoder_outputs", memory},
                {"attention", json::array()},
                {"recurrence", json::array()}};
    if (embedding < 0 || memory < 0) return out;
    const int loss = int(inputs.size()) - 1;
    const std::vector<bool> to_memory = on_paths(inputs, {loss}, {memory}, -1);
    const std::vector<bool> down = on_paths(inputs, {memory}, {embedding}, -1);
    std::vector<bool> through(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) through[i] = to_memory[i] || down[i];
    out["attention"] = indices(through);
    return out;
}

// The tape's nodes as columns, one entry per node in the engine's order, and the groups
// (module, step) the nodes belong to.
struct TapeColumns {
    std::vector<GroupKey> groups;
    std::vector<int> group_of;             // node -> its group
    std::vector<std::vector<int>> inputs;  // node -> the nodes on the tape it reads
    std::vector<std::string> ops;          // the op names, each once
    json op = json::array(), shape = json::array(), value = json::array(), input = json::array(),
         named = json::object();
    std::vector<bool> held_by_kernel;  // the node's gradient is on its kernel's extension
};

// Reads every node of `order` (index: a node's position in it; names: the parameters' names),
// and marks the inner nodes to keep their gradient for the backward pass that follows.
TapeColumns read_columns(const std::vector<NodePtr>& order, const TapeRecording& recording,
                         const std::unordered_map<const Node*, int>& index,
                         const std::unordered_map<const Node*, std::string>& names) {
    TapeColumns c;
    c.group_of.resize(order.size());
    c.inputs.resize(order.size());
    c.held_by_kernel.assign(order.size(), false);
    std::map<GroupKey, int> group_index;
    std::map<std::string, int> op_index;
    for (size_t i = 0; i < order.size(); ++i) {
        Node& node = *order[i];
        const GroupKey key = group_key(node, i + 1 == order.size(), recording);
        auto [g, added] = group_index.emplace(key, int(c.groups.size()));
        if (added) c.groups.push_back(key);
        c.group_of[i] = g->second;

        const std::string op = node.op ? node.op : node.is_leaf ? "parameter" : "?";
        auto [o, new_op] = op_index.emplace(op, int(c.ops.size()));
        if (new_op) c.ops.push_back(op);
        c.op.push_back(o->second);
        c.shape.push_back(std::vector<int64_t>(node.shape.begin(), node.shape.end()));
        c.value.push_back(significant(norm(node.data, node.numel())));
        json in = json::array();
        for (const NodePtr& p : node.parents) {
            const auto it = index.find(p.get());
            if (it == index.end()) continue;  // a constant (no gradient): not on the tape
            c.inputs[i].push_back(it->second);
            in.push_back(it->second);
        }
        c.input.push_back(in);
        if (node.is_leaf) {
            const auto it = names.find(&node);
            c.named[std::to_string(i)] = it == names.end() ? "(input)" : it->second;
        }
        c.held_by_kernel[i] = node.extension != nullptr;
        if (!node.is_leaf) node.retains_grad = true;  // read after the backward pass
    }
    return c;
}

// The tape of `loss`, recorded under `recording`; `embedded` and `outputs` are the source
// embeddings and the encoder outputs the paths run through.
json graph_json(const Module& model, const TapeRecording& recording, Tensor loss,
                const Tensor& embedded, const Tensor& outputs, bool transformer) {
    const std::vector<std::pair<std::string, Tensor>> parameters = model.named_parameters();
    const std::vector<NodePtr> order = recorded_graph(loss);  // the engine's own traversal
    std::unordered_map<const Node*, int> index;
    for (size_t i = 0; i < order.size(); ++i) index[order[i].get()] = int(i);
    std::unordered_map<const Node*, std::string> names;
    for (const auto& [name, p] : parameters) names[&p.node()] = name;
    const TapeColumns c = read_columns(order, recording, index, names);

    loss.backward();
    json grad = json::array();
    for (size_t i = 0; i < order.size(); ++i)
        grad.push_back(gradient_norm(*order[i], c.held_by_kernel[i]));
    for (auto [name, p] : parameters) p.zero_grad();

    json group;
    const json group_list = sorted_groups(c.groups, c.group_of, group);
    auto find = [&](const Tensor& t) {
        const auto it = t.defined() ? index.find(&t.node()) : index.end();
        return it == index.end() ? -1 : it->second;
    };
    const int embedding = find(embedded), memory = find(outputs);
    json paths = transformer ? transformer_paths(c.inputs, embedding, memory)
                             : paths_json(c.inputs, c.groups, c.group_of, embedding, memory);
    return {{"loss", significant(loss.item())},
            {"ops", c.ops},
            {"nodes",
             {{"op", c.op},
              {"shape", c.shape},
              {"value", c.value},
              {"grad", grad},
              {"group", group},
              {"inputs", c.input}}},
            {"names", c.named},
            {"groups", group_list},
            {"paths", paths}};
}

void check_one_sentence(const Batch& batch) {
    if (batch.batch_size != 1)
        throw Error(
            fmt::format("tape_json: a batch of {} sentences, expected 1", batch.batch_size));
}

}  // namespace

// The teacher-forced pass with a record (models/model/forward_record.h): its ops are labelled by
// the model's TapeScopes ("encoder", the decoder's steps or layers, "output"), and the paths run
// from the loss through the encoder's outputs to the source embeddings.
json tape_json(const TranslationModel& model, const Batch& batch) {
    check_one_sentence(batch);
    for (Tensor p : model.parameters()) p.zero_grad();
    TapeRecording recording;
    ForwardRecord record;
    const Tensor loss = model.forward_loss(batch, LossOptions{}, &record).loss;
    const bool recurrent = !record.encoder_step_states.empty();
    json tape = graph_json(model, recording, loss, record.source_embeddings, record.encoder_outputs,
                           !recurrent);
    if (!recurrent) tape["kind"] = "transformer";
    return tape;
}

json tape_json(const LoadedRun& run, const std::string& source, const std::vector<int32_t>& target,
               const std::string& target_name) {
    std::vector<EncodedPair> pairs{{run.task.encode_source(source), target}};
    const Batch batch = make_batch(pairs, {0});
    json tape = tape_json(*run.model, batch);
    tape["target"] = target_name;
    json tokens = json::array();
    for (int32_t id : target) tokens.push_back(run.task.target_vocab.token(id));
    tape["target_tokens"] = tokens;
    return tape;
}

json tape_maths(const json& sentences) {
    json maths = json::object();
    for (const json& s : sentences) {
        if (!s.contains("tape")) continue;
        for (const json& op : s["tape"]["ops"]) {
            const std::string name = op;
            if (maths.contains(name)) continue;
            const OpMaths* entry = find_op_maths(name);
            if (!entry) continue;  // a leaf ("parameter"): no maths
            json blocks = json::array();
            for (const OpMathsBlock& b : entry->blocks) blocks.push_back({b.file, b.text});
            maths[name] = blocks;
        }
    }
    return maths;
}

}  // namespace seqgrad
