#include "apps/explore/explore_attention.h"

#include <cmath>

#include "apps/attention/transformer_attention.h"

namespace seqgrad {
namespace {

using nlohmann::json;

// [layer][head][row][column] in thousandths: 3 decimals, as hypothesis_json rounds the attention,
// written as integers ("65", not "0.065": the file's largest part, 45% smaller)
json rounded(const std::vector<std::vector<WeightRows>>& layers) {
    json out = json::array();
    for (const std::vector<WeightRows>& heads : layers) {
        json l = json::array();
        for (const WeightRows& rows : heads) {
            json k = json::array();
            for (const std::vector<double>& row : rows) {
                json r = json::array();
                for (double w : row) r.push_back(std::lround(w * 1e3));
                k.push_back(std::move(r));
            }
            l.push_back(std::move(k));
        }
        out.push_back(std::move(l));
    }
    return out;
}

}  // namespace

json transformer_meta(const LoadedRun& run) {
    const ModelConfig& m = run.config.model;
    if (m.kind != "transformer") return nullptr;
    return {{"encoder_layers", m.encoder_layers},
            {"decoder_layers", m.decoder_layers},
            {"heads", m.heads},
            {"d_model", m.d_model},
            {"ff_size", m.ff_size},
            {"norm_first", m.norm_first},
            {"positional", m.positional}};
}

void add_transformer_attention(const LoadedRun& run, const std::vector<std::string>& sources,
                               const std::vector<Translation>& beams,
                               const std::vector<Translation>& greedies, json& sentences) {
    if (run.config.model.kind != "transformer") return;  // per layer and head: its layers only
    const TranslationModel* model = run.model.get();
    for (size_t i = 0; i < sources.size(); ++i) {
        const Translation &b = beams[i], &g = greedies[i];
        if (b.source_tokens.empty() || b.nbest.empty() || g.nbest.empty()) continue;
        const std::vector<int32_t> source = run.task.encode_source(sources[i]);
        const TransformerAttention best = transformer_attention(*model, source, b.nbest[0].tokens);
        json t = {{"encoder", rounded(best.encoder)},
                  {"best", {{"decoder", rounded(best.decoder)}, {"cross", rounded(best.cross)}}}};
        if (g.nbest[0].tokens != b.nbest[0].tokens) {
            const TransformerAttention greedy =
                transformer_attention(*model, source, g.nbest[0].tokens);
            t["greedy"] = {{"decoder", rounded(greedy.decoder)}, {"cross", rounded(greedy.cross)}};
        }
        sentences[i]["transformer"] = std::move(t);
    }
}

}  // namespace seqgrad
