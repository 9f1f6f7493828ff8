// The fast versions of the kernels of autograd/kernels/kernels.h that are not row kernels (those
// are in autograd/kernels/fast/vector_kernels.h). Only the fast build compiles
// autograd/kernels/fast/.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "seqgrad/autograd/kernels/fast/gemm.h"
#include "seqgrad/autograd/kernels/fast/shared_over_steps.h"
#include "seqgrad/autograd/kernels/kernels.h"

namespace seqgrad::kernels::fast {

// (kernels::ParallelGradients: autograd/kernels/fast/gradient_shard.cpp)

// autograd/kernels/fast/optimizer_kernels.cpp
void for_each_array(const std::vector<int64_t>& sizes, int64_t grain,
                    const std::function<void(size_t, int64_t, int64_t)>& fn, int64_t align);
void adam_update(const AdamConstants& c, const std::vector<AdamArrays>& params, bool zero_grads);

}  // namespace seqgrad::kernels::fast
