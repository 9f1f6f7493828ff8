// Seq2Seq as a StepModel (models/model/step_model.h): the state beam search and greedy decoding
// carry from step to step, and one decoder step for every row of it.
#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/models/model/seq2seq.h"

namespace seqgrad {

// The decoder state's tensors (DecoderState::tensors): the per-row constants and the output step
// (each row's t, for the position bias) and the coverage c_t first, then h of every layer, then
// (LSTM) c of every layer.
namespace {
enum StateSlot : size_t {
    kFeed,
    kEncoderOutputs,
    kKeysProjected,
    kMask,
    kOutputStep,
    kCoverage,
    kLayers
};
}

DecoderState Seq2Seq::initial_state(const EncodedSource& source) const {
    const int64_t B = source.outputs.size(0), H = config_.hidden_size;
    DecoderState state;
    Tensor keys = source.keys_projected.defined() ? source.keys_projected : Tensor::zeros({B, 1});
    // c_0 = 0 (a [B,1] placeholder without coverage, reordered with the rest and never read)
    const int64_t S = decoder.has_coverage() ? source.outputs.size(1) : 1;
    state.tensors = {Tensor::zeros({B, H}), source.outputs,     keys,
                     source.mask,           Tensor::zeros({B}), Tensor::zeros({B, S})};
    for (const RecurrentState& layer : source.initial_state) state.tensors.push_back(layer.h);
    for (const RecurrentState& layer : source.initial_state)
        if (layer.c.defined()) state.tensors.push_back(layer.c);
    return state;
}

Seq2Seq::StateParts Seq2Seq::state_parts(const DecoderState& state) const {
    const size_t L = size_t(decoder.num_layers());
    if (state.tensors.size() != kLayers + L && state.tensors.size() != kLayers + 2 * L)
        throw Error(
            fmt::format("Seq2Seq::state_parts: a state of {} tensors for a decoder of {} "
                        "layers",
                        state.tensors.size(), L));
    return {state.tensors[kLayers + L - 1],
            state.tensors[kEncoderOutputs],
            state.tensors[kKeysProjected],
            state.tensors[kMask],
            state.tensors[kOutputStep],
            decoder.has_coverage() ? state.tensors[kCoverage] : Tensor()};
}

StepResult Seq2Seq::step(const std::vector<int32_t>& previous_tokens, DecoderState& state) const {
    const int64_t N = state.rows();
    if (int64_t(previous_tokens.size()) != N)
        throw Error(fmt::format("Seq2Seq::step: {} tokens for {} rows", previous_tokens.size(), N));
    const size_t L = size_t(decoder.num_layers());
    const size_t layer_tensors =
        state.tensors.size() - std::min<size_t>(state.tensors.size(), kLayers);
    if (layer_tensors != L && layer_tensors != 2 * L)
        throw Error(fmt::format("Seq2Seq::step: a state of {} tensors for a decoder of {} layers",
                                state.tensors.size(), L));
    const bool has_c = layer_tensors == 2 * L;  // an LSTM's cell states follow the h's
    std::vector<RecurrentState> layers(L);
    for (size_t l = 0; l < L; ++l) {
        layers[l].h = state.tensors[kLayers + l];
        if (has_c) layers[l].c = state.tensors[kLayers + L + l];
    }
    EncodedSource source;
    source.outputs = state.tensors[kEncoderOutputs];
    source.keys_projected = decoder.attention ? state.tensors[kKeysProjected] : Tensor();
    source.mask = state.tensors[kMask];
    Tensor embedded = decoder.embedding.forward(previous_tokens, {N});
    const Tensor coverage = decoder.has_coverage() ? state.tensors[kCoverage] : Tensor();
    Decoder::Step s = decoder.step(embedded, layers, state.tensors[kFeed], source,
                                   state.tensors[kOutputStep], coverage);
    state.tensors[kFeed] = s.output_state;
    if (s.coverage.defined()) state.tensors[kCoverage] = s.coverage;
    // the next output step of every row
    state.tensors[kOutputStep] = add(state.tensors[kOutputStep], real(1));
    for (size_t l = 0; l < L; ++l) {
        state.tensors[kLayers + l] = s.state[l].h;
        if (has_c) state.tensors[kLayers + L + l] = s.state[l].c;
    }
    StepResult result;
    result.log_probs = log_softmax(decoder.out.forward(s.projection_input));
    result.attention = s.attention_weights;
    return result;
}

}  // namespace seqgrad
