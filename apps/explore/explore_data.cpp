#include "apps/explore/explore_data.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "apps/attention/attention_report.h"
#include "apps/explore/beam_trace.h"
#include "apps/explore/explore_attention.h"
#include "apps/explore/explore_tape.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"
#include "seqgrad/data/score_definitions.h"

namespace seqgrad {
namespace {

using nlohmann::json;

// Numbers in the file are rounded: 4 decimals are more than a reader can see, and they keep
// 100 sentences at beam 5 to a few MB. Non-finite values (a -inf log-prob) become null.
double round_to(double x, double scale) {
    return std::round(x * scale) / scale;
}
json number(double x, double scale = 1e4) {
    if (!std::isfinite(x)) return nullptr;
    return round_to(x, scale);
}

// Rounds every floating-point number inside `j` (the trace's columns) in place.
void round_numbers(json& j) {
    if (j.is_number_float()) {
        j = number(j.get<double>());
    } else if (j.is_structured()) {
        for (json& child : j) round_numbers(child);
    }
}

// Decodes `sources` in chunks, so that a progress line can follow. `traces` non-null: filled
// with each source's beam-search tree.
std::vector<Translation> decode_with_progress(const LoadedRun& run,
                                              const std::vector<std::string>& sources,
                                              const DecodeOptions& options,
                                              const TranslateExtras& extras, bool progress,
                                              const char* what,
                                              std::vector<BeamTrace>* traces = nullptr) {
    constexpr size_t kChunk = 32;
    const bool redraw = progress && isatty(STDERR_FILENO);  // else one line at the end
    std::vector<Translation> out;
    for (size_t start = 0; start < sources.size(); start += kChunk) {
        const size_t end = std::min(sources.size(), start + kChunk);
        std::vector<std::string> chunk(sources.begin() + std::ptrdiff_t(start),
                                       sources.begin() + std::ptrdiff_t(end));
        TranslateExtras part;
        BeamTraceRecorder recorder;
        if (traces) part.observer = &recorder;
        if (!extras.forced_prefixes.empty())
            part.forced_prefixes.assign(extras.forced_prefixes.begin() + std::ptrdiff_t(start),
                                        extras.forced_prefixes.begin() + std::ptrdiff_t(end));
        for (Translation& t : translate(*run.model, run.task, chunk, options, part))
            out.push_back(std::move(t));
        if (traces) {  // an empty line was not searched: its tree is empty
            recorder.traces.resize(chunk.size());
            for (BeamTrace& trace : recorder.traces) traces->push_back(std::move(trace));
        }
        if (redraw) fmt::print(stderr, "\r{}: {}/{} sentences", what, end, sources.size());
    }
    if (redraw && !sources.empty()) fmt::print(stderr, "\n");
    if (progress && !redraw) fmt::print(stderr, "{}: {} sentences\n", what, sources.size());
    return out;
}

// One hypothesis: tokens (ids), text, scores, attention and its diagnosis in words.
// `with_report`: also the diagnosis in words (for the best and the greedy hypothesis; the page
// shows the per-step entropy of the others).
json hypothesis_json(const LoadedRun& run, const Hypothesis& h, const DecodeOptions& options,
                     const std::vector<std::string>& source_labels, bool with_report) {
    json j;
    j["tokens"] = h.tokens;
    j["text"] = run.task.decode_target(h.tokens);
    j["log_prob"] = number(h.log_prob);
    j["length_penalty"] = number(length_penalty(int64_t(h.tokens.size()), options));
    j["score"] = number(h.score);
    j["coverage"] =
        number(h.score - h.log_prob / length_penalty(int64_t(h.tokens.size()), options));
    j["finished"] = h.finished;
    json attention = json::array();
    std::vector<std::vector<double>> weights;
    for (const std::vector<float>& row : h.attention) {
        json r = json::array();
        for (float w : row) r.push_back(round_to(w, 1e3));
        attention.push_back(r);
        weights.emplace_back(row.begin(), row.end());
    }
    j["attention"] = attention;
    if (!weights.empty() && weights.size() == h.tokens.size() &&
        weights[0].size() == source_labels.size()) {
        std::vector<std::string> output_labels;
        for (int32_t id : h.tokens) output_labels.push_back(run.task.target_vocab.token(id));
        const AttentionDiagnosis d = diagnose_attention(weights);
        json entropy = json::array();
        for (const AttentionStep& s : d.steps)
            entropy.push_back(round_to(s.normalized_entropy, 1e3));
        j["entropy"] = entropy;
        j["flags"] = {{"dispersed", number(d.dispersed_share, 1e3)},
                      {"on_last", number(d.last_column_share, 1e3)},
                      {"forward", number(d.forward_share, 1e3)},
                      {"monotonic", d.roughly_monotonic}};
        if (with_report)
            j["report"] =
                format_attention_report(d, source_labels, output_labels, run.task.is_dates());
    }
    return j;
}

// The source tokens as the model saw them: unknown ones marked, spaces made visible.
std::vector<std::string> source_labels(const LoadedRun& run, const Translation& t) {
    std::vector<std::string> labels;
    for (size_t s = 0; s < t.source_tokens.size(); ++s) {
        const std::string& token = t.source_tokens[s];
        const bool is_eos = s + 1 == t.source_tokens.size();
        labels.push_back(!is_eos && !run.task.source_vocab.contains(token) ? "<unk:" + token + ">"
                                                                           : token);
    }
    return labels;
}

// The first index where two token lists differ; -1 when they are equal.
int first_difference(const std::vector<int32_t>& x, const std::vector<int32_t>& y) {
    const size_t n = std::min(x.size(), y.size());
    for (size_t i = 0; i < n; ++i)
        if (x[i] != y[i]) return int(i);
    return x.size() == y.size() ? -1 : int(n);
}

// A what-if question: sentence i, step t (1-based), forced prefix ending in the alternative.
struct WhatIf {
    size_t sentence;
    int step;
    int32_t token;
    double token_log_prob;
    std::vector<int32_t> prefix;
};

// The alternatives to the best hypothesis at each of its first `steps` steps: the most probable
// other tokens its parent node recorded (masked ones excluded: the search could not take them).
std::vector<WhatIf> what_if_questions(size_t sentence, const BeamTrace& trace, int steps,
                                      int alternatives) {
    std::vector<WhatIf> out;
    if (trace.nbest_nodes.empty() || trace.nbest_nodes[0] <= 0) return out;
    std::vector<int32_t> path;  // root .. best
    for (int32_t n = trace.nbest_nodes[0]; n >= 0; n = trace.nodes[size_t(n)].parent)
        path.push_back(n);
    std::reverse(path.begin(), path.end());
    for (int t = 1; t <= steps && t < int(path.size()); ++t) {
        const int32_t parent = path[size_t(t - 1)], chosen = path[size_t(t)];
        std::vector<int32_t> children;
        for (size_t i = 0; i < trace.nodes.size(); ++i) {
            const TraceNode& n = trace.nodes[i];
            const bool searchable =
                n.status != NodeStatus::ngram_blocked && n.status != NodeStatus::unk_suppressed &&
                n.status != NodeStatus::below_min_length && n.status != NodeStatus::not_forced;
            if (n.parent == parent && int32_t(i) != chosen && searchable &&
                std::isfinite(n.token_log_prob))
                children.push_back(int32_t(i));
        }
        std::stable_sort(children.begin(), children.end(), [&](int32_t x, int32_t y) {
            return trace.nodes[size_t(x)].token_log_prob > trace.nodes[size_t(y)].token_log_prob;
        });
        if (children.size() > size_t(alternatives)) children.resize(size_t(alternatives));
        for (int32_t c : children)
            out.push_back({sentence, t, trace.nodes[size_t(c)].token,
                           trace.nodes[size_t(c)].token_log_prob, trace.prefix(c)});
    }
    return out;
}

// The trace in the file: the columns the page draws, numbers rounded, and what the page can
// rebuild left out (a third of the file's size): token texts (from "target_tokens"), the length
// penalty of each node (it depends only on the step: "length_penalty_by_step"), the status as a
// number (an index into "status_names"), zero coverage columns.
json trace_for_page(const BeamTrace& trace, const DecodeOptions& options) {
    json j = beam_trace_json(trace, {});
    j.erase("predicted_tokens");
    json& nodes = j["nodes"];
    nodes.erase("text");
    nodes.erase("length_penalty");
    json by_step = json::array();
    for (int32_t t = 0; t <= trace.max_length; ++t) by_step.push_back(length_penalty(t, options));
    j["length_penalty_by_step"] = by_step;
    json names = json::array(), codes = json::array();
    std::map<std::string, int> code_of;
    for (const TraceNode& n : trace.nodes) {
        const std::string name = node_status_name(n.status);
        auto [it, added] = code_of.emplace(name, int(code_of.size()));
        if (added) names.push_back(name);
        codes.push_back(it->second);
    }
    j["status_names"] = names;
    nodes["status"] = codes;
    bool any_coverage = false;
    for (const TraceNode& n : trace.nodes) any_coverage |= n.coverage != 0;
    if (!any_coverage) nodes.erase("coverage");
    round_numbers(j);
    return j;
}

// The texts of the target ids the file uses (the page looks tokens up there).
struct TokenTexts {
    const Vocab& vocab;
    std::map<int32_t, std::string> used;
    void note(int32_t id) { used.emplace(id, display_token(vocab.token(id))); }
    void note(const std::vector<int32_t>& ids) {
        for (int32_t id : ids) note(id);
    }
};

// One sentence: its decodings, scores, tree; `reference` is null without references.
json sentence_json(const LoadedRun& run, const std::string& source, const std::string* reference,
                   const Translation& b, const BeamTrace& trace, const Translation& g,
                   const DecodeOptions& options, TokenTexts& tokens) {
    json s;
    s["source"] = source;
    if (reference) s["reference"] = *reference;
    if (b.source_tokens.empty() || b.nbest.empty() || g.nbest.empty()) {
        s["empty"] = true;
        return s;
    }
    const std::vector<std::string> labels = source_labels(run, b);
    json shown_labels = json::array();
    for (const std::string& l : labels) shown_labels.push_back(display_token(l));
    s["source_tokens"] = shown_labels;
    s["greedy"] = hypothesis_json(run, g.nbest[0], options, labels, true);
    tokens.note(g.nbest[0].tokens);
    json nbest = json::array();
    for (const Hypothesis& h : b.nbest) {
        nbest.push_back(hypothesis_json(run, h, options, labels, nbest.empty()));
        tokens.note(h.tokens);
    }
    s["nbest"] = nbest;
    for (const TraceNode& node : trace.nodes)
        if (node.token >= 0) tokens.note(node.token);
    s["trace"] = trace_for_page(trace, options);
    s["diverge"] = first_difference(g.nbest[0].tokens, b.nbest[0].tokens);
    if (reference) {
        const std::vector<std::string> ref = {*reference};
        s["bleu"] = {{"greedy", number(sentence_bleu(g.text, ref).score, 1e2)},
                     {"beam", number(sentence_bleu(b.text, ref).score, 1e2)}};
        s["chrf"] = {{"greedy", number(sentence_chrf(g.text, ref).score, 1e2)},
                     {"beam", number(sentence_chrf(b.text, ref).score, 1e2)}};
    }
    s["what_if"] = json::array();
    return s;
}

// What-if: every alternative of every sentence, decoded in one go with forced prefixes, and
// added to its sentence's "what_if" list.
void add_what_ifs(const LoadedRun& run, const std::vector<std::string>& sources,
                  const std::vector<BeamTrace>& traces, const ExploreOptions& options,
                  const DecodeOptions& beam, json& sentences, TokenTexts& tokens) {
    std::vector<WhatIf> questions;
    for (size_t i = 0; i < sources.size(); ++i)
        for (WhatIf& q :
             what_if_questions(i, traces[i], options.what_if_steps, options.what_if_alternatives))
            questions.push_back(std::move(q));
    std::vector<std::string> what_if_sources;
    TranslateExtras forced;
    for (const WhatIf& q : questions) {
        what_if_sources.push_back(sources[q.sentence]);
        forced.forced_prefixes.push_back(q.prefix);
    }
    DecodeOptions what_if_options = beam;
    what_if_options.nbest = 1;
    what_if_options.keep_attention = false;
    const std::vector<Translation> answers = decode_with_progress(
        run, what_if_sources, what_if_options, forced, options.progress, "what-if");
    for (size_t q = 0; q < questions.size(); ++q) {
        const WhatIf& w = questions[q];
        if (answers[q].nbest.empty()) continue;
        const Hypothesis& h = answers[q].nbest[0];
        tokens.note(h.tokens);
        sentences[w.sentence]["what_if"].push_back({{"step", w.step},
                                                    {"token", w.token},
                                                    {"token_log_prob", number(w.token_log_prob)},
                                                    {"tokens", h.tokens},
                                                    {"text", run.task.decode_target(h.tokens)},
                                                    {"log_prob", number(h.log_prob)},
                                                    {"score", number(h.score)},
                                                    {"finished", h.finished}});
    }
}

// Corpus BLEU and chrF (and accuracy for dates) of both decodings, and the score under each
// published definition (data/score_definitions.h) with its label and signature; empty without
// references.
json corpus_scores(const LoadedRun& run, const std::vector<std::string>& references,
                   const std::vector<std::string>& greedy_texts,
                   const std::vector<std::string>& beam_texts) {
    json corpus = json::object();
    if (references.empty()) return corpus;
    BleuOptions bleu_options;
    ChrfOptions chrf_options;
    for (auto [name, texts] :
         {std::pair{"greedy", &greedy_texts}, std::pair{"beam", &beam_texts}}) {
        const BleuScore bleu = corpus_bleu(*texts, {references}, bleu_options);
        json c = {{"bleu", number(bleu.score, 1e2)},
                  {"bleu_line", bleu.format(2)},
                  {"chrf", number(corpus_chrf(*texts, {references}, chrf_options).score, 1e2)}};
        if (run.task.is_dates())
            c["accuracy"] = number(100 * exact_match_accuracy(*texts, references), 1e2);
        c["definitions"] = json::array();
        for (const ScoreDefinition& d : score_definitions()) {
            const double score = d.is_bleu ? corpus_bleu(*texts, {references}, d.bleu).score
                                           : corpus_chrf(*texts, {references}, d.chrf).score;
            c["definitions"].push_back(
                {{"label", d.label},
                 {"score", number(score, 1e2)},
                 {"signature", (d.is_bleu ? "BLEU|" + bleu_signature(d.bleu, 1)
                                          : (d.chrf.word_order > 0 ? "chrF2++|" : "chrF2|") +
                                                chrf_signature(d.chrf, 1))}});
        }
        corpus[name] = c;
    }
    corpus["bleu_signature"] = bleu_signature(bleu_options, 1);
    corpus["chrf_signature"] = chrf_signature(chrf_options, 1);
    return corpus;
}

// Saliency and gradient flow of every sentence (the beam's best hypothesis; the teacher-forced
// loss against the reference, or against that hypothesis without references), added to its
// entry; integrated gradients for the first sentences only. Returns the file's "gradients" meta:
// what was computed, and the corpus means of the agreement between attention and saliency.
json add_gradients(const LoadedRun& run, const ExploreInput& input,
                   const std::vector<Translation>& beams, const ExploreOptions& options,
                   json& sentences) {
    const GradientViewOptions& g = options.gradients;
    if (!g.enabled) return {{"enabled", false}};
    size_t integrated = 0, agreeing = 0;
    double argmax_share = 0, spearman = 0;
    std::vector<json> saliency = saliency_json(run, input.sources, beams, g);
    for (size_t i = 0; i < input.sources.size(); ++i) {
        if (saliency[i].is_null()) continue;  // empty, or past options.gradients.sentences
        json& s = saliency[i];
        integrated += s.contains("integrated_gradients");
        if (s.contains("agreement")) {
            ++agreeing;
            argmax_share += s["agreement"]["argmax_share"].get<double>();
            spearman += s["agreement"]["mean_spearman"].get<double>();
        }
        sentences[i]["saliency"] = std::move(s);
        const bool with_reference = !input.references.empty();
        const std::vector<int32_t> target =
            with_reference ? run.task.encode({{input.sources[i], input.references[i], 0}})[0].target
                           : beams[i].nbest[0].tokens;
        sentences[i]["gradflow"] =
            gradflow_json(run, input.sources[i], target, with_reference ? "reference" : "beam");
        if (int(i) < g.tape_sentences)
            sentences[i]["tape"] =
                tape_json(run, input.sources[i], target, with_reference ? "reference" : "beam");
    }
    json meta = {
        {"enabled", true},
        {"sentences", std::min<size_t>(size_t(g.sentences), input.sources.size())},
        {"integrated_sentences", integrated},
        {"integrated_steps", g.integrated_steps},
        {"tape_sentences", std::min<size_t>(size_t(g.tape_sentences), input.sources.size())},
        {"tape_maths", tape_maths(sentences)}};
    if (agreeing)
        meta["agreement"] = {{"method", "grad_norm"},
                             {"sentences", agreeing},
                             {"argmax_share", number(argmax_share / double(agreeing), 1e3)},
                             {"mean_spearman", number(spearman / double(agreeing), 1e3)}};
    return meta;
}

json meta_json(const LoadedRun& run, const std::string& run_dir, const ExploreInput& input,
               const ExploreOptions& options, const DecodeOptions& beam) {
    const char* penalties[] = {"none", "average", "gnmt"};
    // the RNN's cell (gru, lstm, rnn) or "transformer": what the page names the model
    const ModelConfig& m = run.config.model;
    const std::string model = m.kind == "rnn" ? m.cell : m.kind;
    return {{"run_dir", run_dir},
            {"checkpoint", run.checkpoint_path},
            {"task", run.task.is_dates() ? std::string("dates") : run.config.data.task},
            {"model", model},
            {"tokenizer", run.config.data.tokenizer},
            {"attention", run.config.model.attention},
            {"coverage", run.config.model.coverage},
            {"hidden_size", run.config.model.hidden_size},
            {"origin", input.origin},
            {"sentences", input.sources.size()},
            {"available", input.available},
            {"beam_size", beam.beam_size},
            {"nbest", beam.nbest},
            {"alpha", beam.alpha},
            {"length_penalty", penalties[int(beam.length_penalty)]},
            {"max_length", beam.max_length},
            {"what_if_steps", options.what_if_steps}};
}

}  // namespace

json training_curves(const std::string& metrics_path) {
    json train = json::array(), valid = json::array();
    std::ifstream in(metrics_path);
    std::string line;
    for (size_t number_of_line = 1; std::getline(in, line); ++number_of_line) {
        if (line.empty()) continue;
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            throw Error(fmt::format("{}:{}: not a JSON object", metrics_path, number_of_line));
        // A field that is missing or not a number (a NaN loss is logged as null) becomes null.
        auto field = [&](const char* key, double scale = 1e4) -> json {
            return j.contains(key) && j[key].is_number() ? number(j[key].get<double>(), scale)
                                                         : json(nullptr);
        };
        const json type = j.value("type", json(""));
        if (type == "train") {
            json row = {{"step", field("step", 1)},
                        {"loss", field("loss")},
                        {"lr", j.contains("lr") && j["lr"].is_number() ? j["lr"] : json(nullptr)},
                        {"grad_norm", field("grad_norm")},
                        {"clipped", j.contains("clipped") && j["clipped"] == true}};
            if (j.contains("grad_norms") && j["grad_norms"].is_object()) {
                json modules;
                for (auto& [name, value] : j["grad_norms"].items())
                    if (value.is_number()) modules[name] = number(value.get<double>());
                row["grad_norms"] = modules;
            }
            train.push_back(row);
        } else if (type == "valid") {
            json row = {{"step", field("step", 1)}, {"loss", field("loss")}};
            for (const char* metric : {"bleu", "accuracy"})
                if (j.contains(metric) && j[metric].is_number()) row[metric] = field(metric, 1e2);
            valid.push_back(row);
        }
    }
    return {{"train", train}, {"valid", valid}};
}

json explore_data(const LoadedRun& run, const std::string& run_dir, const ExploreInput& input,
                  const ExploreOptions& options) {
    DecodeOptions beam = options.decode;
    beam.keep_attention = true;
    DecodeOptions greedy = beam;
    greedy.beam_size = greedy.nbest = 1;
    std::vector<BeamTrace> traces;
    const std::vector<Translation> beams = decode_with_progress(
        run, input.sources, beam, {}, options.progress, "beam search", &traces);
    const std::vector<Translation> greedies =
        decode_with_progress(run, input.sources, greedy, {}, options.progress, "greedy");

    TokenTexts tokens{run.task.target_vocab, {}};
    // A reversible (BPE) pipeline gives back real text, scored against the raw references, as
    // `seqgrad eval` does; a char / word model writes normalised text, scored against the
    // references normalised alike.
    std::vector<std::string> references, greedy_texts, beam_texts;
    for (const std::string& raw : input.references)
        references.push_back(run.task.pipeline.reversible()
                                 ? raw
                                 : run.task.pipeline.join(run.task.pipeline.tokens(raw)));
    json sentences = json::array();
    for (size_t i = 0; i < input.sources.size(); ++i) {
        sentences.push_back(sentence_json(run, input.sources[i],
                                          references.empty() ? nullptr : &references[i], beams[i],
                                          traces[i], greedies[i], beam, tokens));
        greedy_texts.push_back(greedies[i].text);
        beam_texts.push_back(beams[i].text);
    }
    add_transformer_attention(run, input.sources, beams, greedies, sentences);
    add_what_ifs(run, input.sources, traces, options, beam, sentences, tokens);
    json gradients_meta = add_gradients(run, input, beams, options, sentences);

    json texts = json::object();
    for (const auto& [id, text] : tokens.used) texts[std::to_string(id)] = text;
    json corpus = corpus_scores(run, references, greedy_texts, beam_texts);
    if (gradients_meta.contains("agreement")) corpus["agreement"] = gradients_meta["agreement"];
    json meta = meta_json(run, run_dir, input, options, beam);
    meta["gradients"] = gradients_meta;
    if (json transformer = transformer_meta(run); !transformer.is_null())
        meta["transformer"] = std::move(transformer);
    return {{"meta", meta},
            {"corpus", corpus},
            {"sentences", sentences},
            {"target_tokens", texts},
            {"training", training_curves(run_dir + "/metrics.jsonl")}};
}

}  // namespace seqgrad
