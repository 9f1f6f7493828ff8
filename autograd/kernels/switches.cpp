#include "seqgrad/autograd/kernels/switches.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "seqgrad/autograd/buffer_pool.h"
#include "seqgrad/autograd/error.h"

namespace seqgrad {

Switches parse_disabled(const char* list) {
    Switches s;
    const std::vector<std::pair<const char*, bool*>> names{
        {"fused_gru", &s.fused_gru},       {"fused_attention", &s.fused_attention},
        {"shared_steps", &s.shared_steps}, {"packed", &s.packed},
        {"small_m", &s.small_m},           {"buffer_pool", &s.buffer_pool},
        {"fused_lstm", &s.fused_lstm},     {"fused_rnn", &s.fused_rnn}};
    if (list) {
        std::stringstream in(list);
        std::string name;
        while (std::getline(in, name, ',')) {
            if (name.empty()) continue;
            bool found = false;
            for (auto& [known, flag] : names)
                if (name == known) *flag = false, found = true;
            if (!found) {
                std::string known_names;
                for (auto& [known, flag] : names)
                    known_names += (known_names.empty() ? "" : ", ") + std::string(known);
                // the model-level rungs of the ladder are options of bench/train_throughput
                const bool rung = name == "fused_loss" || name == "real_tokens" ||
                                  name == "one_projection" || name == "cached_keys" ||
                                  name == "shrink_batch" || name == "sort_by_length";
                throw Error(fmt::format(
                    "SEQGRAD_DISABLE: unknown name '{}' (known: {}){}", name, known_names,
                    rung ? "; the loss and decoder variants of the performance ladder are "
                           "bench/train_throughput --ladder-off NAME,... (docs/performance.md)"
                         : ""));
            }
        }
    }
    return s;
}

namespace {

Switches read_switches() {
    Switches s = parse_disabled(std::getenv("SEQGRAD_DISABLE"));
    if (std::getenv("SEQGRAD_NO_PACKED")) s.packed = false;
    s.gemm_profile = std::getenv("SEQGRAD_GEMM_PROFILE") != nullptr;
    return s;
}

// Hands the switches that belong to a part of the library which reads no setting of its own
// to that part: the buffer pool's reuse.
void apply(const Switches& s) {
    buffer_pool_set_enabled(s.buffer_pool);
}

Switches& current() {
    static Switches s = [] {
        Switches read = read_switches();
        apply(read);
        return read;
    }();
    return s;
}

}  // namespace

const Switches& switches() {
    return current();
}

void set_switches(const Switches& s) {
    current() = s;
    apply(s);
}

}  // namespace seqgrad
