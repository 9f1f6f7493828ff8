#include "apps/explore/explore_runs.h"

#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {
namespace {

// A sentence quoted for an error message, cut at 80 bytes (on a UTF-8 boundary).
std::string quoted(const std::string& text) {
    if (text.size() <= 80) return "\"" + text + "\"";
    size_t cut = 80;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return "\"" + text.substr(0, cut) + "...\"";
}

}  // namespace

void check_same_test_set(const std::string& run_a, const ExploreInput& a, const std::string& run_b,
                         const ExploreInput& b) {
    const std::string prefix =
        fmt::format("explore: runs {} and {} do not share a test set ({} / {})", run_a, run_b,
                    a.origin, b.origin);
    const size_t n = std::min(a.sources.size(), b.sources.size());
    for (size_t i = 0; i < n; ++i) {
        if (a.sources[i] != b.sources[i])
            throw Error(fmt::format("{}: line {} differs: source {} in {}, {} in {}", prefix, i + 1,
                                    quoted(a.sources[i]), run_a, quoted(b.sources[i]), run_b));
        const bool refs = !a.references.empty() && !b.references.empty();
        if (refs && a.references[i] != b.references[i])
            throw Error(fmt::format("{}: line {} differs: reference {} in {}, {} in {}", prefix,
                                    i + 1, quoted(a.references[i]), run_a, quoted(b.references[i]),
                                    run_b));
    }
    if (a.sources.size() != b.sources.size())
        throw Error(
            fmt::format("{}: {} has {} sentences, {} has {}; line {} is the first one "
                        "only one of them has",
                        prefix, run_a, a.sources.size(), run_b, b.sources.size(), n + 1));
    if (a.references.empty() != b.references.empty())
        throw Error(fmt::format("{}: {} has references, {} has none", prefix,
                                a.references.empty() ? run_b : run_a,
                                a.references.empty() ? run_a : run_b));
}

nlohmann::json explore_runs_data(std::vector<nlohmann::json> runs) {
    if (runs.empty()) throw Error("explore: no run to show");
    if (runs.size() == 1) return std::move(runs[0]);
    nlohmann::json list = nlohmann::json::array();
    for (nlohmann::json& run : runs) list.push_back(std::move(run));
    return {{"runs", std::move(list)}};
}

}  // namespace seqgrad
