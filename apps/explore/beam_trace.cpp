#include "apps/explore/beam_trace.h"

#include <cmath>

namespace seqgrad {

const char* node_status_name(NodeStatus status) {
    switch (status) {
        case NodeStatus::root:
            return "root";
        case NodeStatus::kept:
            return "kept";
        case NodeStatus::finished:
            return "finished";
        case NodeStatus::unfinished:
            return "unfinished";
        case NodeStatus::abandoned:
            return "abandoned";
        case NodeStatus::pruned:
            return "pruned";
        case NodeStatus::ngram_blocked:
            return "ngram_blocked";
        case NodeStatus::unk_suppressed:
            return "unk_suppressed";
        case NodeStatus::below_min_length:
            return "below_min_length";
        case NodeStatus::not_forced:
            return "not_forced";
    }
    return "?";
}

const char* stop_reason_name(StopReason reason) {
    switch (reason) {
        case StopReason::all_finished:
            return "all_finished";
        case StopReason::max_length:
            return "max_length";
        case StopReason::dead_end:
            return "dead_end";
        case StopReason::cannot_improve:
            return "cannot_improve";
    }
    return "?";
}

NodeStatus masked_status(TokenMask mask) {
    switch (mask) {
        case TokenMask::none:
            return NodeStatus::pruned;
        case TokenMask::ngram_blocked:
            return NodeStatus::ngram_blocked;
        case TokenMask::unk_suppressed:
            return NodeStatus::unk_suppressed;
        case TokenMask::below_min_length:
            return NodeStatus::below_min_length;
        case TokenMask::not_forced:
            return NodeStatus::not_forced;
    }
    return NodeStatus::pruned;
}

std::vector<int32_t> BeamTrace::prefix(int32_t node) const {
    std::vector<int32_t> tokens;
    for (int32_t n = node; n > 0; n = nodes.at(size_t(n)).parent)
        tokens.push_back(nodes[size_t(n)].token);
    return {tokens.rbegin(), tokens.rend()};
}

// ---- the recorder: beam search's calls, turned into the tree ---------------------------------

int32_t BeamTraceRecorder::add_node(BeamTrace& trace, int32_t parent, int32_t token,
                                    double token_log_prob, NodeStatus status) const {
    TraceNode node;
    node.parent = parent;
    node.step = trace.nodes[size_t(parent)].step + 1;
    node.token = token;
    node.token_log_prob = token_log_prob;
    node.log_prob = trace.nodes[size_t(parent)].log_prob + token_log_prob;
    node.length_penalty = length_penalty(node.step, options_);
    node.score = node.log_prob / node.length_penalty;
    node.status = status;
    trace.nodes.push_back(node);
    return int32_t(trace.nodes.size()) - 1;
}

void BeamTraceRecorder::started(size_t sentence, int max_length, const DecodeOptions& options) {
    options_ = options;
    if (traces.size() <= sentence) traces.resize(sentence + 1);
    if (expansions_.size() <= sentence) expansions_.resize(sentence + 1);
    BeamTrace& trace = traces[sentence] = BeamTrace{};
    expansions_[sentence].clear();
    trace.nodes.emplace_back();  // the root, node 0
    trace.beam_size = options.beam_size;
    trace.nbest = options.nbest;
    trace.max_length = max_length;
}

void BeamTraceRecorder::expanded(size_t sentence, int32_t prefix,
                                 const std::vector<SeenToken>& seen) {
    BeamTrace& trace = traces[sentence];
    const int32_t first = int32_t(trace.nodes.size());
    for (const SeenToken& t : seen)
        add_node(trace, prefix, t.token, t.log_prob, masked_status(t.mask));
    expansions_[sentence][prefix] = {first, int32_t(trace.nodes.size())};
}

void BeamTraceRecorder::selecting(size_t sentence) {
    BeamTrace& trace = traces[sentence];
    trace.predicted_ids.emplace_back();
    trace.beam_parent_ids.emplace_back();
    trace.scores.emplace_back();
    trace.selected_nodes.emplace_back();
}

// The node recorded by `expanded` (or a new one), marked kept or finished, and appended to the
// step's OpenNMT-style arrays.
int32_t BeamTraceRecorder::selected(size_t sentence, int32_t prefix, int32_t beam, int32_t token,
                                    double token_log_prob, double log_prob) {
    BeamTrace& trace = traces[sentence];
    int32_t node = -1;
    const auto range = expansions_[sentence].find(prefix);
    if (range != expansions_[sentence].end())
        for (int32_t id = range->second.first; id < range->second.second; ++id)
            if (trace.nodes[size_t(id)].token == token) node = id;
    if (node < 0) node = add_node(trace, prefix, token, token_log_prob, NodeStatus::kept);
    trace.nodes[size_t(node)].status =
        token == Vocab::EOS ? NodeStatus::finished : NodeStatus::kept;
    trace.predicted_ids.back().push_back(token);
    trace.beam_parent_ids.back().push_back(beam);
    trace.scores.back().push_back(log_prob);
    trace.selected_nodes.back().push_back(node);
    return node;
}

// The hypothesis' final score (with the coverage penalty); an unfinished one gets its status.
void BeamTraceRecorder::ended(size_t sentence, int32_t prefix, const Hypothesis& h) {
    if (prefix == 0) return;  // a dead end at the root: nothing was expanded
    TraceNode& n = traces[sentence].nodes[size_t(prefix)];
    if (!h.finished) n.status = NodeStatus::unfinished;
    n.score = h.score;
    n.coverage = h.score - h.log_prob / n.length_penalty;
}

void BeamTraceRecorder::stopped(size_t sentence, StopReason reason,
                                const std::vector<int32_t>& live) {
    BeamTrace& trace = traces[sentence];
    trace.stop_reason = reason;
    if (reason == StopReason::cannot_improve)
        for (int32_t node : live) trace.nodes[size_t(node)].status = NodeStatus::abandoned;
}

void BeamTraceRecorder::ranked(size_t sentence, const std::vector<int32_t>& nbest) {
    BeamTrace& trace = traces[sentence];
    for (size_t r = 0; r < nbest.size(); ++r) {
        trace.nbest_nodes.push_back(nbest[r]);
        if (nbest[r] > 0) trace.nodes[size_t(nbest[r])].rank = int32_t(r + 1);
    }
    expansions_[sentence].clear();
}

namespace {

// A log-probability for JSON: -inf (a masked token the model gave probability 0) becomes null,
// since JSON has no infinity; others are rounded to 6 decimals.
nlohmann::json trace_number(double x) {
    if (!std::isfinite(x)) return nullptr;
    return std::round(x * 1e6) / 1e6;
}

}  // namespace

nlohmann::json beam_trace_json(const BeamTrace& trace, const std::vector<std::string>& token_text) {
    auto text = [&](int32_t id) -> std::string {
        if (id >= 0 && size_t(id) < token_text.size()) return token_text[size_t(id)];
        return id < 0 ? "<s>" : "?";
    };
    using nlohmann::json;
    json j;
    j["beam_size"] = trace.beam_size;
    j["nbest"] = trace.nbest;
    j["max_length"] = trace.max_length;
    j["stop_reason"] = stop_reason_name(trace.stop_reason);
    j["predicted_ids"] = trace.predicted_ids;
    j["beam_parent_ids"] = trace.beam_parent_ids;
    json scores = json::array(), predicted_tokens = json::array();
    for (size_t t = 0; t < trace.predicted_ids.size(); ++t) {
        json step_scores = json::array(), step_tokens = json::array();
        for (size_t i = 0; i < trace.predicted_ids[t].size(); ++i) {
            step_scores.push_back(trace_number(trace.scores[t][i]));
            step_tokens.push_back(text(trace.predicted_ids[t][i]));
        }
        scores.push_back(step_scores);
        predicted_tokens.push_back(step_tokens);
    }
    j["scores"] = scores;
    j["predicted_tokens"] = predicted_tokens;
    j["selected_nodes"] = trace.selected_nodes;
    j["nbest_nodes"] = trace.nbest_nodes;
    json nodes = {{"parent", json::array()},
                  {"step", json::array()},
                  {"token", json::array()},
                  {"text", json::array()},
                  {"token_log_prob", json::array()},
                  {"log_prob", json::array()},
                  {"length_penalty", json::array()},
                  {"coverage", json::array()},
                  {"score", json::array()},
                  {"status", json::array()},
                  {"rank", json::array()}};
    for (const TraceNode& n : trace.nodes) {
        nodes["parent"].push_back(n.parent);
        nodes["step"].push_back(n.step);
        nodes["token"].push_back(n.token);
        nodes["text"].push_back(text(n.token));
        nodes["token_log_prob"].push_back(trace_number(n.token_log_prob));
        nodes["log_prob"].push_back(trace_number(n.log_prob));
        nodes["length_penalty"].push_back(trace_number(n.length_penalty));
        nodes["coverage"].push_back(trace_number(n.coverage));
        nodes["score"].push_back(trace_number(n.score));
        nodes["status"].push_back(node_status_name(n.status));
        nodes["rank"].push_back(n.rank);
    }
    j["nodes"] = nodes;
    return j;
}

}  // namespace seqgrad
