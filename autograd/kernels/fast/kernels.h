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

// autograd/kernels/fast/gradient_shard.cpp
real* leaf_grad_elsewhere(Node& leaf);
real* leaf_grad_row_elsewhere(Node& leaf, int64_t row);
// (and kernels::ParallelGradients)

// autograd/kernels/fast/optimizer_kernels.cpp: the optimizers' passes, equal to optim/'s loops
void adam_update(const AdamStep& step, const std::vector<AdamArrays>& params, bool zero_grads);
void sgd_update(const SgdStep& step, const std::vector<SgdArrays>& params, bool zero_grads);
double sum_of_squares(const std::vector<const real*>& arrays, const std::vector<int64_t>& sizes);
void zero_arrays(const std::vector<real*>& arrays, const std::vector<int64_t>& sizes);

}  // namespace seqgrad::kernels::fast
