// The sub-commands of `seqgrad`. Each takes the arguments after its name and returns the exit
// status; errors are thrown as exceptions and printed by main.
#pragma once

#include <algorithm>
#include <cstddef>
#include <istream>
#include <limits>
#include <string>
#include <vector>

#include "apps/plot/plot.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/task.h"

namespace seqgrad {

struct TrainSummary;
struct Switches;
using Argv = std::vector<std::string>;

// `switches`: SEQGRAD_DISABLE, read once in main (autograd/kernels/switches.h); the model is
// built with the layer options they name (apps/cli/model_switches.h).
int cmd_train(const Argv& args, const Switches& switches);
int cmd_gradcheck(const Argv& args);
int cmd_gradflow(const Argv& args);
int cmd_translate(const Argv& args);
int cmd_eval(const Argv& args);
int cmd_attention(const Argv& args);
int cmd_saliency(const Argv& args);
int cmd_bleu(const Argv& args);
int cmd_explore(const Argv& args);
int cmd_plot(const Argv& args);
int cmd_exercises(const Argv& args);

// explore: what to show (0 = the default for beam and nbest, NaN alpha = the run's).
struct ExploreInput;  // apps/explore/explore_data.h
struct ExploreRequest {
    std::string run_dir, out, test, input, checkpoint = "best";
    // further runs shown side by side with run_dir (the same test sentences through each; --out
    // is then required)
    std::vector<std::string> other_runs;
    int limit = 100, beam = 0, nbest = 0, what_if_steps = 3;
    // saliency and gradient flow for the first gradient_sentences sentences; integrated
    // gradients for the first integrated_sentences
    bool gradients = true;
    int gradient_sentences = 40, integrated_sentences = 3, integrated_steps = 32;
    int tape_sentences = 3;  // the recorded graph of the first N sentences' loss
    double alpha = std::numeric_limits<double>::quiet_NaN();
    bool progress = true;
    std::string long_input = "truncate";  // or "refuse" (apps/cli/run_args.h, fit_sources)
    // --live: the engine inside the page (apps/explore/live/live_page.h), read from live_module
    // (default: default_live_module_dir())
    bool live = false;
    std::string live_module;
    // --live-weights: "f32" (the default when empty), "f16" or "auto"
    // (apps/explore/live/live_weights.h)
    std::string live_weights;
};
struct ExploreReport {
    std::string path;
    size_t bytes = 0, sentences = 0, available = 0;
    size_t refused = 0;        // sentences left out as longer than the model reads (--long-input)
    std::string left_out;      // what --limit left out, in words; empty when nothing
    std::string live_weights;  // --live: the weights' dtype, sizes and comparison, in words
};
// Writes the explore file atomically (default RUN_DIR/explore.html). Throws seqgrad::Error
// naming the option, path or file on bad input, and naming both runs and the first differing
// line when the runs compared do not share a test set.
ExploreReport run_explore(const ExploreRequest& request);
// The same page as a string, written nowhere (request.out is not used): what Python's
// seqgrad.explore shows inline. `report` (optional) receives the sizes (no path).
std::string explore_html(const ExploreRequest& request, ExploreReport* report = nullptr);
// explore: the sentences a run decodes: --input, --test (read as the run's config reads its test
// set), or the run's own test split; without --limit applied. Throws Error when there are none.
ExploreInput read_explore_input(const ExploreRequest& request, const Config& config);
int cmd_bpe(const Argv& args);
// `seqgrad average RUN_DIR --last N [--out NAME]` (apps/cli/cmd_average.cpp)
int cmd_average(const Argv& args);

// translate: the lines of `in`, without line ends; throws naming `name` and the 1-based line
// number on a line that is not valid UTF-8.
std::vector<std::string> read_utf8_lines(std::istream& in, const std::string& name);

// bleu: everything `seqgrad bleu ARGS` prints for the hypotheses on `hypotheses`.
std::string bleu_command_output(const Argv& args, std::istream& hypotheses);
// bleu: throws seqgrad::Error naming both counts and files when they differ.
void check_line_counts(const std::string& hyp_name, size_t hyp_lines, const std::string& ref_name,
                       size_t ref_lines);
// bleu --score-only: the score with `width` decimals, e.g. "48.5" for width 1.
std::string format_score_only(double score, int width);

// eval: the score lines — sacreBLEU BLEU and chrF against the raw references, then (for a
// pipeline that is not reversible) against references normalised like the output. `metrics`
// ("all", "bleu,bleu-lc", ...: data/score_definitions.h) asks for those definitions instead,
// one labelled line each with its signature. Throws Error on an unknown metric name.
std::string eval_scores_text(const Task& task, const std::string& pipeline_description,
                             const std::vector<std::string>& hypotheses,
                             const std::vector<std::string>& raw_references,
                             const std::string& metrics = "");
// eval: how many sources and references hold a token outside the vocabulary.
std::string unknown_share_text(const Task& task, const std::vector<SentencePair>& pairs);

// plot: what to draw from a CSV table (see `seqgrad plot --help`).
struct CsvPlotSpec {
    std::string x_column;
    std::vector<std::string> y_columns;  // one curve per column ...
    std::string group_column;            // ... and per distinct value of this one, if not empty
    bool log_x = false, log_y = false;
    std::string title, x_label, y_label;  // empty labels: the column names
};
// plot: the line plot of `csv_text` (RFC 4180, header first). Throws seqgrad::Error naming
// `csv_name`, the line and the column on a missing column, a ragged row, an unclosed quote or
// a field that is not a number (empty, nan and inf are gaps).
plot::LinePlot line_plot_from_csv(const std::string& csv_text, const std::string& csv_name,
                                  const CsvPlotSpec& spec);

// eval: how often sentences repeat themselves: immediate repeats ("the the": a word equal to the
// one before it) and repeated 3-grams (a 3-gram that already occurred earlier in its sentence).
struct RepeatCounts {
    size_t words = 0, immediate = 0, repeated_trigrams = 0;
    double immediate_per_1000() const {
        return 1000.0 * double(immediate) / double(std::max<size_t>(words, 1));
    }
    double trigrams_per_1000() const {
        return 1000.0 * double(repeated_trigrams) / double(std::max<size_t>(words, 1));
    }
};
RepeatCounts count_repeats(const std::vector<std::vector<std::string>>& sentences);
// eval --attention-stats: the share of source tokens (the <eos> excluded; subwords with BPE)
// whose attention weight stayed at or below `threshold` at every output step of the best
// hypothesis ("dropped words"); -1 when no translation has attention.
double dropped_source_share(const std::vector<Translation>& translations, double threshold = 0.3);
// eval: the mean output length and the repeat rates, of the output and of the references.
std::string output_stats_text(const RepeatCounts& output, const RepeatCounts& references,
                              size_t sentences);

// Redraws RUN_DIR/loss.svg from RUN_DIR/metrics.jsonl.
void write_loss_plot(const std::string& run_dir);
// train: the line printed at the end of a run (no validation loss when none ran).
std::string train_summary_line(const TrainSummary& summary);

}  // namespace seqgrad
