// Gradient flow through an encoder-decoder, with and without attention (`seqgrad gradflow`).
//
// The question: when the loss depends on the FIRST source tokens, how much gradient reaches
// the encoder's first steps, and how does that change with the source length L?
//
// For one batch whose sources all have length L, we run the model's own training forward pass
// (forward_loss with a ForwardRecord, teacher forcing), backpropagate the mean cross-entropy, and
// read
//   g_h(t) = ‖dL/dh_t‖   the gradient reaching the encoder state at step t (top layer; both
//                         directions concatenated when bidirectional), t = 1..L
//   g_e(t) = ‖dL/de_t‖   the gradient reaching the source embedding at step t
// for every batch row, and average them over the rows (and over several model seeds).
// Without attention, everything the decoder knows about x_1 has passed through L encoder
// steps, and so does every gradient that reaches h_1 — it is multiplied by L step Jacobians
// ∂h_{k+1}/∂h_k. With attention, the context vector is a weighted sum of ALL encoder states,
// so each h_t also gets a direct gradient from every decoder step: a path of length 1.
//
// Synthetic tasks (work for any L, for a fresh model):
//   copy     source x_1 .. x_L (random symbols), target x_1 .. x_K  <eos>
//   reverse  source x_1 .. x_L,                  target x_K .. x_1  <eos>
// K = target_length (0 = L: copy or reverse the whole sentence). With K fixed the decoder side
// is the same for every L, so only the distance to the encoder's first steps changes.
// Real-data tasks:
//   dates    source: generated human-readable dates joined by spaces, cut to exactly L
//            characters; target: the ISO form of the FIRST date (what the source starts with)
//   text     the same with the sentence pairs of a TSV run's validation split
// (dates and text use a run's vocabularies with --run, or, for dates, ones built from
// generated data for a fresh model.)
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "seqgrad/data/batching.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/model/transformer.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/models/training/grad_norms.h"

namespace seqgrad {

// GroupGradNorms, group_grad_norms: models/training/grad_norms.h (the groups `seqgrad train` logs)

// One forward + backward on one batch.
struct FlowMeasurement {
    int64_t batch = 0, length = 0;  // B and S (the longest source)
    // Per source position t = 0..S-1, the mean over the rows with t < length of the row's
    // gradient norm. Positions past a row's length are left out: there the GRU carries the
    // row's last state unchanged (the "state" is a copy of h_len, not a state of its own).
    std::vector<double> hidden;     // ‖dL/dh_t‖
    std::vector<double> embedding;  // ‖dL/de_t‖
    // The split of dL/dh_t. The encoder outputs the attention reads (EncodedSource::outputs,
    // gathered from the step states) are a graph node of their own, so their gradient at
    // [b, t] is the part of dL/dh_t that arrived directly through attention (the context
    // vectors); the rest, dL/dh_t − that, arrived through the recurrence (h_{t+1}, and at a
    // row's last step the decoder's initial state):
    std::vector<double> direct;     // ‖dL/d outputs[b, t]‖
    std::vector<double> recurrent;  // ‖dL/dh_t − dL/d outputs[b, t]‖
    std::vector<int> rows;          // rows counted at each position
    // ‖dL/de[b,t]‖ for every row b and position t (index b*S + t), padded positions included:
    // those are exactly 0 (a padded step is masked in the GRU).
    std::vector<double> embedding_per_row;
    double loss = 0;
    GroupGradNorms groups;
    // Attention diagnostics, from the same pass's record; NaN when the model has no attention
    // / no tanh MLP in its score:
    double saturation = NAN;  // share of the score MLP's tanh pre-activations with |x| > 3
                              // (bahdanau and luong_concat)
    double entropy = NAN;     // mean attention entropy −Σ_s w_s ln w_s (nats) per target token
    double entropy_ratio = NAN;  // the same divided by ln(row length): 1 = uniform weights
};

// Measures gradient flow for `batch` with one teacher-forced pass that keeps a ForwardRecord
// (models/model/forward_record.h). The model's parameter gradients are zeroed first and hold
// this batch's gradients afterwards. `diagnostics` false: without the attention diagnostics
// (saturation, entropy stay NaN).
// A model without a recurrent encoder (the Transformer) gets
//   hidden[t]    = ‖dL/d memory_t‖  the encoder's output at t, which only the decoder's
//                  cross-attention reads: all of its gradient arrives through cross-attention
//   embedding[t] = ‖dL/d x_t‖       the encoder's input (√E · embedding + position): its
//                  gradient arrives through the encoder's self-attention from every position and
//                  through the residual and feed-forward path of position t itself
// There is no recurrence, so the RNN's split into "directly through attention" and "through the
// recurrence" does not apply: direct and recurrent are NaN. No attention diagnostics (NaN).
FlowMeasurement measure_gradient_flow(TranslationModel& model, const Batch& batch,
                                      bool diagnostics = true);

// The tensors of one pass whose gradients a measurement reads, each retaining its gradient: the
// encoder's input [B,S,E], its outputs [B,S,K] (the node attention reads) and, with a
// recurrence, its top layer's state at every step, [direction][t], each [B, K/directions].
struct WatchedPass {
    Tensor input, outputs;
    std::vector<Tensor> states;  // empty: no recurrence (direct and recurrent are NaN)
    int directions = 1;
};
// After the backward pass: m's batch, length and per-position means over the rows b with
// t < lengths[b] (hidden, embedding, direct, recurrent, rows, embedding_per_row) as above.
void read_gradient_flow(const WatchedPass& watched, const std::vector<int32_t>& lengths,
                        FlowMeasurement& m);

// ‖g[offset : offset + n]‖² of a gradient buffer (nullptr = no gradient reached the tensor: 0).
double row_norm_sq(const real* grad, int64_t offset, int64_t n);

// ---- the study -------------------------------------------------------------------------------

struct GradflowOptions {
    // attention kinds (--attention, or its older name --models); "transformer" is the
    // Transformer encoder-decoder (model.kind "transformer", sizes below), one model whatever
    // the cells
    std::vector<std::string> models{"none", "bahdanau", "luong_dot", "luong_general"};
    std::vector<std::string> cells{"gru"};  // recurrent cells (--cells rnn,gru,lstm)
    std::vector<int> lengths{5, 10, 20, 30, 40, 50, 60};
    std::string task = "copy";  // copy | reverse | dates | text | adding | copy_memory
    int target_length = 5;      // copy / reverse: K (0 = the whole source)
    int symbols = 20;           // copy / reverse with a fresh model: distinct source tokens
    int batch_size = 32;
    int seeds = 3;                // model initialisations (fresh) or data batches (--run) averaged
    uint64_t seed = 1;            // first seed
    int train_steps = 0;          // > 0: also measure after this many Adam steps on the task
    std::vector<int> measure_at;  // and after these steps (< train_steps), as stage "stepN"
    double lr = 2e-3;             // Adam learning rate for train_steps
    double clip_norm = 1;         // gradient clipping for train_steps
    ModelConfig model;            // for fresh models (attention is taken from `models`)
    // adding / copy_memory (apps/studies/longrange_model.h): lengths are T; each model is trained
    // on its own T until the mean loss of the last `window` steps is below `threshold` (default: a
    // tenth of the memoryless baseline) or train_steps have run. model.hidden_size is the hidden
    // size of the reference model, a GRU without attention; every other cell × attention gets
    // the hidden size whose parameter count is closest to the reference's (equal budgets).
    double threshold = 0;  // 0: baseline / 10
    int window = 20;
    // >= 0: run only this one of the `seeds` seeds (the same numbers as in a run of all of
    // them), to spread a long study over several processes
    int seed_index = -1;
    // Trained runs to study instead of fresh models (their `best` checkpoints); `seeds` then
    // averages over data batches.
    std::vector<std::string> run_dirs;
    std::string out_dir = "gradflow";
    bool quiet = false;
    int threads = 1;  // BLAS threads
    // the Transformer of "transformer": d_model = model.hidden_size, heads, ff_size and the
    // depth of both stacks (post-norm, sinusoidal positions, no dropout). adding / copy_memory:
    // a causal Transformer of `transformer_layers` layers and `heads` heads whose size (a
    // multiple of heads, FF 2·size) matches the reference's parameter budget
    // (apps/studies/longrange_model.h); ff_size is not used there
    int heads = 4, ff_size = 128, transformer_layers = 2;
    GradflowOptions() {
        model.embedding_size = 32;
        model.hidden_size = 64;
        model.attention_size = 64;
    }
};

// The fresh models a study compares, in order: every cell × attention kind, and "transformer"
// once (it has no cell) where the first cell's models are. Named "cell+attention" ("transformer"
// alone), or by the attention alone when `short_names` and the only cell is the default GRU.
struct StudiedModel {
    std::string cell, attention, name;
};
std::vector<StudiedModel> studied_models(const GradflowOptions& options, bool short_names);

// One (model, stage, L) of the study, averaged over the seeds.
struct FlowCurve {
    std::string model;  // "none", "bahdanau", "transformer"... (or the run's attention kind or
                        // "transformer"); with several
                        // cells or a long-range task "cell+attention", e.g. "lstm+bahdanau"
    std::string stage;  // "fresh" (new model), "run" (loaded from a run), "stepN" (after N
                        // training steps) or "trained" (after all of them)
    int length = 0;
    std::vector<double> hidden, embedding;  // [L], averaged over rows and seeds
    // hidden split (apps/studies/gradflow.h, measure_gradient_flow): the part that arrives directly
    // through attention, and the rest (through h_{t+1}; at the last step also the bridge)
    std::vector<double> direct, recurrent;
    double loss = 0, saturation = NAN, entropy = NAN, entropy_ratio = NAN;
    GroupGradNorms groups;
};

// The mean of measurements over seeds, per (model, stage, L): add() sums one measurement (the
// first sizes the curves; saturation and entropy only where measured), mean() divides.
struct FlowCurveSum {
    FlowCurve curve;
    int count = 0, saturation_count = 0, entropy_count = 0;
    void add(const FlowMeasurement& m);
    FlowCurve mean() const;
};

// One optimizer step of the optional training phase.
struct TrainRecord {
    std::string model;
    int seed = 0;
    int step = 0;
    int length = 0;
    double loss = 0;
    GroupGradNorms groups;  // before clipping
};

// One model trained to the loss threshold (adding / copy_memory).
struct ThresholdRun {
    std::string cell, attention;
    int length = 0, seed = 0;
    int64_t hidden_size = 0, parameters = 0;
    int reached_at = -1;  // first step with the window mean below the threshold; -1: never
    int steps_run = 0;
    double final_loss = 0;
};

struct GradflowReport {
    std::vector<FlowCurve> curves;
    std::vector<TrainRecord> training;
    std::vector<ThresholdRun> threshold_runs;
};

// Runs the whole study (no files written).
GradflowReport run_gradflow(const GradflowOptions& options);

// Writes gradflow.csv, summary.csv, training.csv (with training) and the SVG plots into
// options.out_dir; returns the paths written.
std::vector<std::string> write_gradflow_outputs(const GradflowReport& report,
                                                const GradflowOptions& options);

// The summary table printed by the command: model, stage, L, ‖dL/dh_1‖, ‖dL/dh_L‖, ratio, ...
std::string gradflow_summary_table(const GradflowReport& report);

// A batch of `batch` synthetic copy/reverse pairs with sources of exactly `length` tokens drawn
// from ids [4, 4 + symbols); target ids are the same ids.
Batch synthetic_batch(const std::string& task, int length, int target_length, int symbols,
                      int batch, Rng& rng);

}  // namespace seqgrad
