#include "apps/studies/saliency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "apps/plot/plot.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/data/vocab.h"

namespace seqgrad {
namespace {

// The parameters stop requiring grad while it lives (their gradients are not wanted here, and
// not computing them halves the backward pass); restored on exit.
class FrozenParameters {
  public:
    explicit FrozenParameters(const Module& model) : parameters_(model.parameters()) {
        for (Tensor& p : parameters_) {
            was_.push_back(p.requires_grad());
            p.set_requires_grad(false);
        }
    }
    ~FrozenParameters() {
        for (size_t i = 0; i < parameters_.size(); ++i) parameters_[i].set_requires_grad(was_[i]);
    }
    FrozenParameters(const FrozenParameters&) = delete;
    FrozenParameters& operator=(const FrozenParameters&) = delete;

  private:
    std::vector<Tensor> parameters_;
    std::vector<bool> was_;
};

// Rows kept per batch: T·K rows of a long sentence at 32 steps would hold every activation of
// a thousand decoders at once; the rows are split into chunks of at most this many.
constexpr size_t kMaxRows = 256;

// One row of the batch: sentence i's source at scale α_k, differentiated at output step t.
struct Row {
    size_t sentence;
    int64_t step, scale;
};

// The rows' source embeddings, row r = α_{scale} · sentence's embeddings padded to the longest
// source: a leaf [R,S,E] to differentiate; `lengths` the rows' source lengths.
Tensor scaled_embeddings(const std::vector<SaliencyInput>& inputs,
                         const std::vector<std::vector<double>>& embeddings,
                         const std::vector<double>& scales, const std::vector<Row>& rows, int64_t E,
                         std::vector<int32_t>& lengths) {
    const int64_t R = int64_t(rows.size());
    int64_t S = 0;
    for (const Row& r : rows) S = std::max(S, int64_t(inputs[r.sentence].source_ids.size()));
    std::vector<real> values(size_t(R * S * E), real(0));
    lengths.clear();
    for (int64_t r = 0; r < R; ++r) {
        const Row& row = rows[size_t(r)];
        const std::vector<double>& e = embeddings[row.sentence];
        const double alpha = scales[size_t(row.scale)];
        for (size_t i = 0; i < e.size(); ++i) values[size_t(r * S * E) + i] = real(alpha * e[i]);
        lengths.push_back(int32_t(inputs[row.sentence].source_ids.size()));
    }
    return Tensor::from_vector({R, S, E}, values, /*requires_grad=*/true);
}

// Σ f_t over the rows [first, running) of step t (log_probs [running, V]: the step's output),
// each row's f_t also kept in its OutputGradients.
Tensor objective_of_step(const Tensor& log_probs, int64_t first, int64_t running, int64_t t,
                         const std::vector<SaliencyInput>& inputs, const std::vector<Row>& rows,
                         std::vector<OutputGradients>& out) {
    const int64_t n = running - first, V = log_probs.size(1);
    const Tensor mine = slice(log_probs, 0, first, running);  // [n, V]
    std::vector<real> pick(size_t(n * V), real(0));
    for (int64_t j = 0; j < n; ++j) {
        const Row& row = rows[size_t(first + j)];
        const int32_t y = inputs[row.sentence].outputs[size_t(t)];
        pick[size_t(j * V + y)] = real(1);
        OutputGradients& o = out[row.sentence];
        o.log_probs[size_t(t * o.scales + row.scale)] = double(mine.data()[j * V + y]);
    }
    return sum(mul(mine, Tensor::from_vector({n, V}, pick)));
}

// f_t and ∂f_t/∂x for `rows` (at most kMaxRows), in one forward and one backward pass. Sources of
// different lengths are padded (the encoder and attention mask the padding, as in decoding);
// the rows are sorted by decreasing t, so the rows still needed at decoder step τ (those with
// t >= τ) are a prefix, and the rows of step τ the end of that prefix.
void gradients_of_rows(const TranslationModel& model, const std::vector<SaliencyInput>& inputs,
                       const std::vector<std::vector<double>>& embeddings,
                       const std::vector<double>& scales, std::vector<Row> rows,
                       std::vector<OutputGradients>& out) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.step > b.step; });
    const int64_t R = int64_t(rows.size()), E = source_embedding_size(model);
    std::vector<int32_t> lengths;
    Tensor embedded = scaled_embeddings(inputs, embeddings, scales, rows, E, lengths);
    std::unique_ptr<DecoderState> state = model.start_decoding_embedded(embedded, lengths);
    Tensor objective;
    int64_t running = R;
    for (int64_t t = 0; t <= rows.front().step; ++t) {
        while (running > 0 && rows[size_t(running - 1)].step < t) --running;  // rows of t..T-1
        if (running != state->rows()) {  // the leading rows, still in the graph
            std::vector<int32_t> leading(static_cast<size_t>(running));
            std::iota(leading.begin(), leading.end(), 0);
            state = state->select(leading);
        }
        std::vector<int32_t> previous;
        for (int64_t r = 0; r < running; ++r) {
            const Row& row = rows[size_t(r)];
            previous.push_back(t == 0 ? int32_t(Vocab::SOS)
                                      : inputs[row.sentence].outputs[size_t(t - 1)]);
        }
        StepResult step = model.step(previous, *state);
        int64_t first = running;  // the rows of step t: [first, running)
        while (first > 0 && rows[size_t(first - 1)].step == t) --first;
        if (first == running) continue;
        const Tensor picked =
            objective_of_step(step.log_probs, first, running, t, inputs, rows, out);
        objective = objective.defined() ? add(objective, picked) : picked;
    }
    objective.backward();  // row r's gradient is its own f_t's: the rows share nothing
    const real* g = embedded.grad_data();
    if (!g) return;  // no path from the embeddings to the outputs: the gradients stay zero
    const int64_t S = embedded.size(1);
    for (int64_t r = 0; r < R; ++r) {
        const Row& row = rows[size_t(r)];
        OutputGradients& o = out[row.sentence];
        const int64_t n = o.positions * E;
        double* to = o.gradients.data() + (row.step * o.scales + row.scale) * n;
        for (int64_t i = 0; i < n; ++i) to[i] = double(g[r * S * E + i]);
    }
}

std::vector<double> ranks(const std::vector<double>& x) {
    std::vector<size_t> order(x.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
        for (size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * double(i + j);  // ties: mean rank
        i = j + 1;
    }
    return r;
}

size_t argmax(const std::vector<double>& row) {
    return size_t(std::max_element(row.begin(), row.end()) - row.begin());
}

}  // namespace

int64_t source_embedding_size(const TranslationModel& model) {
    const ModelConfig& c = model.config();
    return c.kind == "transformer" ? c.d_model : c.embedding_size;
}

const char* saliency_method_name(SaliencyMethod method) {
    switch (method) {
        case SaliencyMethod::grad_norm:
            return "grad_norm";
        case SaliencyMethod::grad_input:
            return "grad_input";
        case SaliencyMethod::integrated_gradients:
            return "integrated_gradients";
    }
    return "?";
}

SaliencyMethod parse_saliency_method(const std::string& name) {
    for (SaliencyMethod m : {SaliencyMethod::grad_norm, SaliencyMethod::grad_input,
                             SaliencyMethod::integrated_gradients})
        if (name == saliency_method_name(m)) return m;
    throw Error(
        fmt::format("--method {}: unknown saliency method (expected grad_norm, grad_input or "
                    "integrated_gradients)",
                    name));
}

std::vector<double> source_embeddings(const TranslationModel& model,
                                      const std::vector<int32_t>& source_ids) {
    NoGradGuard no_grad;
    const Tensor e = model.source_token_embeddings(source_ids);  // [S,E]
    return std::vector<double>(e.data(), e.data() + e.numel());
}

std::vector<OutputGradients> output_gradients(const TranslationModel& model,
                                              const std::vector<SaliencyInput>& inputs,
                                              const std::vector<std::vector<double>>& embeddings,
                                              const std::vector<double>& scales) {
    const int64_t E = source_embedding_size(model), V = model.vocab_size();
    if (embeddings.size() != inputs.size())
        throw Error(fmt::format("saliency: {} embedding lists for {} sentences", embeddings.size(),
                                inputs.size()));
    if (scales.empty()) throw Error("saliency: no scale to differentiate at");
    if (!grad_enabled())
        throw Error(
            "saliency: grad mode is off (called under a NoGradGuard): the gradients of "
            "the outputs cannot be recorded");
    std::vector<OutputGradients> out(inputs.size());
    std::vector<Row> rows;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const int64_t S = int64_t(inputs[i].source_ids.size());
        if (S < 1 || int64_t(embeddings[i].size()) != S * E)
            throw Error(
                fmt::format("saliency: {} embedding values for {} source positions of "
                            "dimension {} (expected {})",
                            embeddings[i].size(), S, E, S * E));
        if (inputs[i].outputs.empty()) throw Error("saliency: the hypothesis has no output token");
        for (size_t t = 0; t < inputs[i].outputs.size(); ++t)
            if (inputs[i].outputs[t] < 0 || inputs[i].outputs[t] >= V)
                throw Error(
                    fmt::format("saliency: output token {} at step {} is outside the "
                                "target vocabulary of {}",
                                inputs[i].outputs[t], t + 1, V));
        OutputGradients& o = out[i];
        o.steps = int64_t(inputs[i].outputs.size());
        o.scales = int64_t(scales.size());
        o.positions = S;
        o.dim = E;
        o.log_probs.assign(size_t(o.steps * o.scales), 0.0);
        o.gradients.assign(size_t(o.steps * o.scales * S * E), 0.0);
        for (int64_t k = 0; k < o.scales; ++k)
            for (int64_t t = 0; t < o.steps; ++t) rows.push_back({i, t, k});
    }
    FrozenParameters frozen(model);
    for (size_t first = 0; first < rows.size(); first += kMaxRows) {
        const size_t last = std::min(rows.size(), first + kMaxRows);
        gradients_of_rows(model, inputs, embeddings, scales,
                          std::vector<Row>(rows.begin() + long(first), rows.begin() + long(last)),
                          out);
    }
    return out;
}

const std::vector<std::vector<double>>& Saliency::values(SaliencyMethod method) const {
    switch (method) {
        case SaliencyMethod::grad_input:
            return grad_input;
        case SaliencyMethod::integrated_gradients:
            if (integrated_gradients.empty())
                throw Error("saliency: integrated gradients were not computed");
            return integrated_gradients;
        default:
            return grad_norm;
    }
}

std::vector<std::vector<double>>& Saliency::values(SaliencyMethod method) {
    return const_cast<std::vector<std::vector<double>>&>(std::as_const(*this).values(method));
}

std::vector<Saliency> compute_saliency(const TranslationModel& model,
                                       const std::vector<SaliencyInput>& inputs,
                                       const SaliencyOptions& options) {
    if (options.integrated_gradients && options.steps < 1)
        throw Error(
            fmt::format("--steps {}: integrated gradients need at least 1 step", options.steps));
    const int64_t E = source_embedding_size(model);
    std::vector<std::vector<double>> embeddings;
    for (const SaliencyInput& in : inputs)
        embeddings.push_back(source_embeddings(model, in.source_ids));
    // scale 1 (the input itself), then 0 (the baseline) and the midpoints α_k
    std::vector<double> scales = {1.0};
    if (options.integrated_gradients) {
        scales.push_back(0.0);
        for (int k = 0; k < options.steps; ++k) scales.push_back((k + 0.5) / double(options.steps));
    }
    const std::vector<OutputGradients> all = output_gradients(model, inputs, embeddings, scales);
    std::vector<Saliency> result;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const OutputGradients& g = all[i];
        const std::vector<double>& e = embeddings[i];
        const int64_t S = g.positions;
        const size_t T = size_t(g.steps);
        Saliency out;
        out.grad_norm.assign(T, std::vector<double>(size_t(S), 0.0));
        out.grad_input = out.grad_norm;
        for (size_t t = 0; t < T; ++t) {
            out.log_probs.push_back(g.log_prob(int64_t(t), 0));
            const double* grad = g.gradient(int64_t(t), 0);
            for (int64_t s = 0; s < S; ++s) {
                double norm2 = 0, dot = 0;
                for (int64_t d = 0; d < E; ++d) {
                    norm2 += grad[s * E + d] * grad[s * E + d];
                    dot += grad[s * E + d] * e[size_t(s * E + d)];
                }
                out.grad_norm[t][size_t(s)] = std::sqrt(norm2);
                out.grad_input[t][size_t(s)] = dot;
            }
        }
        if (options.integrated_gradients) {
            out.steps = options.steps;
            out.integrated_gradients.assign(T, std::vector<double>(size_t(S), 0.0));
            for (size_t t = 0; t < T; ++t) {
                out.baseline_log_probs.push_back(g.log_prob(int64_t(t), 1));
                for (int64_t k = 2; k < g.scales; ++k) {
                    const double* grad = g.gradient(int64_t(t), k);
                    for (int64_t s = 0; s < S; ++s) {
                        double dot = 0;
                        for (int64_t d = 0; d < E; ++d)
                            dot += grad[s * E + d] * e[size_t(s * E + d)];
                        out.integrated_gradients[t][size_t(s)] += dot / double(options.steps);
                    }
                }
            }
        }
        result.push_back(std::move(out));
    }
    return result;
}

Saliency compute_saliency(const TranslationModel& model, const std::vector<int32_t>& source_ids,
                          const std::vector<int32_t>& outputs, const SaliencyOptions& options) {
    return compute_saliency(model, {SaliencyInput{source_ids, outputs}}, options)[0];
}

double spearman_correlation(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size())
        throw Error(fmt::format("spearman_correlation: {} values against {}", x.size(), y.size()));
    const std::vector<double> rx = ranks(x), ry = ranks(y);
    const double n = double(x.size());
    const double mean = (n - 1) / 2;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

Agreement attention_agreement(const std::vector<std::vector<double>>& attention,
                              const std::vector<std::vector<double>>& saliency) {
    if (attention.size() != saliency.size())
        throw Error(fmt::format("attention_agreement: {} attention rows for {} saliency rows",
                                attention.size(), saliency.size()));
    Agreement a;
    for (size_t t = 0; t < attention.size(); ++t) {
        std::vector<double> magnitude = saliency[t];
        for (double& v : magnitude) v = std::fabs(v);
        const bool agrees = !magnitude.empty() && argmax(attention[t]) == argmax(magnitude);
        a.argmax_agrees.push_back(agrees);
        a.spearman.push_back(spearman_correlation(attention[t], magnitude));
        a.argmax_share += agrees;
        a.mean_spearman += a.spearman.back();
    }
    if (!attention.empty()) {
        a.argmax_share /= double(attention.size());
        a.mean_spearman /= double(attention.size());
    }
    return a;
}

std::string saliency_csv(const Saliency& saliency, const std::vector<SaliencyMethod>& methods,
                         const std::vector<std::string>& source_tokens,
                         const std::vector<std::string>& output_tokens,
                         const std::vector<std::vector<double>>& attention) {
    std::vector<std::string> header = {"step",         "output_token", "source_position",
                                       "source_token", "method",       "value"};
    if (!attention.empty()) header.push_back("attention");
    std::vector<std::vector<std::string>> rows;
    for (size_t t = 0; t < output_tokens.size(); ++t)
        for (size_t s = 0; s < source_tokens.size(); ++s)
            for (SaliencyMethod m : methods) {
                std::vector<std::string> row = {
                    std::to_string(t + 1),   output_tokens[t],
                    std::to_string(s + 1),   source_tokens[s],
                    saliency_method_name(m), fmt::format("{:.6g}", saliency.values(m).at(t).at(s))};
                if (!attention.empty()) row.push_back(fmt::format("{:.6g}", attention.at(t).at(s)));
                rows.push_back(std::move(row));
            }
    return plot::to_csv(header, rows);
}

}  // namespace seqgrad
