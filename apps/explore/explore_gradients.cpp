#include "apps/explore/explore_gradients.h"

#include <fmt/format.h>

#include <cmath>

#include "apps/studies/gradflow.h"
#include "apps/studies/saliency.h"
#include "seqgrad/data/batching.h"

namespace seqgrad {
namespace {

using nlohmann::json;

json matrix(const std::vector<std::vector<double>>& m) {
    json out = json::array();
    for (const auto& row : m) {
        json r = json::array();
        for (double v : row) r.push_back(significant(v));
        out.push_back(r);
    }
    return out;
}

json vector_json(const std::vector<double>& v) {
    json out = json::array();
    for (double x : v) out.push_back(significant(x));
    return out;
}

}  // namespace

json significant(double x) {
    if (!std::isfinite(x)) return nullptr;
    if (x == 0) return 0;
    return std::stod(fmt::format("{:.3g}", x));
}

namespace {

json one_saliency(const Saliency& s, const Hypothesis& h) {
    json j = {{"grad_norm", matrix(s.grad_norm)},
              {"grad_input", matrix(s.grad_input)},
              {"log_probs", vector_json(s.log_probs)}};
    if (!s.integrated_gradients.empty()) {
        j["integrated_gradients"] = matrix(s.integrated_gradients);
        double worst = 0;
        for (size_t t = 0; t < s.integrated_gradients.size(); ++t) {
            double total = 0;
            for (double v : s.integrated_gradients[t]) total += v;
            worst = std::max(worst, std::fabs(total - (s.log_probs[t] - s.baseline_log_probs[t])));
        }
        j["integrated_check"] = significant(worst);
    }
    if (!h.attention.empty() && h.attention.size() == h.tokens.size()) {
        std::vector<std::vector<double>> attention;
        for (const std::vector<float>& row : h.attention)
            attention.emplace_back(row.begin(), row.end());
        const Agreement a = attention_agreement(attention, s.grad_norm);
        json spearman = json::array();
        for (double r : a.spearman) spearman.push_back(std::round(r * 1000) / 1000);
        j["agreement"] = {{"method", "grad_norm"},
                          {"argmax", a.argmax_agrees},
                          {"spearman", spearman},
                          {"argmax_share", std::round(a.argmax_share * 1000) / 1000},
                          {"mean_spearman", std::round(a.mean_spearman * 1000) / 1000}};
    }
    return j;
}

}  // namespace

std::vector<json> saliency_json(const LoadedRun& run, const std::vector<std::string>& sources,
                                const std::vector<Translation>& translations,
                                const GradientViewOptions& options) {
    // Sentences in groups of this many per call (their rows share batches of compute_saliency)
    constexpr size_t kGroup = 16;
    std::vector<json> out(sources.size());
    std::vector<size_t> pending;
    bool pending_integrated = false;
    auto flush = [&] {
        if (pending.empty()) return;
        std::vector<SaliencyInput> inputs;
        for (size_t i : pending)
            inputs.push_back({run.task.encode_source(sources[i]), translations[i].nbest[0].tokens});
        SaliencyOptions o;
        o.integrated_gradients = pending_integrated;
        o.steps = options.integrated_steps;
        const std::vector<Saliency> s = compute_saliency(*run.model, inputs, o);
        for (size_t k = 0; k < pending.size(); ++k)
            out[pending[k]] = one_saliency(s[k], translations[pending[k]].nbest[0]);
        pending.clear();
    };
    for (size_t i = 0; i < sources.size(); ++i) {
        const Translation& t = translations[i];
        if (int(i) >= options.sentences) break;
        if (t.source_tokens.empty() || t.nbest.empty() || t.nbest[0].tokens.empty()) continue;
        const bool integrated = int(i) < options.integrated_sentences;
        if (integrated != pending_integrated || pending.size() == kGroup) flush();
        pending_integrated = integrated;
        pending.push_back(i);
    }
    flush();
    return out;
}

json gradflow_json(const LoadedRun& run, const std::string& source,
                   const std::vector<int32_t>& target, const std::string& target_name) {
    std::vector<EncodedPair> pairs{{run.task.encode_source(source), target}};
    const Batch batch = make_batch(pairs, {0});
    const FlowMeasurement m = measure_gradient_flow(*run.model, batch, false);
    for (Tensor p : run.model->parameters()) p.zero_grad();
    return {{"target", target_name},
            {"kind", run.config.model.kind == "transformer" ? "transformer" : "rnn"},
            {"loss", significant(m.loss)},
            {"hidden", vector_json(m.hidden)},
            {"direct", vector_json(m.direct)},
            {"recurrent", vector_json(m.recurrent)},
            {"embedding", vector_json(m.embedding)},
            {"groups",
             {{"encoder", significant(m.groups.encoder)},
              {"attention", significant(m.groups.attention)},
              {"decoder", significant(m.groups.decoder)},
              {"output", significant(m.groups.output)},
              {"total", significant(m.groups.total)}}}};
}

}  // namespace seqgrad
