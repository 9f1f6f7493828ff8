// The engine's door for the live page (`seqgrad explore RUN_DIR --live`, docs/live.md): C
// functions the page's worker calls with one JSON string and that answer with one JSON string,
// built only from the library's high-level functions — load_run, translate(), the explorer's
// data builders (apps/explore/explore_data.h) and the trainer's pieces (prepare_task, Batcher,
// train_step, Adam, clipping, measure_test).
//
// The worker writes the run's files (config.json, vocabularies or BPE codes, the weights) into
// the module's in-memory file system, then calls seqgrad_live_load("/run"). Every answer is an
// object; a failure is {"error": "..."} (the page shows it as text and keeps working).
//
//   seqgrad_live_load(dir)           {"meta": {...}, "max_source_tokens", "max_source_chars"}
//   seqgrad_live_sentence(request)   the explorer's data block for one sentence, every view
//   seqgrad_live_force(request)      the continuation after a forced prefix (what-if)
//   seqgrad_live_translate(request)  greedy and beam tokens of many sentences (tests, latency)
//   seqgrad_live_saliency(request)   as `seqgrad saliency --csv`: the hypothesis, its attention
//                                    and saliency (gradient norm, gradient x input), unrounded
//   seqgrad_live_train_start(config) a fresh model and its data, from a config (dates task)
//   seqgrad_live_train_steps(n)      n steps of train_step; the mean loss
//   seqgrad_live_train_measure(n)    exact match on the first n test sentences, and the
//                                    attention of one fixed sentence
//   seqgrad_live_train_save(path)    the weights as a checkpoint `seqgrad translate` reads
#include <emscripten/emscripten.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/attention/attention_report.h"
#include "apps/explore/explore_data.h"
#include "apps/studies/saliency.h"
#include "seqgrad/data/accuracy.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/train_step.h"
#include "seqgrad/optim/adam.h"

using nlohmann::json;
using namespace seqgrad;

namespace {

std::string answer_buffer;  // the last answer: valid until the next call

const char* answer(const json& j) {
    answer_buffer = j.dump(-1, ' ', false, json::error_handler_t::replace);
    return answer_buffer.c_str();
}

// Runs `fn`, turning any error into {"error": message}.
template <class Fn>
const char* guarded(Fn fn) {
    try {
        return answer(fn());
    } catch (const std::exception& e) {
        return answer({{"error", e.what()}});
    }
}

std::unique_ptr<LoadedRun> run;
constexpr size_t kMaxSourceChars = 1000;  // a typed sentence longer than this is refused

// The decode settings of a request: the run's config, overridden by the page's settings.
DecodeOptions decode_options(const json& request) {
    DecodeOptions d = decode_options_from(run->config.decode);
    d.beam_size = request.value("beam_size", d.beam_size >= 2 ? d.beam_size : 5);
    d.alpha = request.value("alpha", d.alpha);
    const std::string penalty = request.value("length_penalty", std::string());
    if (penalty == "none") d.length_penalty = DecodeOptions::none;
    if (penalty == "average") d.length_penalty = DecodeOptions::average;
    if (penalty == "gnmt") d.length_penalty = DecodeOptions::gnmt;
    d.no_repeat_ngram_size = request.value("no_repeat_ngram", d.no_repeat_ngram_size);
    if (d.beam_size < 1 || d.beam_size > 32)
        throw Error(fmt::format("beam width: expected 1 to 32, got {}", d.beam_size));
    if (d.no_repeat_ngram_size < 0)
        throw Error(fmt::format("n-gram block: expected n >= 0, got {}", d.no_repeat_ngram_size));
    if (!std::isfinite(d.alpha) || d.alpha < 0 || d.alpha > 5)
        throw Error(fmt::format("alpha: expected 0 to 5, got {}", d.alpha));
    d.nbest = std::min(request.value("nbest", 5), d.beam_size);
    return d;
}

// The source of a request, refused with a message the page shows when the model cannot take it.
std::string checked_source(const json& request) {
    if (!run) throw Error("no model loaded");
    const std::string source = request.at("source").get<std::string>();
    if (source.size() > kMaxSourceChars)
        throw Error(
            fmt::format("the sentence is too long: {} characters; this page takes at most {}",
                        source.size(), kMaxSourceChars));
    const size_t tokens = run->task.encode_source(source).size();
    const size_t most = size_t(run->config.data.max_source_len);
    if (most > 0 && tokens > most)
        throw Error(fmt::format(
            "the sentence is too long for this model: {} source tokens, and it was trained on at "
            "most {} (data.max_source_len)",
            tokens, most));
    return source;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---- training in the page ------------------------------------------------------------------
struct Training {
    Config config;
    Task task;
    std::unique_ptr<Rng> rng;
    std::unique_ptr<TranslationModel> model;
    std::unique_ptr<Adam> optimizer;
    std::unique_ptr<Batcher> batches;
    std::unique_ptr<EpochIterator> epoch;
    uint64_t epoch_number = 0;
    int64_t step = 0;
};
std::unique_ptr<Training> training;

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_load(const char* dir) {
    return guarded([&] {
        run = std::make_unique<LoadedRun>(load_run(dir));
        const ModelConfig& m = run->config.model;
        return json{{"task", run->task.is_dates() ? std::string("dates") : run->config.data.task},
                    {"model", m.kind == "rnn" ? m.cell : m.kind},
                    {"attention", m.attention},
                    {"hidden_size", m.hidden_size},
                    {"parameters", run->model->parameter_count()},
                    {"max_source_tokens", run->config.data.max_source_len},
                    {"max_source_chars", kMaxSourceChars}};
    });
}

// request: {"source", "beam_size", "alpha", "length_penalty", "no_repeat_ngram", "gradients"}
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_sentence(const char* request_text) {
    return guarded([&] {
        const json request = json::parse(request_text);
        const auto start = std::chrono::steady_clock::now();
        ExploreInput input;
        input.sources = {checked_source(request)};
        input.origin = "typed in the page";
        input.available = 1;
        ExploreOptions options;
        options.decode = decode_options(request);
        options.progress = false;
        options.gradients.enabled = request.value("gradients", true);
        options.gradients.integrated_sentences = request.value("integrated", 1);
        options.gradients.tape_sentences = request.value("tape", 1);
        json data = explore_data(*run, "live", input, options);
        data["seconds"] = seconds_since(start);
        return data;
    });
}

// request: {"source", "prefix": [ids], settings as above} -> the best continuation
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_force(const char* request_text) {
    return guarded([&] {
        const json request = json::parse(request_text);
        const auto start = std::chrono::steady_clock::now();
        DecodeOptions options = decode_options(request);
        options.nbest = 1;
        options.keep_attention = false;
        TranslateExtras extras;
        extras.forced_prefixes = {request.at("prefix").get<std::vector<int32_t>>()};
        for (int32_t id : extras.forced_prefixes[0])
            if (id < 0 || id >= int32_t(run->task.target_vocab.size()))
                throw Error(fmt::format("forced token {} is not in the target vocabulary", id));
        const Translation t =
            translate(*run->model, run->task, {checked_source(request)}, options, extras)[0];
        if (t.nbest.empty()) throw Error("nothing decoded");
        const Hypothesis& h = t.nbest[0];
        json texts = json::object();
        for (int32_t id : h.tokens)
            texts[std::to_string(id)] = display_token(run->task.target_vocab.token(id));
        return json{{"tokens", h.tokens},
                    {"text", t.text},
                    {"log_prob", h.log_prob},
                    {"score", h.score},
                    {"finished", h.finished},
                    {"target_tokens", texts},
                    {"seconds", seconds_since(start)}};
    });
}

// request: {"sources": [...], settings} -> {"greedy": [[ids]...], "beam": [[ids]...], "seconds"}
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_translate(const char* request_text) {
    return guarded([&] {
        if (!run) throw Error("no model loaded");
        const json request = json::parse(request_text);
        const std::vector<std::string> sources = request.at("sources");
        DecodeOptions beam = decode_options(request);
        beam.nbest = 1;
        beam.keep_attention = false;
        DecodeOptions greedy = beam;
        greedy.beam_size = 1;
        json out = json::object();
        for (auto [name, options] : {std::pair{"greedy", &greedy}, std::pair{"beam", &beam}}) {
            const auto start = std::chrono::steady_clock::now();
            json rows = json::array();
            for (const Translation& t : translate(*run->model, run->task, sources, *options))
                rows.push_back(t.nbest.empty() ? std::vector<int32_t>{} : t.nbest[0].tokens);
            out[name] = rows;
            out[std::string(name) + "_seconds"] = seconds_since(start);
        }
        return out;
    });
}

// request: {"source", settings} -> {"tokens", "attention", "grad_norm", "grad_input"}
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_saliency(const char* request_text) {
    return guarded([&] {
        const json request = json::parse(request_text);
        const std::string source = checked_source(request);
        DecodeOptions decode = decode_options(request);
        decode.nbest = 1;
        decode.keep_attention = true;
        const Translation t = translate(*run->model, run->task, {source}, decode)[0];
        if (t.nbest.empty() || t.nbest[0].tokens.empty()) throw Error("nothing decoded");
        const Hypothesis& best = t.nbest[0];
        const Saliency saliency =
            compute_saliency(*run->model, run->task.encode_source(source), best.tokens, {});
        return json{{"tokens", best.tokens},
                    {"source_tokens", t.source_tokens},
                    {"attention", best.attention},
                    {"grad_norm", saliency.values(SaliencyMethod::grad_norm)},
                    {"grad_input", saliency.values(SaliencyMethod::grad_input)}};
    });
}

// config: a run config (JSON text, data.task "dates"); a fresh model, data and Adam
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_train_start(const char* config_text) {
    return guarded([&] {
        auto t = std::make_unique<Training>();
        t->config = Config::from_json(json::parse(config_text), "the page's config");
        if (t->config.data.task != "dates")
            throw Error("the page trains the date task only (data.task \"dates\")");
        t->task = prepare_task(t->config, /*quiet=*/true);
        t->rng = std::make_unique<Rng>(t->config.train.seed);
        t->model = make_model(t->config.model, t->task.source_vocab.size(),
                              t->task.target_vocab.size(), *t->rng);
        t->model->train();
        AdamOptions adam;
        adam.lr = t->config.train.lr;
        t->optimizer = std::make_unique<Adam>(t->model->named_parameters(), adam);
        BatchingOptions b;
        b.batch_size = t->config.train.batch_size;
        b.bucket_chunk = size_t(t->config.train.bucket_chunk);
        b.max_source_length = size_t(t->config.data.max_source_len);
        b.max_target_length = size_t(t->config.data.max_target_len);
        b.seed = t->config.train.seed;
        t->batches = std::make_unique<Batcher>(t->task.encode(t->task.train), b);
        t->epoch = std::make_unique<EpochIterator>(*t->batches, 0, 0);
        training = std::move(t);
        return json{{"parameters", training->model->parameter_count()},
                    {"train", training->task.train.size()},
                    {"test", training->task.test.size()},
                    {"batches_per_epoch", training->batches->num_batches()}};
    });
}

// n steps of train_step (zero_grad, forward_loss, backward, clip, Adam); {"step", "epoch",
// "loss" (mean over the n steps), "seconds"}
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_train_steps(int n) {
    return guarded([&] {
        if (!training) throw Error("no training started");
        Training& t = *training;
        const auto start = std::chrono::steady_clock::now();
        double loss = 0;
        for (int k = 0; k < n; ++k) {
            if (!t.epoch->has_next())
                t.epoch = std::make_unique<EpochIterator>(*t.batches, ++t.epoch_number, 0);
            const Batch batch = t.epoch->next();
            const TrainStepStats r = train_step(
                *t.optimizer, batch, [&](const Batch& b) { return forward_backward(*t.model, b); },
                t.config.train.clip_norm);
            loss += r.loss;
            ++t.step;
        }
        return json{{"step", t.step},
                    {"epoch", t.epoch_number + 1},
                    {"loss", n > 0 ? loss / n : 0.0},
                    {"seconds", seconds_since(start)}};
    });
}

// {"exact_match" (%, greedy, the first n test sentences), "sentence", "source_tokens",
//  "tokens", "attention" [steps][source], "seconds"}; the model returns to train mode.
EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_train_measure(int n) {
    return guarded([&] {
        if (!training) throw Error("no training started");
        Training& t = *training;
        const auto start = std::chrono::steady_clock::now();
        t.model->eval();
        std::vector<std::string> sources, references;
        for (size_t i = 0; i < t.task.test.size() && i < size_t(n); ++i) {
            sources.push_back(t.task.test[i].source);
            references.push_back(t.task.test[i].target);
        }
        DecodeOptions greedy = decode_options_from(t.config.decode);
        greedy.beam_size = greedy.nbest = 1;
        greedy.keep_attention = false;
        std::vector<std::string> outputs;
        for (const Translation& tr : translate(*t.model, t.task, sources, greedy))
            outputs.push_back(tr.text);
        greedy.keep_attention = true;
        const Translation fixed = translate(*t.model, t.task, {sources.at(0)}, greedy)[0];
        t.model->train();
        json attention = json::array();
        for (const auto& row : fixed.nbest.at(0).attention) attention.push_back(row);
        json tokens = json::array();
        for (int32_t id : fixed.nbest[0].tokens)
            tokens.push_back(display_token(t.task.target_vocab.token(id)));
        return json{{"exact_match", 100 * exact_match_accuracy(outputs, references)},
                    {"sentences", sources.size()},
                    {"sentence", sources[0]},
                    {"source_tokens", fixed.source_tokens},
                    {"tokens", tokens},
                    {"attention", attention},
                    {"step", t.step},
                    {"seconds", seconds_since(start)}};
    });
}

EMSCRIPTEN_KEEPALIVE const char* seqgrad_live_train_save(const char* path) {
    return guarded([&] {
        if (!training) throw Error("no training started");
        save_checkpoint(path, *training->model, {}, {{"step", training->step}});
        return json{{"path", path}};
    });
}

}  // extern "C"
