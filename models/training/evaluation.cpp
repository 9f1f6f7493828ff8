#include "seqgrad/models/training/evaluation.h"

#include <algorithm>

#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/training/progress_line.h"
#include "seqgrad/models/training/signals.h"

namespace seqgrad {
namespace {

// Greedy translations of `sources`, a chunk at a time so that Ctrl-C is heard between chunks.
// Returns fewer than sources.size() when a stop was requested.
std::vector<std::string> decode_greedy(const TranslationModel& model, const Task& task,
                                       const std::vector<std::string>& sources,
                                       const DecodeConfig& decode) {
    DecodeOptions greedy = decode_options_from(decode);
    greedy.beam_size = 1;
    constexpr size_t kChunk = 256;
    std::vector<std::string> hypotheses;
    for (size_t begin = 0; begin < sources.size() && !stop_requested(); begin += kChunk) {
        std::vector<std::string> chunk(
            sources.begin() + long(begin),
            sources.begin() + long(std::min(sources.size(), begin + kChunk)));
        for (const Translation& tr : translate(model, task, chunk, greedy))
            hypotheses.push_back(tr.text);
    }
    return hypotheses;
}

// The mean loss per real target token over the validation batches, teacher forced
double validation_loss(const TranslationModel& model, const Batcher& valid_batches) {
    double loss_sum = 0;
    int64_t tokens = 0;
    NoGradGuard no_grad;
    EpochIterator it(valid_batches, 0);
    while (it.has_next()) {
        Batch batch = it.next();
        LossOutput out = model.forward_loss(batch);
        loss_sum += out.loss.item() * double(out.num_tokens);
        tokens += out.num_tokens;
    }
    return loss_sum / std::max<int64_t>(tokens, 1);
}

}  // namespace

std::string metric_name(const Task& task) {
    return task.is_dates() ? "accuracy" : "bleu";
}

double best_metric_score(const Validation& v, const std::string& best_metric) {
    if (best_metric == "bleu") return v.metric;
    if (best_metric == "chrf") return v.chrf;
    return -v.loss;
}

Validation measure_validation(TranslationModel& model, const Task& task,
                              const Batcher& valid_batches, const Config& config) {
    model.eval();
    Validation v;
    v.loss = validation_loss(model, valid_batches);
    size_t n = std::min(task.valid.size(), size_t(config.train.max_valid_decode));
    std::vector<std::string> sources, references;
    for (size_t i = 0; i < n; ++i) {
        sources.push_back(task.valid[i].source);
        // the model writes normalised text: compare with the normalised reference
        references.push_back(task.pipeline.join(task.pipeline.tokens(task.valid[i].target)));
    }
    // Ctrl-C during the decoding: the metric of the sentences decoded so far
    const std::vector<std::string> hypotheses = decode_greedy(model, task, sources, config.decode);
    n = hypotheses.size();
    references.resize(n);
    if (n > 0) {
        if (task.is_dates()) {
            v.metric = 100.0 * exact_match_accuracy(hypotheses, references);
        } else {
            std::vector<std::string> normalized_refs;
            for (const auto& r : references)
                normalized_refs.push_back(task.pipeline.join(task.pipeline.tokens(r)));
            v.metric = corpus_bleu(hypotheses, {normalized_refs}).score;
            v.chrf = corpus_chrf(hypotheses, {normalized_refs}).score;
        }
    }
    model.train();
    v.decoded = n;
    return v;
}

TestResult measure_test(TranslationModel& model, const Task& task, const Config& config) {
    model.eval();
    std::vector<std::string> sources, references;
    for (const auto& p : task.test) {
        sources.push_back(p.source);
        references.push_back(task.pipeline.join(task.pipeline.tokens(p.target)));
    }
    TestResult r;
    r.sentences = sources.size();
    const auto start = Clock::now();
    const std::vector<std::string> hypotheses = decode_greedy(model, task, sources, config.decode);
    r.seconds = seconds_since(start);
    model.train();
    if (hypotheses.size() < sources.size()) return r;  // stopped: incomplete
    r.complete = true;
    r.metric = task.is_dates() ? 100.0 * exact_match_accuracy(hypotheses, references)
                               : corpus_bleu(hypotheses, {references}).score;
    return r;
}

}  // namespace seqgrad
