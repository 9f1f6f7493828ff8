// Seq2Seq as a StepModel (models/model/step_model.h): the state beam search and greedy decoding
// carry from step to step (Seq2SeqState), and one decoder step for every row of it.
#include <fmt/format.h>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/models/model/seq2seq.h"

namespace seqgrad {

std::unique_ptr<DecoderState> Seq2SeqState::select(const std::vector<int32_t>& rows) const {
    auto selected = std::make_unique<Seq2SeqState>(*this);  // step, flags; tensors replaced below
    for (Tensor* t : {&selected->feed, &selected->encoder_outputs, &selected->keys_projected,
                      &selected->mask, &selected->coverage})
        if (t->defined()) *t = select_rows(*t, rows, "Seq2SeqState");
    for (RecurrentState& layer : selected->layers) {
        layer.h = select_rows(layer.h, rows, "Seq2SeqState");
        if (layer.c.defined()) layer.c = select_rows(layer.c, rows, "Seq2SeqState");
    }
    return selected;
}

std::unique_ptr<Seq2SeqState> Seq2Seq::initial_state(const EncodedSource& source) const {
    const int64_t B = source.outputs.size(0), H = config_.hidden_size;
    auto state = std::make_unique<Seq2SeqState>();
    state->feed = Tensor::zeros({B, H});
    state->encoder_outputs = source.outputs;
    state->keys_projected = source.keys_projected;
    state->mask = source.mask;
    if (decoder.has_coverage()) state->coverage = Tensor::zeros({B, source.outputs.size(1)});
    state->layers = source.initial_state;
    return state;
}

StepResult Seq2Seq::step(const std::vector<int32_t>& previous_tokens, DecoderState& base) const {
    Seq2SeqState& state = state_of<Seq2SeqState>(base, "Seq2Seq::step");
    const int64_t N = state.rows();
    if (int64_t(previous_tokens.size()) != N)
        throw Error(fmt::format("Seq2Seq::step: {} tokens for {} rows", previous_tokens.size(), N));
    if (state.layers.size() != size_t(decoder.num_layers()))
        throw Error(fmt::format("Seq2Seq::step: a state of {} layers for a decoder of {} layers",
                                state.layers.size(), decoder.num_layers()));
    EncodedSource source;
    source.outputs = state.encoder_outputs;
    source.keys_projected = state.keys_projected;
    source.mask = state.mask;
    // each row's output step t, read by a position bias only
    const Tensor output_steps = decoder.attention && decoder.attention->position_bias != 0
                                    ? Tensor::full({N}, real(state.step))
                                    : Tensor();
    const Tensor embedded = decoder.embedding.forward(previous_tokens, {N});
    Decoder::Step s =
        decoder.step(embedded, state.layers, state.feed, source, output_steps, state.coverage);
    state.feed = s.output_state;
    if (s.coverage.defined()) state.coverage = s.coverage;
    state.layers = std::move(s.state);
    ++state.step;
    StepResult result;
    result.log_probs = log_softmax(decoder.out.forward(s.projection_input));
    result.attention = s.attention_weights;
    return result;
}

}  // namespace seqgrad
