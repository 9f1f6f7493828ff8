// Fused vs composed cross-entropy, forward + backward, in float (the training library).
//
//   fused     cross_entropy: one op, log-sum-exp and the gradient (softmax − target) written in
//             the same pass, backward = one scaled add
//   composed  cross_entropy_composed: log_softmax, mul by the target distribution, sum, scale:
//             four ops, three of them over [N, V], plus building the [N, V] target distribution
//
// Shapes: logits [N, V] with V = 6000 (the target vocabulary of the design's reference model),
// N = 32 (one decoder step of a batch of 32) and N = 320 (all target tokens of a batch of 32
// sentences of ~10 tokens: how training calls it, once after the recurrence). Every 10th
// target is ignore_index (padding). Prints the median over repetitions, the ratio, and the
// largest difference between the two gradients (float: the fused op's exp is vectorised).
//
// Usage: cross_entropy [seconds_per_measurement (default 1)]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <vector>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/rng.h"
#include "seqgrad/layers/loss.h"

using namespace seqgrad;

namespace {

// Median milliseconds of fn over repetitions filling `seconds`, after a short warm-up.
double median_ms(const std::function<void()>& fn, double seconds) {
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t) {
        return std::chrono::duration<double>(Clock::now() - t).count();
    };
    for (auto warm = Clock::now(); since(warm) < 0.2;) fn();
    std::vector<double> ms;
    for (auto start = Clock::now(); since(start) < seconds || ms.size() < 10;) {
        auto t0 = Clock::now();
        fn();
        ms.push_back(since(t0) * 1e3);
    }
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    set_blas_threads(1);
    const int64_t V = 6000;
    const int32_t ignore_index = 0;
    fmt::print("cross-entropy forward+backward, float, V = {}, median of repetitions\n", V);
    fmt::print("{:>6} {:>10} {:>12} {:>14} {:>8} {:>14}\n", "N", "smoothing", "fused ms",
               "composed ms", "ratio", "max |Δgrad|");
    for (int64_t N : {32, 320})
        for (real smoothing : {real(0), real(0.1)}) {
            Rng rng(1);
            std::vector<real> values(N * V);
            for (auto& x : values) x = real(rng.normal() * 3);
            std::vector<int32_t> targets(N);
            for (int64_t i = 0; i < N; ++i)
                targets[i] = i % 10 == 9 ? ignore_index : int32_t(1 + rng.below(V - 1));
            Tensor logits = Tensor::from_vector({N, V}, values, true);
            auto run = [&](bool fused) {
                return [&, fused]() {
                    logits.zero_grad();
                    Tensor loss = fused ? cross_entropy(logits, targets, ignore_index,
                                                        Reduction::mean, smoothing)
                                        : cross_entropy_composed(logits, targets, ignore_index,
                                                                 Reduction::mean, smoothing);
                    loss.backward();
                };
            };
            // In float the fused op uses a vectorised exp: check it still agrees with the twin.
            run(true)();
            std::vector<real> fused_grad = logits.grad().to_vector();
            run(false)();
            std::vector<real> composed_grad = logits.grad().to_vector();
            double max_diff = 0;
            for (size_t i = 0; i < fused_grad.size(); ++i)
                max_diff = std::max(max_diff, double(std::fabs(fused_grad[i] - composed_grad[i])));
            double fused = median_ms(run(true), seconds);
            double composed = median_ms(run(false), seconds);
            fmt::print("{:>6} {:>10} {:>12.3f} {:>14.3f} {:>7.2f}x {:>14.2g}\n", N, smoothing,
                       fused, composed, composed / fused, max_diff);
        }
    return 0;
}
