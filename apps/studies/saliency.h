// Saliency: how much each source token mattered to each output token, read from gradients, to be
// set beside attention (which shows where the decoder looked, not what changed its output).
//
// For a decoded hypothesis y_1..y_T (<eos> included) of a source of S positions (<eos>
// included), let e_s ∈ R^E be the source token's embedding at position s (what an RNN encoder
// reads; a Transformer's encoder reads √E · e_s + P[s], so its positions stay when e is scaled
// to the baseline 0), and
//   f_t(e) = log p(y_t | y_<t, x)   computed by the model from the embeddings e.
// Then, per output step t and source position s:
//   grad_norm             G_ts = ‖∂f_t/∂e_s‖₂             how sensitive y_t is to e_s (≥ 0)
//   grad_input            X_ts = Σ_d e_sd ∂f_t/∂e_sd       the first-order change of f_t when e_s
//                                                         is set to zero (signed)
//   integrated_gradients  I_ts = Σ_d e_sd ∫₀¹ ∂f_t/∂e_sd(α e) dα   (Sundararajan et al. 2017)
//                         with the baseline e = 0, the integral by the midpoint rule over K steps,
//                         α_k = (k + ½)/K.  Completeness: Σ_s I_ts = f_t(e) − f_t(0), up to the
//                         rule's error, O(1/K²).
// Every f_t and its gradient at every α come from one batch of T·K rows through the model (row
// (t, k) reads α_k e and is differentiated at its own step t), so one backward pass gives them
// all; the parameters' gradients are not computed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqgrad/models/model/translation_model.h"

namespace seqgrad {

enum class SaliencyMethod { grad_norm, grad_input, integrated_gradients };

// E of e: the source embedding's size (model.embedding_size of an RNN model, model.d_model of a
// Transformer, whose encoder reads √E · e + P).
int64_t source_embedding_size(const TranslationModel& model);

// "grad_norm", "grad_input", "integrated_gradients"; parse throws naming the method and the
// three it accepts.
const char* saliency_method_name(SaliencyMethod method);
SaliencyMethod parse_saliency_method(const std::string& name);

// f_t(α e) and ∂f_t/∂e at α e, for every output step t and every α in `scales`.
struct OutputGradients {
    int64_t steps = 0, scales = 0, positions = 0, dim = 0;  // T, K, S, E
    std::vector<double> log_probs;                          // [T][K]: f_t(α_k e)
    std::vector<double> gradients;                          // [T][K][S][E]: ∂f_t/∂e at α_k e
    double log_prob(int64_t t, int64_t k) const { return log_probs[size_t(t * scales + k)]; }
    const double* gradient(int64_t t, int64_t k) const {
        return gradients.data() + (t * scales + k) * positions * dim;
    }
};
// One sentence: its source ids (<eos> included) and the hypothesis to explain.
struct SaliencyInput {
    std::vector<int32_t> source_ids, outputs;
};
// For each sentence (their rows share batches, padded as in decoding), one result per input:
// embeddings[i] holds e of inputs[i], [S_i,E] row-major; the source ids only count positions.
// Throws naming the sizes when embeddings[i] is not S_i·E values or an output is empty.
std::vector<OutputGradients> output_gradients(const TranslationModel& model,
                                              const std::vector<SaliencyInput>& inputs,
                                              const std::vector<std::vector<double>>& embeddings,
                                              const std::vector<double>& scales);

// e: the encoder's embeddings of `source_ids` (<eos> included), [S,E] row-major.
std::vector<double> source_embeddings(const TranslationModel& model,
                                      const std::vector<int32_t>& source_ids);

struct SaliencyOptions {
    bool integrated_gradients = false;  // also I (costs K times the rest)
    int steps = 32;                     // K, >= 1
};

struct Saliency {
    // [T][S] each; integrated_gradients empty unless asked
    std::vector<std::vector<double>> grad_norm, grad_input, integrated_gradients;
    std::vector<double> log_probs;           // f_t(e)
    std::vector<double> baseline_log_probs;  // f_t(0) (with integrated gradients)
    int steps = 0;                           // K (with integrated gradients)
    const std::vector<std::vector<double>>& values(SaliencyMethod method) const;
    std::vector<std::vector<double>>& values(SaliencyMethod method);
};
// Throws on steps < 1, naming --steps.
Saliency compute_saliency(const TranslationModel& model, const std::vector<int32_t>& source_ids,
                          const std::vector<int32_t>& outputs, const SaliencyOptions& options);
// Several sentences at once (what `seqgrad explore` does for its test set).
std::vector<Saliency> compute_saliency(const TranslationModel& model,
                                       const std::vector<SaliencyInput>& inputs,
                                       const SaliencyOptions& options);

// Attention beside saliency, per output step: whether the most attended and the most salient
// position are the same, and the Spearman rank correlation of the two rows (ranks of equal
// values averaged; 0 when a row is constant). Signed saliency (grad_input, integrated gradients)
// is compared by magnitude: a position that pushes y_t down matters as much as one that pushes
// it up.
struct Agreement {
    std::vector<bool> argmax_agrees;  // per step
    std::vector<double> spearman;     // per step
    double argmax_share = 0;          // share of steps whose argmax agrees
    double mean_spearman = 0;
};
Agreement attention_agreement(const std::vector<std::vector<double>>& attention,
                              const std::vector<std::vector<double>>& saliency);
double spearman_correlation(const std::vector<double>& x, const std::vector<double>& y);

// The CSV `seqgrad saliency --csv` writes: step,output_token,source_position,source_token,
// method,value[,attention], one line per (step, position, method in `methods`), steps and
// positions 1-based. `attention` empty: no attention column.
std::string saliency_csv(const Saliency& saliency, const std::vector<SaliencyMethod>& methods,
                         const std::vector<std::string>& source_tokens,
                         const std::vector<std::string>& output_tokens,
                         const std::vector<std::vector<double>>& attention);

}  // namespace seqgrad
