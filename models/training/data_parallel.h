// DataParallel: one training step's forward and backward split over threads by batch rows.
//
// On a small recurrent model most products are per time step and small ([32,256] x [256,768]),
// and BLAS gains little from a second thread on them. Splitting the batch instead gives each
// thread whole sequences: the rows of the batch sorted by target length are dealt to the shards
// so that each gets about the same work (and stays sorted), and each runs forward_loss and
// backward on its own graph with single-threaded BLAS; kernels::ParallelGradients
// (autograd/kernels/kernels.h) keeps the parameter gradients of each thread apart and adds them in
// afterwards, in a fixed order. (The reference build runs the shards one after another.)
//
// The loss of the whole batch is the mean over its N real tokens; shard k's forward_loss is the
// mean over its own n_k tokens, so its backward is seeded with n_k / N:
//   L = Σ_k (n_k / N) L_k,   dL/dθ = Σ_k (n_k / N) dL_k/dθ
// which is one backward of the whole batch, up to the order of floating-point sums.
// Randomness (dropout, scheduled sampling) comes from one generator per shard, seeded from the
// model's generator at each step, so a run is reproducible for a given thread count.
//
// Across processes (a Communicator of N ranks, models/distributed/communicator.h) the same rule
// deals the rows to N x threads shards; rank r runs shards r*threads .. r*threads + threads - 1 on
// its threads, and the ranks' gradients are then summed in rank order. With one thread per rank the
// shards are added in the same order as N in-process shards, so N ranks give the bits of N
// threads.
#pragma once

#include <memory>

#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/models/distributed/communicator.h"
#include "seqgrad/models/model/translation_model.h"

namespace seqgrad {

class DataParallel {
  public:
    // threads >= 1. Sets seqgrad's threads (autograd/kernels/parallel.h) to `threads` and BLAS
    // to 1.
    explicit DataParallel(int threads);
    ~DataParallel();
    DataParallel(const DataParallel&) = delete;
    DataParallel& operator=(const DataParallel&) = delete;

    int threads() const;

    // forward_loss + backward of `batch` on min(threads, B) shards. Afterwards the parameters'
    // .grad hold the gradient of the batch's mean loss (added to what they held, as backward
    // does). Returns the batch's loss (a constant scalar: the graph is gone), its real tokens and
    // the teacher-forced argmax hits. `rng` seeds the shards' generators (one draw per shard).
    // Throws what forward_loss throws (the first error of any shard), after all shards stopped.
    // With a communicator of more than one rank, `batch` is the global batch (the same on every
    // rank), this rank runs its share of it, and afterwards every rank's .grad (and the returned
    // loss, tokens and hits) are those of the whole global batch. Every rank must call it.
    LossOutput forward_backward(const TranslationModel& model, const Batch& batch,
                                const LossOptions& options, Rng& rng,
                                Communicator* communicator = nullptr);

    // Wall time of the last call's sums across ranks (0 in one process), in seconds, and of its
    // wait for the slowest rank to finish its backward before them.
    double last_communication_seconds() const { return communication_seconds_; }
    double last_wait_seconds() const { return wait_seconds_; }

  private:
    std::unique_ptr<kernels::ParallelGradients> shards_;
    int threads_;
    double communication_seconds_ = 0, wait_seconds_ = 0;
};

}  // namespace seqgrad
