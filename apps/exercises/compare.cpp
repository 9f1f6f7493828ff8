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

const char* const kOverwrittenGradient =
    "the gradient was overwritten (=), not accumulated (+=): an input may feed several ops";
const char* const kNullParentGrad =
    "parent_grad returned nullptr for an input that needs no gradient: check it before writing";

namespace {

// The learner's forward, then backward from `weight`: "" or why the backward cannot run.
std::string learner_backward(Grader& g, const GradCase& c, const std::vector<Tensor>& inputs,
                             const Tensor& weight, const std::string& backward_phase = "backward") {
    g.phase("forward");
    Tensor out = c.learner(inputs);
    if (!out.defined() || out.shape() != weight.shape())
        return "the forward's shape is wrong (see the forward check)";
    if (!out.requires_grad())
        return "the result records no backward: call record(out, ...) with the inputs";
    g.phase(backward_phase);
    out.backward(weight);
    g.phase("checking");
    return "";
}

// The reference's gradients of `inputs` from `weight` (empty for an input needing none).
std::vector<std::vector<double>> reference_gradients(const GradCase& c,
                                                     const std::vector<Tensor>& inputs,
                                                     const Tensor& weight) {
    for (Tensor t : inputs) t.zero_grad();
    c.reference(inputs).backward(weight);
    std::vector<std::vector<double>> out;
    for (Tensor t : inputs) {
        out.push_back(t.requires_grad() ? gradient(t) : std::vector<double>{});
        t.zero_grad();
    }
    return out;
}

Tensor reference_weight(const GradCase& c) {
    NoGradGuard no_graph;
    return upstream_gradient(c.reference(c.inputs).shape());
}

// Input i's gradient against `want`; "" or the difference, one line.
std::string compare_gradient(const Tensor& input, const std::vector<double>& want,
                             CompareContext context, const std::string& what) {
    context.shape = dims(input);
    return compare(what, gradient(input), want, context);
}

void add_line(std::string& text, const std::string& line) {
    if (!line.empty()) text += (text.empty() ? "" : "\n") + line;
}

// Every input's gradient already holds something (another op reading it ran its backward
// first): the learner's backward must add its own gradient to it, the one it gives from zero.
std::string check_accumulates(Grader& g, const GradCase& c) {
    const Tensor weight = reference_weight(c);
    for (Tensor t : c.inputs) t.zero_grad();
    std::string why = learner_backward(g, c, c.inputs, weight);
    if (!why.empty()) {
        for (Tensor t : c.inputs) t.zero_grad();
        return why;
    }
    std::vector<std::vector<double>> from_zero, before;
    Rng rng(98);
    for (Tensor t : c.inputs) {
        from_zero.push_back(gradient(t));
        t.zero_grad();
        std::vector<double> filled(size_t(t.numel()));
        if (t.requires_grad()) {
            real* grad = t.mutable_grad_data();
            for (int64_t k = 0; k < t.numel(); ++k) grad[k] = real(rng.uniform(0.5, 1.5));
            filled = gradient(t);
        }
        before.push_back(filled);
    }
    why = learner_backward(g, c, c.inputs, weight);
    std::string failures;
    for (size_t i = 0; why.empty() && i < c.inputs.size(); ++i) {
        if (!c.inputs[i].requires_grad()) continue;
        // overwritten: each element either got the sum or only the learner's own part (an op
        // that writes some elements, e.g. not the ignored rows, leaves the others as they were)
        const std::vector<double> got = gradient(c.inputs[i]);
        std::vector<double> want(before[i]), overwritten(from_zero[i]);
        for (size_t k = 0; k < want.size(); ++k) {
            want[k] += from_zero[i][k];
            if (close(got[k], want[k], 1e-9, 1e-7)) overwritten[k] = want[k];
        }
        CompareContext context;
        context.alternatives = {{kOverwrittenGradient, overwritten}};
        add_line(failures, compare_gradient(c.inputs[i], want, context,
                                            "d" + c.names[i] + " (holding a gradient already)"));
    }
    for (Tensor t : c.inputs) t.zero_grad();
    return why.empty() ? failures : why;
}

// Each input in turn needs no gradient while backward still runs: parent_grad returns nullptr
// for it, and the others' gradients stay right. With other inputs needing one, the input is a
// constant from the start (a mask, a frozen weight); when it is the only one, it stops needing
// a gradient between the forward and the backward (a one-input op's backward runs only then).
// Runs in a child process: check_in_child names a crash.
std::string check_input_without_gradient(Grader& g, const GradCase& c) {
    const Tensor weight = reference_weight(c);
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        if (!c.inputs[i].requires_grad()) continue;
        bool others = false;
        for (size_t j = 0; j < c.inputs.size(); ++j)
            others = others || (j != i && c.inputs[j].requires_grad());
        auto copies = [&] {
            std::vector<Tensor> out;
            for (size_t j = 0; j < c.inputs.size(); ++j)
                out.push_back(c.inputs[j].detach().set_requires_grad(c.inputs[j].requires_grad() &&
                                                                     (j != i || !others)));
            return out;
        };
        const std::string without = c.names[i] + ": requires_grad false";
        std::vector<Tensor> inputs = copies();
        std::string why;
        if (others) {
            why = learner_backward(g, c, inputs, weight, "backward (" + without + ")");
        } else {
            g.phase("forward");
            Tensor out = c.learner(inputs);
            if (!out.defined() || out.shape() != weight.shape() || !out.requires_grad())
                return "";  // the backward check says what is wrong
            inputs[i].set_requires_grad(false);
            g.phase("backward (" + without + ")");
            out.backward(weight);
            g.phase("checking");
        }
        if (!why.empty()) return why + " (" + without + ")";
        if (!others) continue;
        std::vector<Tensor> reference_inputs = copies();
        const auto want = reference_gradients(c, reference_inputs, weight);
        std::string failures;
        for (size_t j = 0; j < c.inputs.size(); ++j) {
            if (!inputs[j].requires_grad()) continue;
            CompareContext context =
                j < c.grad_contexts.size() ? c.grad_contexts[j] : CompareContext{};
            context.alternatives.push_back(
                {"no gradient at all: a backward that returns when one parent_grad is nullptr "
                 "leaves the other inputs without theirs; check each one on its own",
                 std::vector<double>(want[j].size(), 0.0)});
            add_line(failures, compare_gradient(inputs[j], want[j], context,
                                                "d" + c.names[j] + " (" + without + ")"));
        }
        if (!failures.empty()) return failures;  // the first input that shows it is enough
    }
    return "";
}

}  // namespace

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
        const Tensor weight = reference_weight(c);
        const auto want = reference_gradients(c, c.inputs, weight);
        std::string failures = learner_backward(g, c, c.inputs, weight);
        if (!failures.empty()) return failures;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
            if (!c.inputs[i].requires_grad()) continue;
            CompareContext context =
                i < c.grad_contexts.size() ? c.grad_contexts[i] : CompareContext{};
            add_line(failures, compare_gradient(c.inputs[i], want[i], context, "d" + c.names[i]));
        }
        for (Tensor t : c.inputs) t.zero_grad();
        return failures;
    });
    g.check(c.label + ": backward adds to a gradient already there",
            [&] { return check_accumulates(g, c); });
    g.check_in_child(
        c.label + ": backward with an input that needs no gradient",
        [&] { return check_input_without_gradient(g, c); }, kNullParentGrad);
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
