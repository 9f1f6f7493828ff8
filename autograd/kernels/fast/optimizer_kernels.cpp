// The fast optimizer passes (autograd/kernels/kernels.h): the same maths as optim/'s plain loops
// (optim/adam.cpp, optim/sgd.cpp, optim/clip.cpp), arranged for speed. A pass over all
// parameters is memory-bound, so the arrays are cut between seqgrad's threads
// (autograd/kernels/parallel.h), each adding its core's bandwidth; each update mode is a
// branch-free loop the compiler vectorises (8 floats per AVX instruction).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "seqgrad/autograd/kernels/fast/kernels.h"
#include "seqgrad/autograd/kernels/parallel.h"

namespace seqgrad::kernels::fast {
namespace {

// An array smaller than this goes whole to one thread: 32K floats = 128 KB, enough work to be
// worth a share of a worker's wake-up (~10 µs).
constexpr int64_t kGrain = 32 * 1024;

// ---- Adam
// ----------------------------------------------------------------------------------------

// The constants of one Adam step, rounded to real once, in PyTorch's arrangement of the update:
//   w ← w − (lr / (1 − β1^t)) · m / (√v · (1 / √(1 − β2^t)) + eps)
struct AdamConstants {
    real step_size;     // lr / (1 − β1^t)
    real inv_bc2_sqrt;  // 1 / √(1 − β2^t)
    real beta2, one_minus_beta1, one_minus_beta2, eps;
    real wd;     // Adam's L2 term: g ← g + wd · w
    real decay;  // AdamW's w ← w · (1 − lr · wd)
    real grad_scale;
    bool l2, decoupled;
};

AdamConstants adam_constants(const AdamStep& s) {
    const double t = double(s.t);
    AdamConstants c;
    c.step_size = real(s.lr / (1 - std::pow(s.beta1, t)));
    c.inv_bc2_sqrt = real(1 / std::sqrt(1 - std::pow(s.beta2, t)));
    c.beta2 = real(s.beta2);
    c.one_minus_beta1 = real(1 - s.beta1);
    c.one_minus_beta2 = real(1 - s.beta2);
    c.eps = real(s.eps);
    c.wd = real(s.weight_decay);
    c.decay = real(1 - s.lr * s.weight_decay);
    c.grad_scale = s.grad_scale;
    c.l2 = !s.decoupled && s.weight_decay != 0;
    c.decoupled = s.decoupled && s.weight_decay != 0;
    return c;
}

// One parameter's update, a template per mode; restrict: the four arrays never overlap.
// m is updated as PyTorch's lerp does, m + (g − m)(1 − β1) = β1 m + (1 − β1) g.
template <bool L2, bool Decoupled, bool Scaled>
void adam_loop(const AdamConstants& c, int64_t n, const real* __restrict grad, real* __restrict w,
               real* __restrict m, real* __restrict v) {
    for (int64_t i = 0; i < n; ++i) {
        real g = Scaled ? grad[i] * c.grad_scale : grad[i];
        if constexpr (Decoupled) w[i] *= c.decay;
        if constexpr (L2) g += c.wd * w[i];
        const real m_new = m[i] + (g - m[i]) * c.one_minus_beta1;  // β1 m + (1−β1) g (lerp)
        const real v_new = v[i] * c.beta2 + c.one_minus_beta2 * g * g;
        m[i] = m_new;
        v[i] = v_new;
        w[i] -= c.step_size * m_new / (std::sqrt(v_new) * c.inv_bc2_sqrt + c.eps);
    }
}

// Without a scale (the usual unclipped step) g is used as it is: not even a multiplication by 1,
// which would let the compiler fuse differently and change last bits.
// zero: the gradient is cleared block by block, each block right after its update, while it is
// still in L1. Cleared inside the loop, GCC split the loop into the update and a memset of the
// whole range, which read every gradient from memory a second time (docs/performance.md).
template <bool L2, bool Decoupled>
void adam_blocks(const AdamConstants& c, bool zero, int64_t n, real* grad, real* w, real* m,
                 real* v) {
    constexpr int64_t kBlock = 1024;
    const bool scaled = c.grad_scale != real(1);
    for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t len = std::min(kBlock, n - b);
        if (scaled)
            adam_loop<L2, Decoupled, true>(c, len, grad + b, w + b, m + b, v + b);
        else
            adam_loop<L2, Decoupled, false>(c, len, grad + b, w + b, m + b, v + b);
        if (zero) std::memset(grad + b, 0, sizeof(real) * size_t(len));
    }
}

// ---- SGD
// -----------------------------------------------------------------------------------------

// One parameter's update, a template per mode, so that each is a branch-free loop. Without a
// scale, g is used as it is (see adam_blocks).
template <bool WeightDecay, bool Momentum, bool Nesterov, bool Scaled>
void sgd_loop(real lr, real mu, real wd, real grad_scale, int64_t n, const real* __restrict g,
              real* __restrict w, real* __restrict buf) {
    for (int64_t i = 0; i < n; ++i) {
        real d = Scaled ? g[i] * grad_scale : g[i];
        if constexpr (WeightDecay) d += wd * w[i];
        if constexpr (Momentum) {
            buf[i] = mu * buf[i] + d;
            d = Nesterov ? d + mu * buf[i] : buf[i];
        }
        w[i] -= lr * d;
    }
}

template <bool WeightDecay, bool Momentum, bool Nesterov>
void sgd_scaled_or_not(const SgdStep& s, int64_t n, const real* g, real* w, real* buf) {
    const real lr = real(s.lr), mu = real(s.momentum), wd = real(s.weight_decay);
    if (s.grad_scale == real(1))
        sgd_loop<WeightDecay, Momentum, Nesterov, false>(lr, mu, wd, s.grad_scale, n, g, w, buf);
    else
        sgd_loop<WeightDecay, Momentum, Nesterov, true>(lr, mu, wd, s.grad_scale, n, g, w, buf);
}

// ---- Σ g²
// ----------------------------------------------------------------------------------------

// Each array is summed in blocks of kBlock elements, the blocks' sums then added in order: the
// threads share out whole blocks, so the result has the same bits whatever their number.
constexpr int64_t kSumBlock = 4096;

// Σ g² of S blocks of n values each, starts[s] to sums[s]. Per block: eight independent partial
// sums (the additions run in parallel lanes; a single running sum is one long dependency chain),
// added as a fixed tree. Several blocks at once give the same bits as one at a time, but read
// from S places in memory together: one sequential stream per core ran at ~11 GB/s in the
// 2-thread step (the data comes from DRAM), four at once ~40% faster.
template <int S>
void sum_blocks(const real* const* starts, int64_t n, double* sums) {
    double partial[S][8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int s = 0; s < S; ++s)
            for (int k = 0; k < 8; ++k)
                partial[s][k] += double(starts[s][i + k]) * double(starts[s][i + k]);
    if constexpr (S == 1)  // (blocks read together are whole: n % 8 == 0)
        for (; i < n; ++i) partial[0][0] += double(starts[0][i]) * double(starts[0][i]);
    for (int s = 0; s < S; ++s) {
        sums[s] = ((partial[s][0] + partial[s][1]) + (partial[s][2] + partial[s][3])) +
                  ((partial[s][4] + partial[s][5]) + (partial[s][6] + partial[s][7]));
    }
}

// The blocks of g[0, n) (n a range of one array, starting on a block boundary) into sums: the
// whole blocks as four interleaved runs, then the rest singly.
void sum_range(const real* g, int64_t n, double* sums) {
    const int64_t whole = n / kSumBlock, run = whole / 4;
    for (int64_t b = 0; b < run; ++b) {
        const real* starts[4] = {g + b * kSumBlock, g + (b + run) * kSumBlock,
                                 g + (b + 2 * run) * kSumBlock, g + (b + 3 * run) * kSumBlock};
        double four[4];
        sum_blocks<4>(starts, kSumBlock, four);
        for (int s = 0; s < 4; ++s) sums[b + s * run] = four[s];
    }
    for (int64_t b = 4 * run; b * kSumBlock < n; ++b) {
        const real* start = g + b * kSumBlock;
        sum_blocks<1>(&start, std::min(kSumBlock, n - b * kSumBlock), sums + b);
    }
}

}  // namespace

void adam_update(const AdamStep& step, const std::vector<AdamArrays>& params, bool zero_grads) {
    const AdamConstants c = adam_constants(step);
    std::vector<int64_t> sizes;
    for (const AdamArrays& a : params) sizes.push_back(a.n);
    parallel_for_arrays(sizes, kGrain, [&](size_t i, int64_t begin, int64_t end) {
        const AdamArrays& a = params[i];
        const int64_t n = end - begin;
        real *grad = a.grad + begin, *w = a.w + begin, *m = a.m + begin, *v = a.v + begin;
        if (c.l2)
            adam_blocks<true, false>(c, zero_grads, n, grad, w, m, v);
        else if (c.decoupled)
            adam_blocks<false, true>(c, zero_grads, n, grad, w, m, v);
        else
            adam_blocks<false, false>(c, zero_grads, n, grad, w, m, v);
    });
}

void sgd_update(const SgdStep& step, const std::vector<SgdArrays>& params, bool zero_grads) {
    const bool decay = step.weight_decay != 0, momentum = step.momentum != 0;
    std::vector<int64_t> sizes;
    for (const SgdArrays& a : params) sizes.push_back(a.n);
    parallel_for_arrays(sizes, kGrain, [&](size_t i, int64_t begin, int64_t end) {
        const int64_t n = end - begin;
        real* g = params[i].grad + begin;
        real* w = params[i].w + begin;
        real* buf = momentum ? params[i].buf + begin : nullptr;
        if (!momentum && decay)
            sgd_scaled_or_not<true, false, false>(step, n, g, w, nullptr);
        else if (!momentum)
            sgd_scaled_or_not<false, false, false>(step, n, g, w, nullptr);
        else if (decay && step.nesterov)
            sgd_scaled_or_not<true, true, true>(step, n, g, w, buf);
        else if (decay)
            sgd_scaled_or_not<true, true, false>(step, n, g, w, buf);
        else if (step.nesterov)
            sgd_scaled_or_not<false, true, true>(step, n, g, w, buf);
        else
            sgd_scaled_or_not<false, true, false>(step, n, g, w, buf);
        // zeroing the gradients in the update (Optimizer::set_zero_grads_in_step): a pass of its
        // own here (Adam clears in its loop; SGD is not on the benchmarks' path)
        if (zero_grads) std::memset(g, 0, sizeof(real) * size_t(n));
    });
}

double sum_of_squares(const std::vector<const real*>& arrays, const std::vector<int64_t>& sizes) {
    std::vector<size_t> first_block;  // of array k in block_sums
    size_t blocks = 0;
    for (int64_t n : sizes) {
        first_block.push_back(blocks);
        blocks += size_t((n + kSumBlock - 1) / kSumBlock);
    }
    std::vector<double> block_sums(blocks, 0.0);
    parallel_for_arrays(
        sizes, 8 * kSumBlock,
        [&](size_t k, int64_t begin, int64_t end) {
            sum_range(arrays[k] + begin, end - begin,
                      block_sums.data() + first_block[k] + size_t(begin / kSumBlock));
        },
        kSumBlock);
    double total = 0;
    for (double s : block_sums) total += s;
    return total;
}

void zero_arrays(const std::vector<real*>& arrays, const std::vector<int64_t>& sizes) {
    parallel_for_arrays(sizes, kGrain, [&](size_t k, int64_t begin, int64_t end) {
        std::memset(arrays[k] + begin, 0, sizeof(real) * size_t(end - begin));
    });
}

}  // namespace seqgrad::kernels::fast
