// Scope labels for the recorded graph: which module and time step each op belongs to, for the
// explorer's view of one sentence's graph (apps/explore/explore_tape.h).
//
// The model code names its scopes with one line each:
//   TapeScope scope("decoder", t);   // the ops below, until the end of the block: decoder step t
//   TapeScope scope("attention");    // module "attention", the enclosing scope's step
//   TapeScope scope(t);              // the enclosing scope's module, step t
// While a TapeRecording is alive on a thread, every op recorded on that thread (record() in
// autograd/tensor.h) is labelled with the innermost scope. Without one, a TapeScope costs one
// thread-local read and does nothing else, and record() one more read.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace seqgrad {

struct Node;

struct TapeLabel {
    const char* module = nullptr;  // nullptr: recorded outside every scope
    int step = -1;                 // -1: no time step
};

class TapeScope {
  public:
    explicit TapeScope(const char* module);  // this module, the enclosing step
    TapeScope(const char* module, int64_t step);
    explicit TapeScope(int64_t step);  // the enclosing module, this step
    ~TapeScope();
    TapeScope(const TapeScope&) = delete;
    TapeScope& operator=(const TapeScope&) = delete;

  private:
    void enter(const char* module, int64_t step);
    TapeLabel previous_;
    bool active_ = false;
};

// Labels the nodes recorded on this thread while it is alive (recordings nest: the innermost
// one labels). Read the labels before the graph is freed: they are keyed by node address.
class TapeRecording {
  public:
    TapeRecording();
    ~TapeRecording();
    TapeRecording(const TapeRecording&) = delete;
    TapeRecording& operator=(const TapeRecording&) = delete;

    // The scope `node` was recorded in; {nullptr, -1} for a node not recorded during this
    // recording (a leaf, a parameter).
    TapeLabel label(const Node& node) const;

    // Called by record() for each node it records (a no-op when no recording is on).
    static void note(const Node& node);

  private:
    std::unordered_map<const Node*, TapeLabel> labels_;
    TapeRecording* previous_;
    TapeLabel previous_scope_;
};

}  // namespace seqgrad
