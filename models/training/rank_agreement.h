// What the processes of a data-parallel run (models/training/data_parallel.h) agree on, so that
// every rank takes the same steps from the same start: the run's mode, a stop request, rank 0's
// validation result, and, checked every so often, the parameters themselves.
#pragma once

#include <cstddef>
#include <cstdint>

#include "seqgrad/layers/module.h"
#include "seqgrad/models/distributed/communicator.h"
#include "seqgrad/models/run/config.h"

namespace seqgrad {

// Throws Error unless the run can span comm's ranks: more than one rank needs
// train.parallel = "data" (each rank runs its share of every batch).
void check_ranks_can_share(const TrainConfig& train, const Communicator& comm);

// Every rank's parameters must be bit-identical: a fingerprint of all of them is compared.
// Throws Error naming `step` and the first rank that differs from rank 0. Every rank must call it.
void check_parameters_agree(Communicator& comm, const Module& model, int64_t step);

// A stop request (Ctrl-C, SIGTERM) on any rank stops every rank after the same step.
bool any_rank_requested_stop(Communicator& comm);

// values[0..n) of rank 0 to every rank (nothing to do in one process).
void share_from_root(Communicator& comm, double* values, size_t n);

}  // namespace seqgrad
