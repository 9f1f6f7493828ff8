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

json saliency_json(const LoadedRun& run, const std::string& source, const Hypothesis& h,
                   bool integrated, int steps) {
    SaliencyOptions options;
    options.integrated_gradients = integrated;
    options.steps = steps;
    const Saliency s =
        compute_saliency(*run.model, run.task.encode_source(source), h.tokens, options);
    json j = {{"grad_norm", matrix(s.grad_norm)},
              {"grad_input", matrix(s.grad_input)},
              {"log_probs", vector_json(s.log_probs)}};
    if (integrated) {
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

json gradflow_json(const LoadedRun& run, const std::string& source,
                   const std::vector<int32_t>& target, const std::string& target_name) {
    Seq2Seq& model = *run.model;
    std::vector<EncodedPair> pairs{{run.task.encode_source(source), target}};
    const FlowMeasurement m = measure_gradient_flow(model, make_batch(pairs, {0}));
    for (Tensor p : model.parameters()) p.zero_grad();
    return {{"target", target_name},
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
