#include "seqgrad/models/decoding/beam_trace.h"

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

std::vector<int32_t> BeamTrace::prefix(int32_t node) const {
    std::vector<int32_t> tokens;
    for (int32_t n = node; n > 0; n = nodes.at(size_t(n)).parent)
        tokens.push_back(nodes[size_t(n)].token);
    return {tokens.rbegin(), tokens.rend()};
}

namespace {

// A log-probability for JSON: -inf (a masked token the model gave probability 0) becomes null,
// since JSON has no infinity; others are rounded to 6 decimals.
nlohmann::json rounded(double x) {
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
            step_scores.push_back(rounded(trace.scores[t][i]));
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
        nodes["token_log_prob"].push_back(rounded(n.token_log_prob));
        nodes["log_prob"].push_back(rounded(n.log_prob));
        nodes["length_penalty"].push_back(rounded(n.length_penalty));
        nodes["coverage"].push_back(rounded(n.coverage));
        nodes["score"].push_back(rounded(n.score));
        nodes["status"].push_back(node_status_name(n.status));
        nodes["rank"].push_back(n.rank);
    }
    j["nodes"] = nodes;
    return j;
}

}  // namespace seqgrad
