// Where log(softmax(x)) composed from seqgrad ops breaks and log_softmax(x) does not (docs/
// claims.md, claim 10). Built twice: log_softmax_stability (real = float) and
// log_softmax_stability_f64 (real = double).
//
// Two logits x = [d, 0], so p_0 = 1 / (1 + e^-d) (the likely class) and p_1 = e^-d / (1 + e^-d);
// the loss is the cross-entropy −log p_t, written as seqgrad's composed cross-entropy writes it
// (layers/loss.h, cross_entropy_composed): −Σ_k onehot_k log p_k; backward gives d loss / dx. Three
// forms:
//   log(softmax(x))           seqgrad's softmax (stable: the max is subtracted), then log
//   log(exp(x) / Σ exp(x))    the textbook formula, op by op, nothing subtracted
//   log_softmax(x)            x − max − log Σ exp(x − max), in one op
// Prints, for each form and target, the loss and the gradient at a few d against the exact
// values (in long double), then the first d (scanning 0..1000 in steps of 0.01) where the loss,
// or the gradient, is not finite, or the loss is off by more than 1e-3 · max(1, exact loss)
// (relative for large losses, absolute for small ones), or the gradient by more than 1e-3.
//
// usage: log_softmax_stability [--csv FILE]   (the table as CSV, for the page)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "apps/cli/args.h"
#include "seqgrad/autograd/ops.h"

using namespace seqgrad;

namespace {

struct Form {
    const char* name;
    std::function<Tensor(const Tensor&)> log_probs;
};

const Form kForms[] = {
    {"log(softmax(x))", [](const Tensor& x) { return log(softmax(x)); }},
    {"log(exp(x)/sum(exp(x)))",
     [](const Tensor& x) {
         Tensor e = exp(x);
         return log(div(e, sum(e, -1, true)));
     }},
    {"log_softmax(x)", [](const Tensor& x) { return log_softmax(x); }},
};

struct Point {
    double loss, grad0, grad1;
};

// −log p_t and its gradient by `form` at x = [d, 0].
Point evaluate(const Form& form, double d, int target) {
    Tensor x = Tensor::from_vector({1, 2}, {real(d), real(0)}, true);
    Tensor onehot = Tensor::from_vector({1, 2}, {real(target == 0), real(target == 1)});
    Tensor loss = mul(sum(mul(onehot, form.log_probs(x))), real(-1));
    loss.backward();
    return {double(loss.item()), double(x.grad_data()[0]), double(x.grad_data()[1])};
}

// The exact values: −log p_t and d/dx = p − onehot.
Point exact(double d, int target) {
    const long double e = std::exp(-static_cast<long double>(d));
    const long double p1 = e / (1 + e), p0 = 1 / (1 + e);
    const long double loss = target == 0 ? std::log1p(e) : d + std::log1p(e);
    return {double(loss), double(p0 - (target == 0)), double(p1 - (target == 1))};
}

bool finite(const Point& p) {
    return std::isfinite(p.grad0) && std::isfinite(p.grad1);
}

std::string number(double v) {
    return fmt::format("{:.6g}", v);
}

}  // namespace

int main(int argc, char** argv) try {
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"csv"}, {});
    const char* precision = sizeof(real) == 4 ? "float" : "double";
    std::ostringstream csv;
    csv << "real,form,target,d,loss,exact_loss,grad0,grad1,exact_grad0,exact_grad1\n";
    fmt::print("real = {}; x = [d, 0]; loss = -log p_target; grad = d loss / d(x_0, x_1)\n\n",
               precision);
    const double ds[] = {1, 20, 50, 80, 88, 90, 100, 104, 110, 200, 700, 709, 710, 745, 800};
    for (int target : {0, 1}) {
        fmt::print("target {} ({} class)\n", target, target == 0 ? "the likely" : "the unlikely");
        fmt::print("{:>5} {:>14} | {:>26} {:>26} {:>26}\n", "d", "exact loss", kForms[0].name,
                   kForms[1].name, kForms[2].name);
        for (double d : ds) {
            const Point e = exact(d, target);
            std::string line = fmt::format("{:>5} {:>14.6g} |", d, e.loss);
            for (const Form& form : kForms) {
                const Point p = evaluate(form, d, target);
                line += fmt::format(" {:>11.5g} g=[{:>5.2g},{:>5.2g}]", p.loss, p.grad0, p.grad1);
                csv << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", precision, form.name, target,
                                   d, number(p.loss), number(e.loss), number(p.grad0),
                                   number(p.grad1), number(e.grad0), number(e.grad1));
            }
            fmt::print("{}\n", line);
        }
        fmt::print("\n");
    }
    fmt::print("first d in 0..1000 (step 0.01) where it fails:\n");
    fmt::print("{:>26} {:>6} {:>16} {:>16} {:>18} {:>18}\n", "form", "target", "loss not finite",
               "grad not finite", "loss error > 1e-3", "grad error > 1e-3");
    for (const Form& form : kForms)
        for (int target : {0, 1}) {
            std::string bad_loss = "never", bad_grad = "never", inaccurate = "never";
            std::string wrong_grad = "never";
            for (int k = 0; k <= 100000; ++k) {
                const double d = k * 0.01;
                const Point p = evaluate(form, d, target), e = exact(d, target);
                if (bad_loss == "never" && !std::isfinite(p.loss)) bad_loss = number(d);
                if (bad_grad == "never" && !finite(p)) bad_grad = number(d);
                if (inaccurate == "never" &&
                    !(std::fabs(p.loss - e.loss) <= 1e-3 * std::max(1.0, e.loss)))
                    inaccurate = number(d);
                if (wrong_grad == "never" &&
                    !(std::fabs(p.grad0 - e.grad0) <= 1e-3 && std::fabs(p.grad1 - e.grad1) <= 1e-3))
                    wrong_grad = number(d);
                if (bad_loss != "never" && bad_grad != "never" && inaccurate != "never" &&
                    wrong_grad != "never")
                    break;
            }
            fmt::print("{:>26} {:>6} {:>16} {:>16} {:>18} {:>18}\n", form.name, target, bad_loss,
                       bad_grad, inaccurate, wrong_grad);
        }
    if (args.has("csv")) {
        std::ofstream out(args.get("csv"));
        out << csv.str();
        out.close();
        if (!out)
            throw Error(fmt::format("log_softmax_stability: cannot write {}", args.get("csv")));
    }
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "log_softmax_stability: {}\n", e.what());
    return 1;
}
