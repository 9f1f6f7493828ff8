#include "apps/attention/transformer_attention.h"

#include <fmt/format.h>

#include "seqgrad/data/batching.h"
#include "seqgrad/data/vocab.h"

namespace seqgrad {
namespace {

// Head `head`, query `query` of weights [1, h, T, S]: its first `columns` entries.
std::vector<double> row_of(const Tensor& weights, int64_t head, int64_t query, int64_t columns) {
    const int64_t T = weights.size(2), S = weights.size(3);
    const real* row = weights.data() + (head * T + query) * S;
    return std::vector<double>(row, row + columns);
}

// [layers][heads] lists of rows, all empty
std::vector<std::vector<WeightRows>> empty_layers(size_t layers, int64_t heads) {
    return std::vector<std::vector<WeightRows>>(layers, std::vector<WeightRows>(size_t(heads)));
}

}  // namespace

TransformerAttention transformer_attention(const TranslationModel& model,
                                           const std::vector<int32_t>& source,
                                           const std::vector<int32_t>& output) {
    if (source.empty() || output.empty())
        throw Error(
            fmt::format("transformer_attention: a source of {} tokens and an output of {}: "
                        "both need at least one (EOS)",
                        source.size(), output.size()));
    NoGradGuard no_grad;
    const int64_t S = int64_t(source.size()), T = int64_t(output.size());
    const Batch batch = make_batch({{source, output}}, {0});
    TransformerAttention a;

    // Encoder self-attention: the teacher-forced pass's record, [1, h, S, S] per layer.
    ForwardRecord record;
    model.forward_loss(batch, LossOptions{}, &record);
    if (record.encoder_self_attention.empty())
        throw Error("transformer_attention: the model has no multi-head attention layers");
    const int64_t h = record.encoder_self_attention[0].size(1);
    a.encoder = empty_layers(record.encoder_self_attention.size(), h);
    for (size_t l = 0; l < a.encoder.size(); ++l)
        for (int64_t k = 0; k < h; ++k)
            for (int64_t i = 0; i < S; ++i)
                a.encoder[l][k].push_back(row_of(record.encoder_self_attention[l], k, i, S));

    // The decoder's: step by step, fed SOS then the output's own tokens, as decoding fed them.
    const size_t decoder_layers = record.decoder_cross_attention.size();
    a.decoder = empty_layers(decoder_layers, h);
    a.cross = empty_layers(decoder_layers, h);
    std::unique_ptr<DecoderState> state = model.start_decoding(batch);
    state->keep_layer_attention = true;  // every layer's weights, head by head
    int32_t previous = Vocab::SOS;
    for (int64_t t = 0; t < T; ++t) {
        const StepResult r = model.step({previous}, *state);
        for (size_t l = 0; l < decoder_layers; ++l)
            for (int64_t k = 0; k < h; ++k) {
                a.decoder[l][k].push_back(row_of(r.self_attention[l], k, 0, t + 1));  // [1,h,1,t+1]
                a.cross[l][k].push_back(row_of(r.cross_attention[l], k, 0, S));       // [1,h,1,S]
            }
        previous = output[size_t(t)];
    }
    return a;
}

// mean_k w^(k)_ts over the heads k
WeightRows mean_over_heads(const std::vector<WeightRows>& heads) {
    if (heads.empty()) throw Error("mean_over_heads: no heads");
    WeightRows mean = heads[0];
    for (size_t k = 1; k < heads.size(); ++k)
        for (size_t t = 0; t < mean.size(); ++t)
            for (size_t s = 0; s < mean[t].size(); ++s) mean[t][s] += heads[k].at(t).at(s);
    for (std::vector<double>& row : mean)
        for (double& w : row) w /= double(heads.size());
    return mean;
}

}  // namespace seqgrad
