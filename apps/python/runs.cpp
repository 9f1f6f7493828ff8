// Runs from Python, through the library's high-level functions: train (models/training/
// trainer.h), load_run (models/run/run.h), translate (models/decoding/translator.h), saliency and
// gradient flow (apps/studies/), corpus scores (data/score_definitions.h, data/bleu.h) and the
// explorer's page (apps/cli/commands.h explore_html). Long calls run without the GIL.
#include <fmt/format.h>

#include <csignal>
#include <memory>
#include <optional>

#include "apps/cli/commands.h"
#include "apps/cli/gradflow_options.h"
#include "apps/explore/explore_gradients.h"
#include "apps/python/bindings.h"
#include "apps/studies/gradflow.h"
#include "apps/studies/saliency.h"
#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/score_definitions.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"

namespace seqgrad::python {
namespace {

using nlohmann::json;

py::object to_python(const json& j) {
    return py::module_::import("json").attr("loads")(j.dump());
}

template <class T>
py::array_t<T> matrix(const std::vector<std::vector<T>>& rows, size_t columns) {
    py::array_t<T> out({rows.size(), columns});
    auto view = out.template mutable_unchecked<2>();
    for (size_t i = 0; i < rows.size(); ++i)
        for (size_t j = 0; j < columns; ++j) view(i, j) = j < rows[i].size() ? rows[i][j] : T(0);
    return out;
}

// A trained run, loaded: its directory, its checkpoint (best or last) and the model.
struct Run {
    std::string run_dir, checkpoint;
    LoadedRun loaded;
};

std::shared_ptr<Run> open_run(const std::string& run_dir, const std::string& checkpoint) {
    auto run = std::make_shared<Run>();
    run->run_dir = run_dir;
    run->checkpoint = checkpoint;
    py::gil_scoped_release release;
    run->loaded = load_run(run_dir, checkpoint);
    return run;
}

// One hypothesis of a translation, with numpy attention [T, S] (T output tokens with <eos>, S
// source tokens with <eos>).
struct PyHypothesis {
    std::vector<std::string> tokens;
    std::string text;
    double score = 0, log_prob = 0;
    bool finished = false;
    py::object attention;  // numpy float32 [T, S], or None
};

struct PyTranslation {
    std::string source;
    std::vector<std::string> source_tokens;
    std::vector<PyHypothesis> nbest;
};

PyHypothesis to_python(const Hypothesis& h, const Task& task, size_t source_length) {
    PyHypothesis p;
    for (int32_t id : h.tokens) p.tokens.push_back(task.target_vocab.token(id));
    p.text = task.decode_target(h.tokens);
    p.score = h.score;
    p.log_prob = h.log_prob;
    p.finished = h.finished;
    if (h.attention.empty())
        p.attention = py::none();
    else
        p.attention = matrix<float>(h.attention, source_length);
    return p;
}

DecodeOptions decode_options(const Run& run, int beam, int nbest, std::optional<double> alpha,
                             std::optional<int> max_length) {
    DecodeOptions options = decode_options_from(run.loaded.config.decode);
    if (beam < 1) throw Error(fmt::format("translate: beam must be >= 1, got {}", beam));
    if (nbest < 1 || nbest > beam)
        throw Error(fmt::format("translate: nbest must be in 1..beam ({}), got {}", beam, nbest));
    options.beam_size = beam;
    options.nbest = nbest;
    if (alpha) options.alpha = *alpha;
    if (max_length) options.max_length = *max_length;
    options.keep_attention = true;
    return options;
}

// SIGINT during a long call: the first sets stop_requested(), which the call reads between two
// steps (training: stop after this step, writing `last`, as Ctrl-C does to `seqgrad train`;
// decoding: end with KeyboardInterrupt); a second ends the process, as in the CLI. Python's own
// handler is back afterwards.
class StopOnInterrupt {
  public:
    StopOnInterrupt() {
        stop_requested() = false;
        previous_ = std::signal(SIGINT, [](int) { request_stop(); });
    }
    ~StopOnInterrupt() { std::signal(SIGINT, previous_); }

  private:
    void (*previous_)(int) = SIG_DFL;
};

std::vector<Translation> decode(const Run& run, const std::vector<std::string>& sources,
                                const DecodeOptions& options) {
    TranslateExtras extras;
    extras.stop = &stop_requested();
    StopOnInterrupt interrupt;
    py::gil_scoped_release release;
    return translate(*run.loaded.model, run.loaded.task, sources, options, extras);
}

std::vector<PyTranslation> translate_sentences(const Run& run,
                                               const std::vector<std::string>& sources, int beam,
                                               int nbest, std::optional<double> alpha,
                                               std::optional<int> max_length) {
    const std::vector<Translation> translations =
        decode(run, sources, decode_options(run, beam, nbest, alpha, max_length));
    std::vector<PyTranslation> out;
    for (size_t i = 0; i < translations.size(); ++i) {
        PyTranslation t;
        t.source = sources[i];
        t.source_tokens = translations[i].source_tokens;
        for (const Hypothesis& h : translations[i].nbest)
            t.nbest.push_back(to_python(h, run.loaded.task, t.source_tokens.size()));
        out.push_back(std::move(t));
    }
    return out;
}

py::dict saliency(const Run& run, const std::string& sentence, const std::string& method, int beam,
                  int steps) {
    const SaliencyMethod kind = parse_saliency_method(method);
    const Translation translation =
        decode(run, {sentence}, decode_options(run, beam, 1, std::nullopt, std::nullopt))[0];
    if (translation.nbest.empty() || translation.nbest[0].tokens.empty())
        throw Error(
            fmt::format("saliency: nothing to explain: '{}' translates to nothing", sentence));
    const Hypothesis& best = translation.nbest[0];
    SaliencyOptions options;
    options.integrated_gradients = kind == SaliencyMethod::integrated_gradients;
    options.steps = steps;
    Saliency result;
    {
        py::gil_scoped_release release;
        result = compute_saliency(*run.loaded.model, run.loaded.task.encode_source(sentence),
                                  best.tokens, options);
    }
    const PyHypothesis hypothesis =
        to_python(best, run.loaded.task, translation.source_tokens.size());
    py::dict out;
    out["method"] = saliency_method_name(kind);
    out["source_tokens"] = translation.source_tokens;
    out["output_tokens"] = hypothesis.tokens;
    out["text"] = hypothesis.text;
    out["saliency"] = matrix<double>(result.values(kind), translation.source_tokens.size());
    out["attention"] = hypothesis.attention;
    out["log_probs"] = result.log_probs;
    return out;
}

py::object gradflow(const Run& run, const std::string& sentence,
                    std::optional<std::string> target) {
    std::vector<int32_t> target_ids;
    std::string name = "reference";
    if (target) {
        target_ids = run.loaded.task.encode({SentencePair{sentence, *target}})[0].target;
    } else {
        const Translation t = decode(run, {sentence}, decode_options(run, 1, 1, {}, {}))[0];
        target_ids = t.nbest.at(0).tokens;
        name = "beam";
    }
    json result;
    {
        py::gil_scoped_release release;
        result = gradflow_json(run.loaded, sentence, target_ids, name);
    }
    return to_python(result);
}

py::dict evaluate(const Run& run, const std::string& metrics, int beam, std::optional<int> limit) {
    std::vector<SentencePair> test;
    {
        py::gil_scoped_release release;
        test = load_run(run.run_dir, run.checkpoint, /*load_data=*/true).task.test;
    }
    if (limit && size_t(*limit) < test.size()) test.resize(size_t(*limit));
    if (test.empty()) throw Error(fmt::format("eval: {} has no test sentences", run.run_dir));
    std::vector<std::string> sources, references, normalised, hypotheses;
    const TextPipeline& pipeline = run.loaded.task.pipeline;
    for (const SentencePair& p : test) {
        sources.push_back(p.source);
        references.push_back(p.target);
        normalised.push_back(pipeline.join(pipeline.tokens(p.target)));
    }
    for (const Translation& t : decode(run, sources, decode_options(run, beam, 1, {}, {})))
        hypotheses.push_back(t.text);
    py::dict scores, lines;
    for (const ScoreDefinition& d : parse_score_definitions(metrics)) {
        const DefinedScore s = defined_score(d, hypotheses, {references});
        scores[py::str(d.name)] = s.score;
        lines[py::str(d.name)] = s.line;
    }
    py::dict out;
    out["scores"] = scores;
    out["lines"] = lines;
    if (!pipeline.reversible()) {    // the output is normalised text: scores against normalised
        py::dict normalised_scores;  // references too
        for (const ScoreDefinition& d : parse_score_definitions(metrics))
            normalised_scores[py::str(d.name)] = defined_score(d, hypotheses, {normalised}).score;
        out["scores_normalised"] = normalised_scores;
    }
    if (run.loaded.task.is_dates())
        out["exact_match"] = exact_match_accuracy(hypotheses, references);
    out["sentences"] = test.size();
    out["hypotheses"] = hypotheses;
    out["references"] = references;
    return out;
}

py::dict train_run(const py::object& config, const std::vector<std::string>& overrides,
                   py::object on_progress, bool quiet) {
    Config c;
    if (py::isinstance<py::str>(config)) {
        c = Config::load(config.cast<std::string>(), overrides);
    } else {
        json j = json::parse(py::module_::import("json").attr("dumps")(config).cast<std::string>());
        for (const std::string& assignment : overrides) apply_override(j, assignment);
        c = Config::from_json(j, "config");
    }
    TrainOptions options;
    options.quiet = quiet;
    if (!on_progress.is_none())
        options.on_progress = [on_progress](const ProgressLine& line) {
            py::gil_scoped_acquire acquire;
            on_progress(py::dict(py::arg("epoch") = line.epoch + 1, py::arg("step") = line.step,
                                 py::arg("total_steps") = line.total_steps,
                                 py::arg("loss") = line.loss, py::arg("grad_norm") = line.grad_norm,
                                 py::arg("tokens_per_s") = line.tokens_per_s,
                                 py::arg("elapsed_s") = line.elapsed_s));
        };
    TrainSummary s;
    {
        StopOnInterrupt interrupt;
        py::gil_scoped_release release;
        s = train(c, options);
    }
    return py::dict(py::arg("run_dir") = c.output.run_dir, py::arg("steps") = s.steps,
                    py::arg("epochs_completed") = s.epochs_completed,
                    py::arg("best_valid_loss") = s.best_valid_loss,
                    py::arg("last_valid_metric") = s.last_valid_metric,
                    py::arg("metric_name") = s.metric_name,
                    py::arg("test_metric") = s.has_test ? py::cast(s.test_metric) : py::none(),
                    py::arg("seconds") = s.seconds, py::arg("interrupted") = s.interrupted,
                    py::arg("stopped_early") = s.stopped_early);
}

std::string explore(const std::vector<std::string>& run_dirs, const std::string& checkpoint,
                    int limit, int beam, bool gradients, std::optional<std::string> test,
                    std::optional<std::string> input) {
    if (run_dirs.empty()) throw Error("explore: no run given");
    ExploreRequest request;
    request.run_dir = run_dirs[0];
    request.other_runs.assign(run_dirs.begin() + 1, run_dirs.end());
    request.checkpoint = checkpoint;
    request.limit = limit;
    request.beam = beam;
    request.gradients = gradients;
    request.gradient_sentences = std::min(limit, request.gradient_sentences);
    request.progress = false;
    if (test) request.test = *test;
    if (input) request.input = *input;
    py::gil_scoped_release release;
    return explore_html(request);
}

py::dict gradflow_study(const std::vector<std::string>& argv) {
    GradflowOptions options = parse_gradflow_options(argv);
    options.quiet = true;
    GradflowReport report;
    {
        py::gil_scoped_release release;
        report = run_gradflow(options);
    }
    py::list curves;
    for (const FlowCurve& c : report.curves) {
        py::dict curve;
        curve["model"] = c.model;
        curve["stage"] = c.stage;
        curve["length"] = c.length;
        curve["hidden"] = py::array_t<double>(py::ssize_t(c.hidden.size()), c.hidden.data());
        curve["embedding"] =
            py::array_t<double>(py::ssize_t(c.embedding.size()), c.embedding.data());
        curve["direct"] = py::array_t<double>(py::ssize_t(c.direct.size()), c.direct.data());
        curve["recurrent"] =
            py::array_t<double>(py::ssize_t(c.recurrent.size()), c.recurrent.data());
        curve["loss"] = c.loss;
        curves.append(curve);
    }
    py::dict out;
    out["curves"] = curves;
    out["summary"] = gradflow_summary_table(report);
    return out;
}

// A translation and its hypotheses, as translate returns them.
void bind_translations(py::module_& m) {
    py::class_<PyHypothesis>(m, "Hypothesis", py::module_local())
        .def_readonly("tokens", &PyHypothesis::tokens)
        .def_readonly("text", &PyHypothesis::text)
        .def_readonly("score", &PyHypothesis::score)
        .def_readonly("log_prob", &PyHypothesis::log_prob)
        .def_readonly("finished", &PyHypothesis::finished)
        .def_readonly("attention", &PyHypothesis::attention,
                      "numpy float32 [output tokens, source tokens] (both with <eos>), or None")
        .def("__repr__", [](const PyHypothesis& h) {
            return fmt::format("Hypothesis({!r}, score={:.4f})", h.text, h.score);
        });
    py::class_<PyTranslation>(m, "Translation", py::module_local())
        .def_readonly("source", &PyTranslation::source)
        .def_readonly("source_tokens", &PyTranslation::source_tokens)
        .def_readonly("nbest", &PyTranslation::nbest)
        .def_property_readonly("text",
                               [](const PyTranslation& t) {
                                   return t.nbest.empty() ? std::string() : t.nbest[0].text;
                               })
        .def_property_readonly("attention",
                               [](const PyTranslation& t) {
                                   return t.nbest.empty() ? py::none() : t.nbest[0].attention;
                               })
        .def_property_readonly(
            "score",
            [](const PyTranslation& t) { return t.nbest.empty() ? 0.0 : t.nbest[0].score; })
        .def("__repr__", [](const PyTranslation& t) {
            return fmt::format("Translation({!r} -> {!r})", t.source,
                               t.nbest.empty() ? std::string() : t.nbest[0].text);
        });
}

// A loaded run's methods and the module's functions behind seqgrad.runs (load_run, train,
// explore, the gradient-flow study).
void bind_run(py::module_& m) {
    py::class_<Run, std::shared_ptr<Run>>(m, "_Run", py::module_local())
        .def_readonly("run_dir", &Run::run_dir)
        .def_readonly("checkpoint", &Run::checkpoint)
        .def_property_readonly("config",
                               [](const Run& r) { return to_python(r.loaded.config.to_json()); })
        .def("_translate", &translate_sentences)
        .def("_saliency", &saliency)
        .def("_gradflow", &gradflow)
        .def("_eval", &evaluate);
    m.def("_load_run", &open_run);
    m.def("_train", &train_run);
    m.def("_explore", &explore);
    m.def("_gradflow_study", &gradflow_study);
}

void bind_bleu(py::module_& m) {
    py::class_<BleuScore>(m, "BleuScore", py::module_local())
        .def_readonly("score", &BleuScore::score)
        .def_readonly("precisions", &BleuScore::precisions)
        .def_readonly("counts", &BleuScore::counts)
        .def_readonly("totals", &BleuScore::totals)
        .def_readonly("bp", &BleuScore::bp)
        .def_readonly("sys_len", &BleuScore::sys_len)
        .def_readonly("ref_len", &BleuScore::ref_len)
        .def("__float__", [](const BleuScore& b) { return b.score; })
        .def("__repr__", [](const BleuScore& b) { return b.format(); });
    m.def(
        "bleu",
        [](const std::vector<std::string>& hypotheses, const py::object& references,
           const std::string& tokenize, bool lowercase, const std::string& smooth_method) {
            std::vector<std::vector<std::string>> streams;
            if (py::isinstance<py::list>(references) && py::len(references) > 0 &&
                py::isinstance<py::str>(py::list(references)[0]))
                streams.push_back(references.cast<std::vector<std::string>>());
            else
                streams = references.cast<std::vector<std::vector<std::string>>>();
            for (const auto& stream : streams)
                check_line_counts("hypotheses", hypotheses.size(), "references", stream.size());
            BleuOptions options;
            options.tokenize = tokenize;
            options.lowercase = lowercase;
            options.smooth_method = smooth_method;
            check_bleu_options(options);
            return corpus_bleu(hypotheses, streams, options);
        },
        py::arg("hypotheses"), py::arg("references"), py::arg("tokenize") = "13a",
        py::arg("lowercase") = false, py::arg("smooth_method") = "exp",
        "sacreBLEU's corpus BLEU; references: a list of strings (one reference each) or a list "
        "of such lists (several references).");
}

}  // namespace

void bind_runs(py::module_& m) {
    bind_translations(m);
    bind_run(m);
    bind_bleu(m);
}

}  // namespace seqgrad::python
