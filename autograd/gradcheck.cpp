#include "seqgrad/autograd/gradcheck.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/rng.h"

namespace seqgrad {

GradcheckResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
    GradcheckResult result;
    Tensor probe = fn(inputs);
    if (!probe.requires_grad())
        throw Error("gradcheck: the function's output does not require grad");

    // L = Σ w ⊙ f(x), with weights drawn once from a seeded generator in [-1, 1].
    Rng rng(options.seed);
    std::vector<real> weights(probe.numel());
    for (auto& w : weights) w = real(rng.uniform(-1, 1));
    Tensor weight = Tensor::from_vector(probe.shape(), weights);
    auto loss_at = [&]() {
        NoGradGuard no_grad;
        Tensor out = fn(inputs);
        double total = 0;
        for (int64_t i = 0; i < out.numel(); ++i) total += double(out.data()[i]) * weights[i];
        return total;
    };

    for (const Tensor& in : inputs)
        if (in.requires_grad()) const_cast<Tensor&>(in).zero_grad();
    probe.backward(weight);

    double worst_violation = -1;
    for (size_t k = 0; k < inputs.size(); ++k) {
        Tensor input = inputs[k];
        if (!input.requires_grad()) continue;
        result.inputs_checked++;
        std::vector<real> analytic(input.numel(), 0);
        if (input.grad_data())
            std::copy(input.grad_data(), input.grad_data() + input.numel(), analytic.begin());
        for (int64_t i = 0; i < input.numel(); ++i) {
            real saved = input.data()[i];
            input.data()[i] = saved + real(options.eps);
            double plus = loss_at();
            input.data()[i] = saved - real(options.eps);
            double minus = loss_at();
            input.data()[i] = saved;
            double numeric = (plus - minus) / (2 * options.eps);
            double a = analytic[i];
            double err = std::fabs(a - numeric);
            double scale = std::max(std::fabs(a), std::fabs(numeric));
            result.elements_checked++;
            result.max_abs_error = std::max(result.max_abs_error, err);
            if (scale > 1e-10) result.max_rel_error = std::max(result.max_rel_error, err / scale);
            double violation = err - (options.atol + options.rtol * std::fabs(numeric));
            if (!(violation <= 0) || !std::isfinite(a)) {
                result.passed = false;
                if (!(violation <= worst_violation)) {
                    worst_violation = std::isfinite(violation) ? violation : 1e300;
                    result.worst = fmt::format(
                        "input {} {} element {}: analytic {:.10g} vs "
                        "numeric {:.10g}",
                        k, input.shape().str(), i, a, numeric);
                }
            }
        }
        const_cast<Tensor&>(inputs[k]).zero_grad();
    }
    return result;
}

}  // namespace seqgrad
