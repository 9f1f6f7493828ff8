// `seqgrad explore RUN_DIR [RUN_DIR ...]`: one self-contained HTML file to see what a trained
// model does — the corpus, every sentence's beam-search tree, attention, greedy versus beam,
// what-if continuations and the training curves — or several models side by side.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/cli/run_args.h"
#include "apps/explore/explore_data.h"
#include "apps/explore/explore_html.h"
#include "apps/explore/explore_runs.h"
#include "apps/explore/live/live_page.h"
#include "apps/explore/live/live_weights.h"
#include "apps/plot/plot.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad explore RUN_DIR [--test FILE.tsv | --input FILE] [--limit N] [--beam K]
                       [--alpha A] [--nbest N] [--checkpoint best|last|NAME] [--what-if-steps S]
                       [--gradient-sentences N] [--ig-sentences N] [--ig-steps K]
                       [--tape-sentences N] [--no-gradients] [--long-input P]
                       [--live [--live-module DIR] [--live-weights f32|f16|auto]]
                       [--out FILE.html]
       seqgrad explore RUN_A RUN_B [RUN_C ...] [the same options] --out FILE.html

Writes one HTML file (CSS, JavaScript and data inline: it opens from disk with no network and
no server) with nine linked views of the model trained in RUN_DIR:
  corpus      every sentence, its greedy and beam translations, sentence BLEU and chrF of each,
              lengths, attention flags; sortable and filterable; corpus scores at the top
  attention   the heatmap of any n-best hypothesis or the greedy one, per-step entropy, the
              diagnosis `seqgrad attention` prints; for a Transformer, any layer and head of the
              cross-attention and of the encoder's and decoder's self-attention
  saliency    beside the attention heatmap, the gradient of each output token's log-probability
              with respect to the source embeddings (as `seqgrad saliency`), and where the two
              agree
  gradients   this sentence's gradient flow: ||dL/dh_s|| through attention and through the
              recurrence, per module gradient norms
  tape        the graph the engine recorded for this sentence's loss: every op with its shape,
              value and gradient norms and its maths, grouped by module and time step
  beam tree   every hypothesis the search expanded, the dropped ones faded with the reason
  greedy vs beam, what-if (the continuation when forced to take another token), training
Open a sentence directly with FILE.html#sentence=3 (and &view=corpus, attention, saliency,
gradients, tape, tree, compare, whatif or training; &hyp=K picks the heatmap's hypothesis,
&zoom=0.5 the tree's scale; for a Transformer run &attention=cross|encoder|decoder, &layer=L and
&head=H pick the attention, its layer and one head instead of the mean over heads).

Two or more runs: the same test sentences through each model, side by side. The corpus table
shows each run's beam output and sentence BLEU and chrF, and their difference from the first
run (sortable); the header each run's corpus scores; every sentence view draws one column per
run. The runs may differ in vocabulary, tokenizer, model kind or attention, not in test set:
each run's test split (or --test / --input, read by each run) must hold the same sources and
references, or the command stops naming both runs and the first line that differs.

options (defaults: the run's config, section "decode"):
  --test FILE.tsv     source<TAB>target pairs (as data.source_column says); default: the
                      date task's generated test split, or data.test of a TSV task
  --input FILE        source sentences only, one per line (no references, no scores)
  --limit N           the first N sentences (default 100; 20 with --live)
  --beam K            beam width (default: decode.beam_size if >= 2, else 5)
  --alpha A           length-penalty exponent (decode.alpha)
  --nbest N           hypotheses kept per sentence (default min(5, K))
  --checkpoint W      best (default; falls back to last when there is none), last, or a
                      checkpoint NAME of the run (averaged: `seqgrad average`)
  --what-if-steps S   what-if alternatives over the first S steps (default 3; 0 = none)
  --gradient-sentences N  saliency and gradient flow for the first N sentences (default 40;
                      together they cost about what decoding them at beam 5 costs)
  --ig-sentences N    integrated gradients in the saliency view for the first N sentences
                      (default 3; they cost K times the other saliency methods)
  --ig-steps K        their steps (default 32)
  --tape-sentences N  the tape view for the first N sentences (default 3, at most the
                      --gradient-sentences; 0 = none)
  --no-gradients      leave out the saliency and gradient-flow views (faster, smaller)
  --live              the engine inside the page too (WebAssembly, docs/live.md): a text box
                      decodes any sentence with every view, the tree's nodes can be forced
                      (what-if), and a Train view trains a date model in the page; still one
                      offline file. Open FILE.html#live=SENTENCE or FILE.html#view=train
  --live-module DIR   the folder holding seqgrad_live.js and seqgrad_live.wasm (default:
                      $SEQGRAD_LIVE_MODULE, else the build-wasm folder of these sources)
  --live-weights W    how the page stores the weights: f32 (the default, as trained), f16
                      (IEEE half: half the bytes, each weight rounded) or auto (f16 when the
                      precomputed sentences decode to the same tokens with f16 weights, greedy
                      and beam, else f32). f16 and auto first decode them natively with both
                      and say how many differ
  --out FILE.html     where to write it (default RUN_DIR/explore.html, or RUN_DIR/live.html
                      with --live), atomically
)";

// Fails now, naming the path, if `path` cannot be written (rather than after decoding).
void check_writable(const std::string& path) {
    const std::string probe = path + ".tmp";
    {
        std::ofstream out(probe, std::ios::binary | std::ios::app);
        if (!out)
            throw Error(fmt::format("--out {}: cannot write there (is the folder missing or "
                                    "read-only?)",
                                    path),
                        ErrorKind::io);
    }
    std::remove(probe.c_str());
}

std::vector<std::string> read_sources(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int error = errno;
        throw Error(fmt::format("--input {}: cannot open the file", path), file_error_kind(error));
    }
    return read_utf8_lines(in, path);
}

std::string human_size(size_t bytes) {
    if (bytes >= 1024 * 1024) return fmt::format("{:.1f} MB", double(bytes) / (1024 * 1024));
    return fmt::format("{:.0f} kB", double(bytes) / 1024);
}

// Fails now, before anything is loaded or decoded, on an option out of range.
void check_options(const ExploreRequest& request) {
    if (request.limit < 1)
        throw Error(fmt::format("--limit: expected N >= 1, got {}", request.limit));
    if (request.beam < 0) throw Error(fmt::format("--beam: expected K >= 1, got {}", request.beam));
    if (request.nbest < 0)
        throw Error(fmt::format("--nbest: expected N >= 1, got {}", request.nbest));
    if (request.gradient_sentences < 0)
        throw Error(fmt::format("--gradient-sentences: expected N >= 0, got {}",
                                request.gradient_sentences));
    if (request.integrated_sentences < 0)
        throw Error(
            fmt::format("--ig-sentences: expected N >= 0, got {}", request.integrated_sentences));
    if (request.tape_sentences < 0)
        throw Error(
            fmt::format("--tape-sentences: expected N >= 0, got {}", request.tape_sentences));
    if (request.integrated_steps < 1)
        throw Error(fmt::format("--ig-steps: expected K >= 1, got {}", request.integrated_steps));
    if (request.what_if_steps < 0)
        throw Error(fmt::format("--what-if-steps: expected S >= 0, got {}", request.what_if_steps));
    if (!request.test.empty() && !request.input.empty())
        throw Error("give --test FILE.tsv or --input FILE, not both");
    if (request.live && !request.other_runs.empty())
        throw Error("explore --live: one run at a time (the page holds one model)");
    if (!request.live && !request.live_module.empty())
        throw Error("--live-module: only with --live");
    if (!request.live && !request.live_weights.empty())
        throw Error("--live-weights: only with --live");
    if (!request.live_weights.empty()) live_weights_from_name(request.live_weights);
}

// The decode settings of `run` (its config's, overridden by the options).
ExploreOptions explore_options(const ExploreRequest& request, const LoadedRun& run) {
    ExploreOptions options;
    options.decode = decode_options_from(run.config.decode);
    options.decode.beam_size = request.beam > 0                ? request.beam
                               : options.decode.beam_size >= 2 ? options.decode.beam_size
                                                               : 5;
    options.decode.nbest =
        request.nbest > 0 ? request.nbest : std::min(5, options.decode.beam_size);
    if (options.decode.nbest > options.decode.beam_size)
        throw Error(fmt::format("--nbest {} needs a beam at least as wide (--beam {})",
                                options.decode.nbest, options.decode.beam_size));
    if (!std::isnan(request.alpha)) options.decode.alpha = request.alpha;
    options.what_if_steps = request.what_if_steps;
    options.gradients.enabled = request.gradients;
    options.gradients.sentences = request.gradient_sentences;
    options.gradients.integrated_sentences = request.integrated_sentences;
    options.gradients.tape_sentences = request.tape_sentences;
    options.gradients.integrated_steps = request.integrated_steps;
    options.progress = request.progress;
    return options;
}

// Cuts or leaves out (--long-input) the sentences longer than the run's model reads.
void fit_to_model(const ExploreRequest& request, const LoadedRun& run, ExploreInput& input,
                  size_t& refused) {
    Args policy({"--long-input", request.long_input}, {"long-input"}, {});
    const std::vector<size_t> kept =
        fit_sources(run, input_extras_from_args(policy, run), input.sources,
                    input.origin + ": sentence", refused);
    if (kept.size() == input.sources.size()) return;
    if (kept.empty())
        throw Error(
            fmt::format("{}: every sentence is longer than the model reads (--long-input "
                        "refuse); nothing to explore",
                        input.origin));
    ExploreInput fitted = input;
    fitted.sources.clear();
    fitted.references.clear();
    for (size_t i : kept) {
        fitted.sources.push_back(input.sources[i]);
        if (!input.references.empty()) fitted.references.push_back(input.references[i]);
    }
    input = std::move(fitted);
}

// The page's weights as --live-weights asks, compared on the sentences the page holds.
void add_live_weights(const ExploreRequest& request, const LoadedRun& run,
                      const ExploreInput& input, const ExploreOptions& options, LiveBundle& bundle,
                      ExploreReport* report) {
    const LiveWeightsChoice weights = choose_live_weights(
        run, live_weights_from_name(request.live_weights.empty() ? "f32" : request.live_weights),
        input.sources, options.decode);
    bundle.files["best.safetensors"] = weights.file;
    bundle.weights_dtype = dtype_name(weights.dtype);
    if (report) report->live_weights = weights.note;
}

}  // namespace

ExploreInput read_explore_input(const ExploreRequest& request, const Config& config) {
    ExploreInput input;
    if (!request.input.empty()) {
        input.sources = read_sources(request.input);
        input.origin = request.input;
    } else {
        std::vector<std::string> test_argv;
        if (!request.test.empty()) test_argv = {"--test", request.test};
        Args test_args(test_argv, {"test"}, {});
        for (const SentencePair& p : load_test_set(test_args, config, input.origin)) {
            input.sources.push_back(p.source);
            input.references.push_back(p.target);
        }
    }
    input.available = input.sources.size();
    if (input.sources.empty()) throw Error(fmt::format("{}: no sentences", input.origin));
    return input;
}

std::string explore_html(const ExploreRequest& request, ExploreReport* report) {
    check_options(request);
    // Every run is loaded and its test set read before anything is decoded, so that runs of
    // different test sets fail at once.
    std::vector<std::string> run_dirs = {request.run_dir};
    run_dirs.insert(run_dirs.end(), request.other_runs.begin(), request.other_runs.end());
    Args checkpoint_args({"--checkpoint", request.checkpoint}, {"checkpoint"}, {});
    std::vector<LoadedRun> runs;
    std::vector<ExploreInput> inputs;
    std::vector<ExploreOptions> options;
    LiveBundle bundle;
    for (const std::string& run_dir : run_dirs) {
        runs.push_back(load_run_from_args(checkpoint_args, run_dir));
        if (request.live)  // the engine first: a missing one fails before any decoding
            bundle = live_bundle(
                request.live_module.empty() ? default_live_module_dir() : request.live_module,
                runs.back(), run_dir);
        inputs.push_back(read_explore_input(request, runs.back().config));
        options.push_back(explore_options(request, runs.back()));
        if (inputs.size() > 1) check_same_test_set(run_dirs[0], inputs[0], run_dir, inputs.back());
    }
    std::vector<nlohmann::json> data;
    size_t refused = 0;
    for (size_t k = 0; k < runs.size(); ++k) {
        ExploreInput& input = inputs[k];
        if (input.sources.size() > size_t(request.limit)) {
            input.sources.resize(size_t(request.limit));
            if (!input.references.empty()) input.references.resize(size_t(request.limit));
        }
        fit_to_model(request, runs[k], input, refused);
        if (request.live) add_live_weights(request, runs[k], input, options[k], bundle, report);
        if (runs.size() > 1 && request.progress) fmt::print(stderr, "{}:\n", run_dirs[k]);
        data.push_back(explore_data(runs[k], run_dirs[k], input, options[k]));
    }
    std::string title = "seqgrad explore: " + run_dirs[0];
    for (size_t k = 1; k < run_dirs.size(); ++k) title += " vs " + run_dirs[k];
    std::string page =
        request.live ? explore_live_page(explore_runs_data(std::move(data)), title, bundle)
                     : explore_page(explore_runs_data(std::move(data)), title);
    if (report) {
        const ExploreInput& input = inputs[0];
        report->bytes = page.size();
        report->sentences = input.sources.size();
        report->available = input.available;
        report->refused = refused;
        if (report->available > report->sentences)
            report->left_out = fmt::format("left out {} of the {} sentences of {} (--limit {})",
                                           report->available - report->sentences,
                                           report->available, input.origin, request.limit);
    }
    return page;
}

ExploreReport run_explore(const ExploreRequest& request) {
    check_options(request);
    if (!request.other_runs.empty() && request.out.empty())
        throw Error(fmt::format(
            "explore: {} runs side by side need --out FILE.html (there is no one run directory "
            "to write into)",
            request.other_runs.size() + 1));
    const std::string out = !request.out.empty() ? request.out
                            : request.live       ? request.run_dir + "/live.html"
                                                 : request.run_dir + "/explore.html";
    check_writable(out);
    ExploreReport report;
    const std::string page = explore_html(request, &report);
    write_file_atomically(out, page);
    report.path = out;
    return report;
}

int cmd_explore(const Argv& argv) {
    Args args(argv,
              {"test", "input", "limit", "beam", "alpha", "nbest", "checkpoint", "what-if-steps",
               "out", "gradient-sentences", "ig-sentences", "ig-steps", "tape-sentences",
               "long-input", "live-module", "live-weights"},
              {"help", "no-gradients", "live"});
    if (args.has("help")) {
        fmt::print("{}{}", kHelp, kLongInputHelp);
        return 0;
    }
    if (args.positional().empty()) {
        fmt::print(stderr, "{}{}", kHelp, kLongInputHelp);
        return 2;
    }
    ExploreRequest request;
    request.run_dir = args.positional()[0];
    request.other_runs.assign(args.positional().begin() + 1, args.positional().end());
    request.test = args.get("test");
    request.input = args.get("input");
    // a live page decodes any sentence itself: fewer precomputed ones keep the file small
    request.limit = args.get_int("limit", args.has("live") ? 20 : 100);
    for (const char* option : {"beam", "nbest"})
        if (args.has(option) && args.get_int(option, 0) < 1)
            throw Error(
                fmt::format("--{}: expected a number >= 1, got {}", option, args.get(option)));
    request.beam = args.get_int("beam", 0);
    request.nbest = args.get_int("nbest", 0);
    request.alpha = args.get_double("alpha", std::nan(""));
    request.checkpoint = args.get("checkpoint", "best");
    request.what_if_steps = args.get_int("what-if-steps", 3);
    request.out = args.get("out");
    request.gradients = !args.has("no-gradients");
    request.gradient_sentences = args.get_int("gradient-sentences", 40);
    request.integrated_sentences = args.get_int("ig-sentences", 3);
    request.integrated_steps = args.get_int("ig-steps", 32);
    request.tape_sentences = args.get_int("tape-sentences", 3);
    request.long_input = args.get("long-input", "truncate");
    request.live = args.has("live");
    request.live_module = args.get("live-module");
    request.live_weights = args.get("live-weights");
    const ExploreReport r = run_explore(request);
    fmt::print("wrote {} ({}, {} sentences)\n", r.path, human_size(r.bytes), r.sentences);
    if (!r.left_out.empty()) fmt::print("{}\n", r.left_out);
    if (!r.live_weights.empty()) fmt::print("{}\n", r.live_weights);
    fmt::print("open it in a browser; FILE.html#sentence=N opens sentence N\n");
    if (r.refused > 0)
        fmt::print(stderr, "{} sentence{} left out as longer than the model reads\n", r.refused,
                   r.refused == 1 ? "" : "s");
    return r.refused > 0 ? 1 : 0;
}

}  // namespace seqgrad
