// The fast versions of the kernels of autograd/kernels.h that are not row kernels (those are in
// autograd/fast/vector_kernels.h). Only the fast build compiles autograd/fast/.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "seqgrad/autograd/fast/gemm.h"
#include "seqgrad/autograd/fast/shared_over_steps.h"
#include "seqgrad/autograd/kernels.h"

namespace seqgrad::kernels::fast {

// autograd/fast/gradient_shard.cpp
real* leaf_grad_elsewhere(Node& leaf);
real* leaf_grad_row_elsewhere(Node& leaf, int64_t row);
// (and kernels::ParallelGradients)

// autograd/fast/optimizer_kernels.cpp
void for_each_array(const std::vector<int64_t>& sizes, int64_t grain,
                    const std::function<void(size_t, int64_t, int64_t)>& fn, int64_t align);
void adam_update(const AdamConstants& c, const std::vector<AdamArrays>& params, bool zero_grads);

}  // namespace seqgrad::kernels::fast
