#include "seqgrad/models/decoding/translator.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace seqgrad {

DecodeOptions decode_options_from(const DecodeConfig& c) {
    DecodeOptions o;
    o.beam_size = c.beam_size;
    o.alpha = c.alpha;
    o.length_penalty = c.length_penalty == "none"      ? DecodeOptions::none
                       : c.length_penalty == "average" ? DecodeOptions::average
                                                       : DecodeOptions::gnmt;
    o.max_length = c.max_length;
    o.max_length_factor = c.max_length_factor;
    return o;
}

int64_t readable_length(const ModelConfig& config) {
    return config.kind == "transformer" && config.positional == "learned" ? config.max_positions
                                                                          : 0;
}

namespace {

// Fits source i (ids `encoded`, tokens `tokens`, both ending with <eos>) to what the model reads,
// as TranslateExtras asks; false when it is refused.
bool fit_source_length(const ModelConfig& config, const TranslateExtras& extras,
                       std::vector<int32_t>& encoded, std::vector<std::string>& tokens,
                       Translation& result) {
    const int64_t length = int64_t(encoded.size()), limit = readable_length(config);
    if (limit > 0 && length > limit) {
        if (extras.long_input == LongInput::refuse) {
            result.refused = true;
            result.length_note = fmt::format(
                "refused: {} tokens with <eos>, longer than the {} the model reads "
                "(model.max_positions)",
                length, limit);
            return false;
        }
        encoded.resize(size_t(limit - 1));
        encoded.push_back(Vocab::EOS);
        tokens.resize(size_t(limit - 1));
        tokens.push_back(std::string(Vocab::eos_token));
        result.length_note = fmt::format(
            "truncated: {} tokens with <eos>, longer than the {} the model reads "
            "(model.max_positions); the first {} are translated",
            length, limit, limit - 1);
    } else if (config.kind == "transformer" && config.positional == "sinusoidal" &&
               extras.trained_source_length > 0 && length > extras.trained_source_length) {
        result.length_note = fmt::format(
            "{} tokens with <eos>, longer than any in training (data.max_source_len {}): the "
            "sinusoidal positions go past the trained length; expect a worse translation",
            length, extras.trained_source_length);
    }
    return true;
}

// Beam search's observer for one batch of translate(): tells `to` about each sentence under its
// index among translate()'s inputs.
class Renumbered : public BeamObserver {
  public:
    Renumbered(BeamObserver* to, const std::vector<size_t>& inputs) : to_(to), inputs_(inputs) {}
    int alternatives() const override { return to_->alternatives(); }
    void started(size_t b, int max_length, const DecodeOptions& options) override {
        to_->started(inputs_[b], max_length, options);
    }
    void expanded(size_t b, int32_t prefix, const std::vector<SeenToken>& seen) override {
        to_->expanded(inputs_[b], prefix, seen);
    }
    void selecting(size_t b) override { to_->selecting(inputs_[b]); }
    int32_t selected(size_t b, int32_t prefix, int32_t beam, int32_t token, double token_log_prob,
                     double log_prob) override {
        return to_->selected(inputs_[b], prefix, beam, token, token_log_prob, log_prob);
    }
    void ended(size_t b, int32_t prefix, const Hypothesis& h) override {
        to_->ended(inputs_[b], prefix, h);
    }
    void stopped(size_t b, StopReason reason, const std::vector<int32_t>& live) override {
        to_->stopped(inputs_[b], reason, live);
    }
    void ranked(size_t b, const std::vector<int32_t>& nbest) override {
        to_->ranked(inputs_[b], nbest);
    }

  private:
    BeamObserver* to_;
    const std::vector<size_t>& inputs_;
};

// One batch's n-best: beam search with the extras (forced prefixes, the observer) when any is
// asked for, else greedy decoding at beam width 1 and beam search above. `inputs` are the
// batch's rows' indices among translate()'s sources.
std::vector<std::vector<Hypothesis>> decode_batch(const TranslationModel& model, const Batch& batch,
                                                  const DecodeOptions& options,
                                                  const TranslateExtras& extras,
                                                  const std::vector<size_t>& inputs) {
    std::unique_ptr<DecoderState> state = model.start_decoding(batch);
    if (extras.observer || !extras.forced_prefixes.empty()) {
        BeamSearchExtras beam_extras;
        if (!extras.forced_prefixes.empty())
            for (size_t i : inputs)
                beam_extras.forced_prefixes.push_back(extras.forced_prefixes[i]);
        Renumbered renumbered(extras.observer, inputs);
        if (extras.observer) beam_extras.observer = &renumbered;
        return beam_search(model, std::move(state), options, batch.src_lengths, beam_extras);
    }
    if (options.beam_size > 1)
        return beam_search(model, std::move(state), options, batch.src_lengths);
    std::vector<std::vector<Hypothesis>> nbest;
    for (Hypothesis& h : greedy_decode(model, std::move(state), options, batch.src_lengths))
        nbest.push_back({std::move(h)});
    return nbest;
}

}  // namespace

std::vector<Translation> translate(const TranslationModel& model, const Task& task,
                                   const std::vector<std::string>& sources,
                                   const DecodeOptions& options, int batch_size) {
    return translate(model, task, sources, options, TranslateExtras{}, batch_size);
}

std::vector<Translation> translate(const TranslationModel& model, const Task& task,
                                   const std::vector<std::string>& sources,
                                   const DecodeOptions& requested, const TranslateExtras& extras,
                                   int batch_size) {
    NoGradGuard no_grad;
    DecodeOptions options = requested;
    if (const int64_t limit = readable_length(model.config()); limit > 0)
        options.max_length = int(std::min<int64_t>(options.max_length, limit));
    if (!extras.forced_prefixes.empty() && extras.forced_prefixes.size() != sources.size())
        throw Error(fmt::format("translate: {} forced prefixes for {} sources",
                                extras.forced_prefixes.size(), sources.size()));
    std::vector<Translation> results(sources.size());
    std::vector<std::vector<int32_t>> encoded(sources.size());
    std::vector<size_t> order;
    for (size_t i = 0; i < sources.size(); ++i) {
        std::vector<std::string> tokens = task.pipeline.source_tokens(sources[i]);
        if (tokens.empty()) continue;  // an empty line translates to an empty line
        tokens.push_back(std::string(Vocab::eos_token));
        encoded[i] = task.encode_source(sources[i]);
        if (!fit_source_length(model.config(), extras, encoded[i], tokens, results[i])) continue;
        results[i].source_tokens = tokens;
        order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return encoded[a].size() < encoded[b].size(); });
    for (size_t start = 0; start < order.size(); start += size_t(batch_size)) {
        if (extras.stop && *extras.stop)
            throw Error(
                fmt::format("translate: interrupted after {} of {} sentences", start, order.size()),
                ErrorKind::interrupted);
        size_t end = std::min(order.size(), start + size_t(batch_size));
        const std::vector<size_t> inputs(order.begin() + std::ptrdiff_t(start),
                                         order.begin() + std::ptrdiff_t(end));
        std::vector<EncodedPair> pairs;
        std::vector<size_t> indices;
        for (size_t k = start; k < end; ++k) {
            pairs.push_back({encoded[order[k]], {Vocab::EOS}});
            indices.push_back(k - start);
        }
        std::vector<std::vector<Hypothesis>> nbest =
            decode_batch(model, make_batch(pairs, indices), options, extras, inputs);
        for (size_t k = start; k < end; ++k) {
            Translation& t = results[order[k]];
            t.nbest = std::move(nbest[k - start]);
            if (!t.nbest.empty()) t.text = task.decode_target(t.nbest[0].tokens);
        }
    }
    return results;
}

}  // namespace seqgrad
