// `seqgrad attention RUN_DIR "a sentence"`: translate one sentence, draw where the decoder
// looked at every step (SVG heatmap, optional CSV) and print a diagnosis of the weights.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/attention/attention_report.h"
#include "apps/attention/transformer_attention.h"
#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/cli/run_args.h"
#include "apps/plot/plot.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad attention RUN_DIR "a source sentence" [--out heat.svg] [--csv FILE]
                         [--beam K] [--checkpoint best|last|NAME] [--words]
                         [--layer L] [--head H|mean]    (a Transformer run)

Translates the sentence with the model trained in RUN_DIR (the words after RUN_DIR are joined
with spaces, so the quotes are optional), writes the attention weights of the best hypothesis
as an SVG heatmap (rows: output tokens including <eos>; columns: input tokens including <eos>;
a space of a character-level model is drawn as the open box U+2423) and prints, per output
step, the most attended input token and its weight, the entropy of the weights
H = -sum_s w_s ln w_s (nats) and H / ln S, normalised to 0 (one-hot) .. 1 (uniform over the S
input positions). A step is flagged DISPERSED when the normalised entropy exceeds 0.90: the
decoder is then averaging all encoder states rather than attending. The summary gives the mean
normalised entropy, the share of dispersed steps, how often the argmax sits on the input's
<eos>, and whether the argmax moves left to right: "roughly monotonic" when at least 80% of
the moves between consecutive steps are not leftwards (the date task reorders the fields, so
there a good model need not be monotonic).

options:
  --out FILE        the SVG heatmap (default RUN_DIR/attention.svg)
  --csv FILE        also write the weights as CSV (one line per output token)
  --beam K          beam width; 1 = greedy (default: the run's decode.beam_size)
  --checkpoint W    best (default; falls back to last when there is none), last, or a
                    checkpoint NAME of the run (averaged: `seqgrad average`)
  --words           for a BPE run: merge subwords into words ("Hun@@ ger" -> "Hunger"); a source
                    word's weight is the sum of its subwords' weights, an output word's row the
                    mean of its subwords' rows (rows still sum to 1). Without it the rows and
                    columns are the subword tokens the model read and wrote, with their marks.

A Transformer has a cross-attention in every decoder layer, each with h heads (its weights are
[B, h, T, S]). Shown: decoder layer L's cross-attention (0 .. layers - 1, as in the parameter
names transformer.decoder.layers.L; default the top layer), head H (0 .. h - 1) or the mean
over heads (default, PyTorch's average_attn_weights). `seqgrad explore` shows every layer and
head, and the encoder's and decoder's self-attention too.
  --layer L         the decoder layer (Transformer runs only)
  --head H|mean     one head, or the mean over heads (Transformer runs only)
)";

// The decoder layer and head `--layer` and `--head` choose (head -1: the mean over heads); throws
// naming the option and the valid range. For an RNN run, either option is an error.
struct LayerHead {
    int layer = 0, head = -1;
};
LayerHead layer_head_from_args(const Args& args, const ModelConfig& model) {
    if (model.kind != "transformer") {
        for (const char* option : {"layer", "head"})
            if (args.has(option))
                throw Error(
                    fmt::format("--{}: only for a Transformer run (model.kind "
                                "\"transformer\"); this RNN model's decoder has one "
                                "attention, with no layers or heads",
                                option));
        return {};
    }
    // `value` as an index in 0 .. count - 1, or an error naming the option and the range
    auto index = [](const char* option, const std::string& value, int count, const char* what) {
        size_t used = 0;
        int i = -1;
        try {
            i = std::stoi(value, &used);
        } catch (const std::exception&) {
        }
        if (used == 0 || used != value.size() || i < 0 || i >= count)
            throw Error(fmt::format("--{} {}: expected 0 .. {}{} (the model has {} {})", option,
                                    value, count - 1,
                                    std::string(option) == "head" ? " or mean" : "", count, what));
        return i;
    };
    const int layers = model.decoder_layers, heads = int(model.heads);
    LayerHead chosen{layers - 1, -1};
    if (args.has("layer"))
        chosen.layer = index("layer", args.get("layer"), layers, "decoder layers");
    if (args.has("head") && args.get("head") != "mean")
        chosen.head = index("head", args.get("head"), heads, "heads");
    return chosen;
}

// "Transformer, decoder layer 1 (top) cross-attention, mean of 4 heads"
std::string layer_head_name(const LayerHead& chosen, const ModelConfig& model) {
    return fmt::format("Transformer, decoder layer {}{} cross-attention, {}", chosen.layer,
                       chosen.layer == model.decoder_layers - 1 ? " (top)" : "",
                       chosen.head < 0 ? fmt::format("mean of {} heads", model.heads)
                                       : fmt::format("head {} of {}", chosen.head, model.heads));
}

// The matrix to show: its rows (output tokens) and columns (input tokens) labelled, the weights
// as doubles, the subwords merged into words with --words; and the input tokens the model did not
// know.
struct LabelledAttention {
    std::vector<std::string> source_labels, output_labels;
    std::vector<std::vector<double>> weights;
    std::vector<std::string> unknown;
};

LabelledAttention labelled_attention(const LoadedRun& run, const Translation& t,
                                     const WeightRows& weights, bool words) {
    const Hypothesis& best = t.nbest.at(0);
    LabelledAttention a;
    // Input labels: the tokens the model saw; ones outside its vocabulary were read as <unk>.
    for (size_t s = 0; s < t.source_tokens.size(); ++s) {
        const std::string& token = t.source_tokens[s];
        const bool is_eos = s + 1 == t.source_tokens.size();
        if (!is_eos && !run.task.source_vocab.contains(token)) {
            a.unknown.push_back(display_token(token));
            a.source_labels.push_back("<unk:" + token + ">");
        } else {
            a.source_labels.push_back(token);
        }
    }
    for (int32_t id : best.tokens) a.output_labels.push_back(run.task.target_vocab.token(id));
    a.weights = weights;
    if (words) {
        WordAttention merged = merge_subword_attention(a.source_labels, a.output_labels, a.weights);
        a.source_labels = std::move(merged.source_words);
        a.output_labels = std::move(merged.output_words);
        a.weights = std::move(merged.weights);
    }
    return a;
}

// The rows decoding kept (a Transformer's: its top layer's, averaged over heads), or the chosen
// layer and head of a Transformer's, fed the best output again step by step.
WeightRows chosen_attention_rows(const LoadedRun& run, const LayerHead& chosen,
                                 const std::string& sentence, const Hypothesis& best) {
    WeightRows rows;
    for (const std::vector<float>& row : best.attention) rows.emplace_back(row.begin(), row.end());
    const bool top_mean = chosen.layer == run.config.model.decoder_layers - 1 && chosen.head < 0;
    if (run.config.model.kind == "transformer" && !top_mean) {
        const TransformerAttention all =
            transformer_attention(*run.model, run.task.encode_source(sentence), best.tokens);
        const std::vector<WeightRows>& heads = all.cross.at(size_t(chosen.layer));
        rows = chosen.head < 0 ? mean_over_heads(heads) : heads.at(size_t(chosen.head));
    }
    return rows;
}

// The heatmap (--out, by default RUN_DIR/attention.svg) and with --csv the weights.
void write_attention_files(const Args& args, const std::string& run_dir, const std::string& title,
                           const LabelledAttention& a) {
    const std::string svg_path = args.get("out", run_dir + "/attention.svg");
    write_file_atomically(svg_path, plot::heatmap_svg(attention_heatmap(
                                        a.source_labels, a.output_labels, a.weights, title)));
    fmt::print("\nheatmap written to {}\n", svg_path);
    if (args.has("csv")) {
        write_file_atomically(args.get("csv"),
                              attention_csv(a.source_labels, a.output_labels, a.weights));
        fmt::print("weights written to {}\n", args.get("csv"));
    }
}

}  // namespace

int cmd_attention(const Argv& argv) {
    Args args(argv, {"out", "csv", "beam", "checkpoint", "layer", "head"}, {"help", "words"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (args.positional().size() < 2) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    const std::string run_dir = args.positional()[0];
    const std::string sentence = sentence_from_args(args);
    LoadedRun run = load_run_from_args(args, run_dir);
    const LayerHead chosen = layer_head_from_args(args, run.config.model);
    const bool transformer = run.config.model.kind == "transformer";  // attention per layer, head
    const std::string kind = transformer ? layer_head_name(chosen, run.config.model)
                                         : run.config.model.attention + " attention";
    if (!transformer && run.config.model.attention == "none")
        throw Error(fmt::format(
            "{}: this model has no attention (model.attention = \"none\"): its decoder sees "
            "only the encoder's final state, so there are no weights to show. `seqgrad "
            "translate` works with it.",
            run_dir));

    DecodeOptions options = decode_options_from_args(args, run);
    options.nbest = 1;
    options.keep_attention = true;

    Translation t = translate(*run.model, run.task, {sentence}, options)[0];
    if (t.source_tokens.empty())
        throw Error("the sentence is empty (after normalisation): nothing to attend to");
    const Hypothesis& best = t.nbest.at(0);
    if (best.attention.size() != best.tokens.size() || best.attention.empty())
        throw Error(fmt::format("the decoder returned {} attention rows for {} output tokens",
                                best.attention.size(), best.tokens.size()));

    const WeightRows rows = chosen_attention_rows(run, chosen, sentence, best);
    const LabelledAttention a = labelled_attention(run, t, rows, args.has("words"));

    print_translation(sentence, t, kind, options.beam_size);
    if (!a.unknown.empty())
        fmt::print("unknown to the model (read as <unk>): {}\n", fmt::join(a.unknown, " "));
    fmt::print("\n");

    AttentionDiagnosis diagnosis = diagnose_attention(a.weights);
    fmt::print("{}", format_attention_report(diagnosis, a.source_labels, a.output_labels,
                                             run.task.is_dates()));

    const std::string title = fmt::format("{}: \"{}\" -> \"{}\"", kind, sentence, t.text);
    write_attention_files(args, run_dir, title, a);
    return 0;
}

}  // namespace seqgrad
