// apps/attention/: reading attention out of a model, for `seqgrad attention`, `saliency`, `explore`
// and the live page.
//
// Reading an attention matrix: for every output step, where did the decoder look, and how
// sharply? Used by `seqgrad attention`, kept apart from the command so it can be tested on
// hand-made matrices.
//
// The matrix has one row per output token (EOS included) and one column per source position
// (the source's EOS included); row t is the softmax the decoder computed at step t, so it is
// non-negative and sums to 1. For a row w over S positions:
//
//   most attended position   argmax_s w_s, and its weight max_s w_s
//   entropy                  H = -Σ_s w_s ln w_s   (nats; 0 ln 0 = 0)
//                            0 for a one-hot row, ln S for a uniform row
//   normalised entropy       H / ln S, in [0, 1]   (0 when S = 1: one position cannot spread)
//
// Failure modes a learner should learn to read, and how the diagnosis names them:
//   dispersed   normalised entropy > 0.9 (AttentionThresholds::dispersed): the weights are
//               close to uniform, the context vector is roughly the mean of all encoder states,
//               and the decoder is not really attending. Common early in training, in models
//               that learned to ignore attention, and on inputs unlike the training data.
//   stuck on <eos>  the argmax sits on the last column (the source's EOS) for many steps:
//               the encoder's final state is being used as a summary of the whole sentence.
//   non-monotonic   for translation between languages with similar word order, the argmax
//               mostly moves left to right; the summary reports the share of consecutive steps
//               whose argmax does not move left, "roughly monotonic" at >= 0.8
//               (AttentionThresholds::monotonic). The date task legitimately reorders (the
//               ISO output starts with the year, usually written last), so there a good model
//               need not be monotonic.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "apps/plot/plot.h"

namespace seqgrad {

struct AttentionThresholds {
    double dispersed = 0.9;  // a step is dispersed when its normalised entropy exceeds this
    double monotonic = 0.8;  // roughly monotonic when this share of moves is not leftwards
};

// The reading of one row (one output step).
struct AttentionStep {
    size_t argmax = 0;              // the most attended source position (first one on ties)
    double max_weight = 0;          // its weight
    double entropy = 0;             // H in nats
    double normalized_entropy = 0;  // H / ln S
    bool dispersed = false;         // normalized_entropy > thresholds.dispersed
};

struct AttentionDiagnosis {
    std::vector<AttentionStep> steps;  // one per row
    size_t source_positions = 0;       // S, the number of columns
    double mean_normalized_entropy = 0;
    double dispersed_share = 0;     // share of steps flagged dispersed
    double forward_share = 1;       // share of consecutive step pairs whose argmax does not move
                                    // left (1 when there are fewer than two steps)
    bool roughly_monotonic = true;  // forward_share >= thresholds.monotonic
    double last_column_share = 0;   // share of steps whose argmax is the last column (<eos>)
};

// Diagnoses `weights` (rows = output steps, columns = source positions). Throws
// std::invalid_argument if there are no rows, a row is empty or of a different length than the
// first, a weight is negative or not finite, or a row does not sum to 1 (within 1e-3).
AttentionDiagnosis diagnose_attention(const std::vector<std::vector<double>>& weights,
                                      const AttentionThresholds& thresholds = {});

// A token as a label a person can read: a space (the character tokenizer's word separator)
// becomes "␣", other white space and empty tokens become visible too.
std::string display_token(const std::string& token);

// Attention over subwords merged into words (`seqgrad attention --words`). A token ending with
// the BPE separator ("Hun@@") continues into the next one ("ger"): together they are the word
// "Hunger". A source word's weight is the sum of its subwords' weights (the attention mass the
// decoder put on the word); an output word's row is the mean of its subwords' rows (so every
// row still sums to 1). Labels are the words, without the "@@" and the "￭" joiner marks.
struct WordAttention {
    std::vector<std::string> source_words, output_words;
    std::vector<std::vector<double>> weights;  // [output words][source words]
};
WordAttention merge_subword_attention(const std::vector<std::string>& source_tokens,
                                      const std::vector<std::string>& output_tokens,
                                      const std::vector<std::vector<double>>& weights,
                                      const std::string& separator = "@@");

// The text report: a table with one line per output step (output token, most attended input
// token, its weight, entropy in nats, normalised entropy, a DISPERSED flag), then the summary.
// `source_tokens` and `output_tokens` label the columns and rows of the diagnosed matrix (same
// counts). `dates_task` adds the remark that the date task reorders its input.
std::string format_attention_report(const AttentionDiagnosis& diagnosis,
                                    const std::vector<std::string>& source_tokens,
                                    const std::vector<std::string>& output_tokens, bool dates_task,
                                    const AttentionThresholds& thresholds = {});

// The heatmap of `weights`: rows labelled by the output tokens, columns by the source tokens
// (both through display_token), colour scale 0..1. Render it with plot::heatmap_svg().
plot::Heatmap attention_heatmap(const std::vector<std::string>& source_tokens,
                                const std::vector<std::string>& output_tokens,
                                const std::vector<std::vector<double>>& weights,
                                const std::string& title = "");

// The same matrix as CSV: a header "output,<source tokens...>", then one line per output token
// with its weights.
std::string attention_csv(const std::vector<std::string>& source_tokens,
                          const std::vector<std::string>& output_tokens,
                          const std::vector<std::vector<double>>& weights);

}  // namespace seqgrad
