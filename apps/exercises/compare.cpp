// Comparing the learner's numbers with the library's, and naming the pattern of a difference.
#include <fmt/format.h>

#include <cmath>

#include "apps/exercises/grader.h"
#include "seqgrad/autograd/gradcheck.h"

namespace seqgrad::grading {
namespace {

bool close(double got, double want, double atol, double rtol) {
    if (std::isinf(want) || std::isinf(got)) return got == want;
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

bool all_close(const std::vector<double>& got, const std::vector<double>& want, double atol,
               double rtol) {
    if (got.size() != want.size()) return false;
    for (size_t i = 0; i < got.size(); ++i)
        if (!close(got[i], want[i], atol, rtol)) return false;
    return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, ","));
}

// The pattern of a difference, or "".
std::string pattern(const std::vector<double>& got, const std::vector<double>& want,
                    const CompareContext& c) {
    const double atol = std::max(c.atol, 1e-9) * 10, rtol = std::max(c.rtol, 1e-7) * 10;
    for (const auto& [label, alternative] : c.alternatives)
        if (all_close(got, alternative, atol, rtol)) return label;
    for (size_t i = 0; i < got.size(); ++i)
        if (!std::isfinite(got[i]) && std::isfinite(want[i]))
            return fmt::format("{} at {}{}", std::isnan(got[i]) ? "NaN" : "inf",
                               format_index(c.shape, int64_t(i)),
                               c.nan_hint.empty() ? "" : ": " + c.nan_hint);
    if (!c.masked.empty())
        for (size_t i = 0; i < got.size() && i < c.masked.size(); ++i)
            if (c.masked[i] && got[i] != 0 && want[i] == 0)
                return fmt::format(
                    "gradient reaching masked positions: {} is padded and must get exactly 0, "
                    "got {:.6g} (set padded scores to -inf BEFORE the softmax)",
                    format_index(c.shape, int64_t(i)), got[i]);
    double gw = 0, ww = 0, wmax = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::isfinite(want[i]))
            gw += got[i] * want[i], ww += want[i] * want[i],
                wmax = std::max(wmax, std::fabs(want[i]));
    if (wmax > 1e-6) {
        std::vector<double> negated(want.size());
        for (size_t i = 0; i < want.size(); ++i) negated[i] = -want[i];
        if (all_close(got, negated, atol, rtol)) return "sign flipped (got = −expected everywhere)";
        const double factor = gw / ww;
        std::vector<double> scaled(want.size());
        for (size_t i = 0; i < want.size(); ++i) scaled[i] = factor * want[i];
        if (std::fabs(factor - 1) > 1e-3 && std::fabs(factor) > 1e-6 &&
            all_close(got, scaled, atol, rtol))
            return fmt::format("off by a factor: got = {:.6g} × expected everywhere", factor);
    }
    const auto& s = c.shape;
    if (s.size() >= 2 && s[s.size() - 1] == s[s.size() - 2] && s.back() > 1) {
        const int64_t n = s.back(), block = n * n;
        std::vector<double> transposed(want.size());
        for (size_t b = 0; b + size_t(block) <= want.size(); b += size_t(block))
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j)
                    transposed[b + size_t(i * n + j)] = want[b + size_t(j * n + i)];
        if (all_close(got, transposed, atol, rtol))
            return "transposed (got[..., i, j] = expected[..., j, i])";
    }
    return "";
}

}  // namespace

std::string format_index(const std::vector<int64_t>& shape, int64_t flat) {
    if (shape.empty()) return fmt::format("[{}]", flat);
    std::vector<int64_t> index(shape.size());
    int64_t rest = flat;
    for (size_t d = shape.size(); d-- > 0;) {
        const int64_t n = std::max<int64_t>(shape[d], 1);
        index[d] = rest % n;
        rest /= n;
    }
    return shape_text(index);
}

std::string compare(const std::string& what, const std::vector<double>& got,
                    const std::vector<double>& expected, const CompareContext& c) {
    if (got.size() != expected.size())
        return fmt::format("{}: {} elements, expected {} (shape {})", what, got.size(),
                           expected.size(), shape_text(c.shape));
    size_t first = got.size();
    for (size_t i = 0; i < got.size(); ++i)
        if (!close(got[i], expected[i], c.atol, c.rtol) &&
            !(std::isnan(got[i]) && std::isnan(expected[i]))) {
            first = i;
            break;
        }
    if (first == got.size()) return "";
    std::string text =
        fmt::format("{}: first difference at {}: got {:.9g}, expected {:.9g}", what,
                    format_index(c.shape, int64_t(first)), got[first], expected[first]);
    std::string why = pattern(got, expected, c);
    return why.empty() ? text : text + "; " + why;
}

std::vector<double> values(const Tensor& t) {
    return std::vector<double>(t.data(), t.data() + t.numel());
}
std::vector<double> gradient(const Tensor& t) {
    if (!t.has_grad()) return std::vector<double>(size_t(t.numel()), 0.0);
    return std::vector<double>(t.grad_data(), t.grad_data() + t.numel());
}
std::vector<int64_t> dims(const Tensor& t) {
    std::vector<int64_t> d;
    for (int i = 0; i < t.rank(); ++i) d.push_back(t.size(i));
    return d;
}

Tensor random_leaf(Rng& rng, const Shape& shape, double lo, double hi, bool requires_grad) {
    std::vector<real> v(size_t(shape.numel()));
    for (auto& x : v) x = real(rng.uniform(lo, hi));
    return Tensor::from_vector(shape, v, requires_grad);
}

Tensor upstream_gradient(const Shape& shape) {
    Rng rng(99);
    return random_leaf(rng, shape, -1, 1, false);
}

void check_gradients(Grader& g, const GradCase& c) {
    g.check(c.label + ": forward", [&]() -> std::string {
        g.phase("forward");
        Tensor got = c.learner(c.inputs);
        g.phase("checking");
        Tensor want = c.reference(c.inputs);
        if (!got.defined()) return "returned an undefined tensor";
        if (got.shape() != want.shape())
            return fmt::format("shape {}, expected {}", got.shape().str(), want.shape().str());
        CompareContext context = c.forward_context;
        context.shape = dims(want);
        return compare(c.output, values(got), values(want), context);
    });
    g.check(c.label + ": backward vs seqgrad", [&]() -> std::string {
        for (Tensor t : c.inputs) t.zero_grad();
        Tensor want_out = c.reference(c.inputs);
        Tensor weight = upstream_gradient(want_out.shape());
        want_out.backward(weight);
        std::vector<std::vector<double>> want;
        for (Tensor t : c.inputs) want.push_back(gradient(t)), t.zero_grad();
        g.phase("forward");
        Tensor got_out = c.learner(c.inputs);
        if (!got_out.defined() || got_out.shape() != want_out.shape())
            return "the forward's shape is wrong (see the forward check)";
        if (!got_out.requires_grad())
            return "the result records no backward: call record(out, ...) with the inputs";
        g.phase("backward");
        got_out.backward(weight);
        g.phase("checking");
        std::string failures;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
            if (!c.inputs[i].requires_grad()) continue;
            CompareContext context =
                i < c.grad_contexts.size() ? c.grad_contexts[i] : CompareContext{};
            context.shape = dims(c.inputs[i]);
            std::string why = compare("d" + c.names[i], gradient(c.inputs[i]), want[i], context);
            if (!why.empty()) failures += (failures.empty() ? "" : "\n") + why;
        }
        for (Tensor t : c.inputs) t.zero_grad();
        return failures;
    });
    if (!c.finite_differences) return;
    g.check(c.label + ": backward vs central differences", [&]() -> std::string {
        g.phase("backward");
        GradcheckResult r = gradcheck(c.learner, c.inputs);
        for (Tensor t : c.inputs) t.zero_grad();
        if (r.passed) return "";
        std::string names;
        for (size_t i = 0; i < c.names.size(); ++i)
            names += fmt::format("{}{} = {}", i ? ", " : "", i, c.names[i]);
        return fmt::format("largest error {:.3g} (relative {:.3g}) at {} (inputs: {})",
                           r.max_abs_error, r.max_rel_error, r.worst, names);
    });
}

}  // namespace seqgrad::grading
