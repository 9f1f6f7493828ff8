// BeamTrace: everything beam search considered for one sentence, as a tree. BeamTraceRecorder
// builds it as beam search's observer (models/decoding/beam_observer.h, handed to beam_search
// in BeamSearchExtras::observer or to translate() in TranslateExtras::observer); beam search
// itself knows nothing of it. `seqgrad translate --trace` writes it as JSON lines, `seqgrad
// explore` draws it.
//
// The tree. Node 0 is the start symbol (step 0, the empty prefix). At step t every live beam b
// is EXPANDED: its candidates b·v become children of b's node, with
//   token_log_prob = log p(v | b, x)            (the model's output for that row)
//   log_prob       = L(b) + token_log_prob      (the running sum, what selection ranks by)
// Not every token of the vocabulary is recorded, only the ones a reader needs: the
// `kTraceAlternatives` most probable tokens of each expanded beam (masked ones included, with
// the reason they were masked), plus every candidate the search selected. PAD and SOS, which are
// never outputs, are left out.
//
// What happened to each node is its NodeStatus; the finished hypotheses the search returned
// carry their rank in the n-best (1 = the translation). The length penalty lp(n), the coverage
// penalty and score = log_prob / lp + coverage are stored for every node so that a reader can
// see what normalisation changes; coverage is only known for hypotheses that ended (finished or
// unfinished) and is 0 elsewhere.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqgrad/models/decoding/beam_observer.h"
#include "seqgrad/models/decoding/decoding.h"

namespace seqgrad {

// The most probable next tokens recorded for every expanded beam (besides the selected ones).
constexpr int kTraceAlternatives = 5;

enum class NodeStatus : uint8_t {
    root,              // node 0: the start symbol
    kept,              // selected, stayed live and was expanded at the next step
    finished,          // selected and ended with EOS: a finished hypothesis (rank > 0: n-best)
    unfinished,        // live when the length limit (or a dead end) stopped the search: it
                       // competed by score as an unfinished hypothesis (rank > 0: n-best)
    abandoned,         // live when the search stopped early: no continuation could beat the
                       // n-best any more
    pruned,            // allowed, but fell out of the top K of its step
    ngram_blocked,     // masked: would repeat an n-gram (DecodeOptions::no_repeat_ngram_size)
    unk_suppressed,    // masked: UNK with DecodeOptions::suppress_unk
    below_min_length,  // masked: EOS before DecodeOptions::min_length tokens
    not_forced,        // not the token of the forced target prefix (BeamSearchExtras)
};
// The status of a token masked for `mask` (pruned, tentatively, when it was allowed).
NodeStatus masked_status(TokenMask mask);
// "kept", "finished", ..., the names used in the JSON and the HTML.
const char* node_status_name(NodeStatus status);

// "all_finished", "max_length", ... (StopReason, models/decoding/beam_observer.h).
const char* stop_reason_name(StopReason reason);

struct TraceNode {
    int32_t parent = -1;  // node id; -1 for the root
    int32_t step = 0;     // = number of output tokens of this prefix
    int32_t token = -1;   // the last token (-1 for the root)
    double token_log_prob = 0;
    double log_prob = 0;        // running sum
    double length_penalty = 1;  // lp(step)
    double coverage = 0;        // coverage penalty (<= 0), only for ended hypotheses
    double score = 0;           // log_prob / length_penalty + coverage
    NodeStatus status = NodeStatus::root;
    int32_t rank = 0;  // 1-based rank in the returned n-best, 0 = not returned
};

struct BeamTrace {
    std::vector<TraceNode> nodes;  // node 0 is the root; children come after their parent
    // Per step t = 1..steps, the selected candidates in selection order (OpenNMT's beam dump
    // and Sockeye's beam_store name these arrays the same way):
    std::vector<std::vector<int32_t>> predicted_ids;    // token ids
    std::vector<std::vector<int32_t>> beam_parent_ids;  // index into the previous step's live
                                                        // beams (the kept ones, in order)
    std::vector<std::vector<double>> scores;            // running log-probabilities
    std::vector<std::vector<int32_t>> selected_nodes;   // the node ids of the same candidates
    std::vector<int32_t> nbest_nodes;                   // the returned hypotheses, best first
    StopReason stop_reason = StopReason::all_finished;
    int32_t beam_size = 0, nbest = 0, max_length = 0;  // the sentence's K, n-best and limit M

    int32_t steps() const { return int32_t(predicted_ids.size()); }
    // The tokens from the root to `node` (its prefix), without SOS.
    std::vector<int32_t> prefix(int32_t node) const;
};

// Beam search's observer that records one BeamTrace per sentence, in `traces` (numbered as the
// sentences of the search, or of translate()'s inputs).
class BeamTraceRecorder : public BeamObserver {
  public:
    std::vector<BeamTrace> traces;

    int alternatives() const override { return kTraceAlternatives; }
    void started(size_t sentence, int max_length, const DecodeOptions& options) override;
    void expanded(size_t sentence, int32_t prefix, const std::vector<SeenToken>& seen) override;
    void selecting(size_t sentence) override;
    int32_t selected(size_t sentence, int32_t prefix, int32_t beam, int32_t token,
                     double token_log_prob, double log_prob) override;
    void ended(size_t sentence, int32_t prefix, const Hypothesis& h) override;
    void stopped(size_t sentence, StopReason reason, const std::vector<int32_t>& live) override;
    void ranked(size_t sentence, const std::vector<int32_t>& nbest) override;

  private:
    // A new node: child of `parent` by `token`.
    int32_t add_node(BeamTrace& trace, int32_t parent, int32_t token, double token_log_prob,
                     NodeStatus status) const;
    DecodeOptions options_;
    // Per sentence: each expanded node's children recorded by `expanded`, as the range
    // [first, last) of node ids.
    std::vector<std::map<int32_t, std::pair<int32_t, int32_t>>> expansions_;
};

// The trace as one JSON object (the schema is in docs/beam-search.md). `token_text` turns a
// target id into its text; per-step arrays and per-node columns are written as parallel arrays.
nlohmann::json beam_trace_json(const BeamTrace& trace, const std::vector<std::string>& token_text);

}  // namespace seqgrad
