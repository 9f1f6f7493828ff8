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
// a thousand decoders at once; the scales are split into chunks of at most this many rows.
constexpr int64_t kMaxRows = 256;

// One chunk: scales [k0, k1). Row r = (T-1-t)·n + j reads α_{k0+j} e and is differentiated at
// step t, so the rows still needed at decoder step t (those of steps >= t) are a prefix.
void gradients_of_chunk(const Seq2Seq& model, const std::vector<double>& e, int64_t S,
                        const std::vector<int32_t>& outputs, const std::vector<double>& scales,
                        int64_t k0, int64_t k1, OutputGradients& out) {
    const int64_t T = int64_t(outputs.size()), E = out.dim, n = k1 - k0, R = T * n;
    std::vector<real> rows(size_t(R * S * E));
    for (int64_t r = 0; r < R; ++r) {
        const double alpha = scales[size_t(k0 + r % n)];
        for (int64_t i = 0; i < S * E; ++i)
            rows[size_t(r * S * E + i)] = real(alpha * e[size_t(i)]);
    }
    Tensor embedded = Tensor::from_vector({R, S, E}, rows, /*requires_grad=*/true);
    EncodedSource source =
        model.encode_embedded(embedded, std::vector<int32_t>(size_t(R), int32_t(S)));
    DecoderState state = model.initial_state(source);
    const int64_t V = model.vocab_size();
    Tensor objective;
    for (int64_t t = 0; t < T; ++t) {
        const int64_t running = (T - t) * n;  // rows of steps t..T-1
        if (running != state.rows())
            for (Tensor& x : state.tensors) x = slice(x, 0, 0, running);
        const int32_t previous = t == 0 ? int32_t(Vocab::SOS) : outputs[size_t(t - 1)];
        StepResult step = model.step(std::vector<int32_t>(size_t(running), previous), state);
        // the last n rows are those of step t: f_t = their log-probability of y_t
        const Tensor mine = slice(step.log_probs, 0, running - n, running);  // [n, V]
        const int32_t y = outputs[size_t(t)];
        if (y < 0 || y >= V)
            throw Error(
                fmt::format("saliency: output token {} at step {} is outside the target "
                            "vocabulary of {}",
                            y, t + 1, V));
        std::vector<real> pick(size_t(n * V), real(0));
        for (int64_t j = 0; j < n; ++j) {
            pick[size_t(j * V + y)] = real(1);
            out.log_probs[size_t(t * out.scales + k0 + j)] = double(mine.data()[j * V + y]);
        }
        const Tensor picked = sum(mul(mine, Tensor::from_vector({n, V}, pick)));
        objective = objective.defined() ? add(objective, picked) : picked;
    }
    objective.backward();  // row (t, j)'s gradient is ∂f_t/∂e at α_j e: the rows share nothing
    const real* g = embedded.grad_data();
    if (!g) return;  // no path from the embeddings to the outputs: the gradients stay zero
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < n; ++j) {
            const real* from = g + ((T - 1 - t) * n + j) * S * E;
            double* to = out.gradients.data() + (t * out.scales + k0 + j) * S * E;
            for (int64_t i = 0; i < S * E; ++i) to[i] = double(from[i]);
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

std::vector<double> source_embeddings(const Seq2Seq& model,
                                      const std::vector<int32_t>& source_ids) {
    NoGradGuard no_grad;
    const Tensor e =
        model.encoder.embedding.forward(source_ids, {int64_t(source_ids.size())});  // [S,E]
    return std::vector<double>(e.data(), e.data() + e.numel());
}

OutputGradients output_gradients(const Seq2Seq& model, const std::vector<double>& embeddings,
                                 int64_t positions, const std::vector<int32_t>& outputs,
                                 const std::vector<double>& scales) {
    const int64_t E = model.config().embedding_size;
    if (positions < 1 || int64_t(embeddings.size()) != positions * E)
        throw Error(
            fmt::format("saliency: {} embedding values for {} source positions of "
                        "dimension {} (expected {})",
                        embeddings.size(), positions, E, positions * E));
    if (outputs.empty()) throw Error("saliency: the hypothesis has no output token");
    if (!grad_enabled())
        throw Error(
            "saliency: grad mode is off (called under a NoGradGuard): the gradients of "
            "the outputs cannot be recorded");
    if (scales.empty()) throw Error("saliency: no scale to differentiate at");
    OutputGradients out;
    out.steps = int64_t(outputs.size());
    out.scales = int64_t(scales.size());
    out.positions = positions;
    out.dim = E;
    out.log_probs.assign(size_t(out.steps * out.scales), 0.0);
    out.gradients.assign(size_t(out.steps * out.scales * positions * E), 0.0);
    FrozenParameters frozen(model);
    const int64_t chunk = std::max<int64_t>(1, kMaxRows / out.steps);
    for (int64_t k0 = 0; k0 < out.scales; k0 += chunk)
        gradients_of_chunk(model, embeddings, positions, outputs, scales, k0,
                           std::min(out.scales, k0 + chunk), out);
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

Saliency compute_saliency(const Seq2Seq& model, const std::vector<int32_t>& source_ids,
                          const std::vector<int32_t>& outputs, const SaliencyOptions& options) {
    if (options.integrated_gradients && options.steps < 1)
        throw Error(
            fmt::format("--steps {}: integrated gradients need at least 1 step", options.steps));
    const int64_t S = int64_t(source_ids.size()), E = model.config().embedding_size;
    const std::vector<double> e = source_embeddings(model, source_ids);
    // scale 1 (the input itself), then 0 (the baseline) and the midpoints α_k
    std::vector<double> scales = {1.0};
    if (options.integrated_gradients) {
        scales.push_back(0.0);
        for (int k = 0; k < options.steps; ++k) scales.push_back((k + 0.5) / double(options.steps));
    }
    const OutputGradients g = output_gradients(model, e, S, outputs, scales);
    Saliency out;
    const size_t T = outputs.size();
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
    if (!options.integrated_gradients) return out;
    out.steps = options.steps;
    out.integrated_gradients.assign(T, std::vector<double>(size_t(S), 0.0));
    for (size_t t = 0; t < T; ++t) {
        out.baseline_log_probs.push_back(g.log_prob(int64_t(t), 1));
        for (int64_t k = 2; k < g.scales; ++k) {
            const double* grad = g.gradient(int64_t(t), k);
            for (int64_t s = 0; s < S; ++s) {
                double dot = 0;
                for (int64_t d = 0; d < E; ++d) dot += grad[s * E + d] * e[size_t(s * E + d)];
                out.integrated_gradients[t][size_t(s)] += dot / double(options.steps);
            }
        }
    }
    return out;
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
