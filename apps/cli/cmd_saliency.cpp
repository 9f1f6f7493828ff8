// `seqgrad saliency RUN_DIR "a sentence"`: translate one sentence, then, for every output token,
// the gradient of its log-probability with respect to the source embeddings (apps/studies/
// saliency.h), printed beside the attention weights, drawn as a heatmap, optionally as CSV.
#include <fmt/format.h>

#include <cmath>

#include "apps/attention/attention_report.h"
#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/cli/run_args.h"
#include "apps/plot/plot.h"
#include "apps/studies/saliency.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad saliency RUN_DIR "a source sentence" [--method M] [--steps N] [--beam K]
                        [--csv FILE] [--out FILE.svg] [--checkpoint best|last|NAME] [--words]

Translates the sentence with the model trained in RUN_DIR, then, for every output token y_t
of the best hypothesis (<eos> included), differentiates f_t = log p(y_t | y_<t, x) with respect
to the embedding e_s of every source position s (the tokens the model reads, <eos> included;
a Transformer's encoder reads sqrt(d_model) e_s + P[s], and its attention here is the top
decoder layer's cross-attention averaged over the heads):
  grad_norm             |df_t/de_s|, the length of the gradient (>= 0)
  grad_input            sum_d e_sd df_t/de_sd, the first-order change of f_t if e_s were zero
  integrated_gradients  sum_d e_sd times the mean of df_t/de_sd along the straight path from
                        zero embeddings to e (N midpoint steps); over all positions they add
                        up to f_t(e) - f_t(0), which the report checks
Prints per step the most salient source token, the most attended one (when the model has
attention), whether they agree, and the Spearman rank correlation of the two rows (signed
saliency compared by magnitude); then the means over the sentence.

options:
  --method M        grad_norm (default), grad_input or integrated_gradients: the one printed and
                    drawn (integrated gradients cost N times the others)
  --steps N         integrated gradients' steps (default 32, N >= 1)
  --beam K          beam width; 1 = greedy (default: the run's decode.beam_size)
  --csv FILE        also write step,output_token,source_position,source_token,method,value
                    (and attention, when the model has it) for every method computed
  --out FILE.svg    the heatmap, each row scaled by its largest magnitude (default
                    RUN_DIR/saliency.svg)
  --checkpoint W    best (default; falls back to last when there is none), last, or a
                    checkpoint NAME of the run (averaged: `seqgrad average`)
  --words           for a BPE run: merge subwords into words (a source word's value is the sum of
                    its subwords', an output word's row the mean of its subwords' rows), as
                    `seqgrad attention --words` does
)";

// Each row divided by its largest magnitude: 0..1, what the heatmap draws.
std::vector<std::vector<double>> row_scaled_magnitudes(const std::vector<std::vector<double>>& m) {
    std::vector<std::vector<double>> out;
    for (const auto& row : m) {
        double top = 0;
        for (double v : row) top = std::max(top, std::fabs(v));
        std::vector<double> scaled;
        for (double v : row) scaled.push_back(top > 0 ? std::fabs(v) / top : 0.0);
        out.push_back(std::move(scaled));
    }
    return out;
}

size_t argmax_magnitude(const std::vector<double>& row) {
    size_t best = 0;
    for (size_t s = 1; s < row.size(); ++s)
        if (std::fabs(row[s]) > std::fabs(row[best])) best = s;
    return best;
}

std::string report(const Saliency& saliency, SaliencyMethod method,
                   const std::vector<std::string>& source, const std::vector<std::string>& output,
                   const std::vector<std::vector<double>>& values,
                   const std::vector<std::vector<double>>& attention) {
    const bool with_attention = !attention.empty();
    Agreement agreement;
    if (with_attention) agreement = attention_agreement(attention, values);
    std::string out = fmt::format("{:>4}  {:<12} {:<18} {:>10}", "step", "output",
                                  "most salient @pos", saliency_method_name(method));
    if (with_attention)
        out += fmt::format("  {:<18} {:>6}  {:>5}  {:>8}", "most attended @pos", "weight", "agree",
                           "spearman");
    out += "\n";
    for (size_t t = 0; t < values.size(); ++t) {
        const size_t s = argmax_magnitude(values[t]);
        out += fmt::format("{:>4}  {:<12} {:<18} {:>10.4g}", t + 1, display_token(output[t]),
                           fmt::format("{} @{}", display_token(source[s]), s + 1), values[t][s]);
        if (with_attention) {
            size_t a = 0;
            for (size_t k = 1; k < attention[t].size(); ++k)
                if (attention[t][k] > attention[t][a]) a = k;
            out +=
                fmt::format("  {:<18} {:>6.3f}  {:>5}  {:>8.3f}",
                            fmt::format("{} @{}", display_token(source[a]), a + 1), attention[t][a],
                            agreement.argmax_agrees[t] ? "yes" : "no", agreement.spearman[t]);
        }
        out += "\n";
    }
    if (with_attention)
        out += fmt::format(
            "\nattention and {} agree on the top position at {:.0f}% of the steps; mean Spearman "
            "rank correlation {:.3f}\n",
            saliency_method_name(method), 100 * agreement.argmax_share, agreement.mean_spearman);
    else
        out += "\nthis model has no attention (model.attention = \"none\"): saliency only\n";
    if (method == SaliencyMethod::integrated_gradients) {
        // completeness: Σ_s I_ts against f_t(e) - f_t(0), the gap being the integral's error
        double worst = 0;
        for (size_t t = 0; t < saliency.integrated_gradients.size(); ++t) {
            double total = 0;
            for (double v : saliency.integrated_gradients[t]) total += v;
            worst = std::max(
                worst, std::fabs(total - (saliency.log_probs[t] - saliency.baseline_log_probs[t])));
        }
        out += fmt::format(
            "integrated gradients, {} steps: every row sums to log p(y_t|x) - log p(y_t|zero "
            "embeddings) within {:.2g}\n",
            saliency.steps, worst);
    }
    return out;
}

// The options of --method and --steps, checked before anything is loaded or decoded.
SaliencyOptions saliency_options(const Args& args, SaliencyMethod method) {
    SaliencyOptions options;
    options.steps = args.get_int("steps", 32);
    if (options.steps < 1)
        throw Error(
            fmt::format("--steps {}: integrated gradients need N >= 1 steps", options.steps));
    options.integrated_gradients = method == SaliencyMethod::integrated_gradients;
    return options;
}

// What the report shows: the source and output tokens (words, with --words), the attention rows
// (none for a model without attention) and the values of every method computed.
struct SaliencyView {
    std::vector<std::string> source, output;
    std::vector<std::vector<double>> attention;
    std::vector<SaliencyMethod> computed;
    Saliency shown;
};

// Merges the view's subwords into words: a source word's value is the sum of its subwords', an
// output word's row the mean of its subwords' rows.
void merge_into_words(SaliencyView& v, const Saliency& saliency) {
    std::vector<std::string> merged_source, merged_output;
    for (SaliencyMethod m : v.computed) {
        WordAttention w = merge_subword_attention(v.source, v.output, saliency.values(m));
        v.shown.values(m) = w.weights;
        merged_source = w.source_words;
        merged_output = w.output_words;
    }
    if (!v.attention.empty())
        v.attention = merge_subword_attention(v.source, v.output, v.attention).weights;
    v.source = merged_source;
    v.output = merged_output;
}

SaliencyView saliency_view(const LoadedRun& run, const Translation& t, const Saliency& saliency,
                           const SaliencyOptions& options, bool words) {
    const Hypothesis& best = t.nbest.at(0);
    SaliencyView v{
        t.source_tokens, {}, {}, {SaliencyMethod::grad_norm, SaliencyMethod::grad_input}, saliency};
    for (int32_t id : best.tokens) v.output.push_back(run.task.target_vocab.token(id));
    // a Transformer's: its top decoder layer's cross-attention, the mean of the heads
    if (run.config.model.kind == "transformer" || run.config.model.attention != "none")
        for (const std::vector<float>& row : best.attention)
            v.attention.emplace_back(row.begin(), row.end());
    if (options.integrated_gradients) v.computed.push_back(SaliencyMethod::integrated_gradients);
    if (words) merge_into_words(v, saliency);
    return v;
}

void write_heatmap(const SaliencyView& v, SaliencyMethod method, const std::string& sentence,
                   const std::string& translation, const std::string& svg_path) {
    plot::Heatmap heat;
    heat.title = fmt::format("{} (each row / its largest magnitude): \"{}\" -> \"{}\"",
                             saliency_method_name(method), sentence, translation);
    for (const std::string& s : v.source) heat.col_labels.push_back(display_token(s));
    for (const std::string& o : v.output) heat.row_labels.push_back(display_token(o));
    heat.values = row_scaled_magnitudes(v.shown.values(method));
    write_file_atomically(svg_path, plot::heatmap_svg(heat));
    fmt::print("\nheatmap written to {}\n", svg_path);
}

}  // namespace

int cmd_saliency(const Argv& argv) {
    Args args(argv, {"method", "steps", "beam", "csv", "out", "checkpoint"}, {"help", "words"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().size() < 2) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    const SaliencyMethod method = parse_saliency_method(args.get("method", "grad_norm"));
    const SaliencyOptions options = saliency_options(args, method);

    const std::string run_dir = args.positional()[0];
    const std::string sentence = sentence_from_args(args);
    LoadedRun run = load_run_from_args(args, run_dir);
    DecodeOptions decode = decode_options_from_args(args, run);
    decode.nbest = 1;
    decode.keep_attention = true;
    Translation t = translate(*run.model, run.task, {sentence}, decode)[0];
    if (t.source_tokens.empty())
        throw Error("the sentence is empty (after normalisation): nothing to attribute to");
    const Hypothesis& best = t.nbest.at(0);
    if (best.tokens.empty()) throw Error("the model wrote no output token: nothing to explain");

    const Saliency saliency =
        compute_saliency(*run.model, run.task.encode_source(sentence), best.tokens, options);
    const SaliencyView v = saliency_view(run, t, saliency, options, args.has("words"));

    print_translation(sentence, t,
                      run.config.model.kind == "transformer"
                          ? "Transformer (attention: the top decoder layer's cross-attention, "
                            "mean of the heads)"
                          : run.config.model.attention + " attention",
                      decode.beam_size);
    fmt::print("\n{}",
               report(v.shown, method, v.source, v.output, v.shown.values(method), v.attention));
    write_heatmap(v, method, sentence, t.text, args.get("out", run_dir + "/saliency.svg"));
    if (args.has("csv")) {
        write_file_atomically(args.get("csv"),
                              saliency_csv(v.shown, v.computed, v.source, v.output, v.attention));
        fmt::print("saliency written to {}\n", args.get("csv"));
    }
    return 0;
}

}  // namespace seqgrad
