// The fast optimizer passes: cut between seqgrad's threads (autograd/kernels/parallel.h), since a pass
// over all parameters is memory-bound and each core adds its own bandwidth; and Adam's update as
// one branch-free loop per mode, cleared block by block.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "seqgrad/autograd/kernels/fast/kernels.h"
#include "seqgrad/autograd/kernels/parallel.h"

namespace seqgrad::kernels::fast {
namespace {

// One parameter's update. A template per mode, so that every variant is a branch-free loop the
// compiler vectorises (8 floats per AVX instruction); restrict: the four arrays never overlap.
// The arithmetic is the reference's (kernels_reference.cpp), term for term.
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

}  // namespace

void for_each_array(const std::vector<int64_t>& sizes, int64_t grain,
                    const std::function<void(size_t, int64_t, int64_t)>& fn, int64_t align) {
    parallel_for_arrays(sizes, grain, fn, align);
}

void adam_update(const AdamConstants& c, const std::vector<AdamArrays>& params, bool zero_grads) {
    std::vector<int64_t> sizes;
    for (const AdamArrays& a : params) sizes.push_back(a.n);
    constexpr int64_t kGrain = 32 * 1024;  // an array smaller than this goes whole to one thread
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

}  // namespace seqgrad::kernels::fast
