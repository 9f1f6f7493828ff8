#include "seqgrad/autograd/tape_scope.h"

namespace seqgrad {
namespace {
thread_local TapeRecording* g_recording = nullptr;
thread_local TapeLabel g_scope;
}  // namespace

TapeScope::TapeScope(const char* module) {
    if (g_recording) enter(module, g_scope.step);
}
TapeScope::TapeScope(const char* module, int64_t step) {
    if (g_recording) enter(module, step);
}
TapeScope::TapeScope(int64_t step) {
    if (g_recording) enter(g_scope.module, step);
}
void TapeScope::enter(const char* module, int64_t step) {
    active_ = true;
    previous_ = g_scope;
    g_scope = {module, int(step)};
}
TapeScope::~TapeScope() {
    if (active_) g_scope = previous_;
}

TapeRecording::TapeRecording() : previous_(g_recording), previous_scope_(g_scope) {
    g_recording = this;
    g_scope = {};
}
TapeRecording::~TapeRecording() {
    g_recording = previous_;
    g_scope = previous_scope_;
}

TapeLabel TapeRecording::label(const Node& node) const {
    const auto it = labels_.find(&node);
    return it == labels_.end() ? TapeLabel{} : it->second;
}

void TapeRecording::note(const Node& node) {
    if (g_recording) g_recording->labels_[&node] = g_scope;
}

}  // namespace seqgrad
