#include "seqgrad/models/training/rank_agreement.h"

#include <fmt/format.h>

#include <vector>

#include "seqgrad/models/training/signals.h"

namespace seqgrad {

void check_ranks_can_share(const TrainConfig& train, const Communicator& comm) {
    if (comm.size() > 1 && train.parallel != "data")
        throw Error(
            fmt::format("train.parallel = \"{}\" cannot span {} processes: use "
                        "\"data\" (each rank runs its share of every batch)",
                        train.parallel, comm.size()));
}

void check_parameters_agree(Communicator& comm, const Module& model, int64_t step) {
    uint64_t print = fingerprint(nullptr, 0);
    for (const Tensor& p : model.parameters())
        print = fingerprint(p.data(), size_t(p.numel()) * sizeof(real), print);
    const std::vector<uint64_t> prints = comm.gather_all(print);
    for (size_t r = 1; r < prints.size(); ++r)
        if (prints[r] != prints[0])
            throw Error(
                fmt::format("step {}: the parameters of rank {} differ from rank 0's "
                            "(every rank must take the same steps from the same "
                            "start); training stopped",
                            step, r));
}

bool any_rank_requested_stop(Communicator& comm) {
    int64_t requested = stop_requested() ? 1 : 0;
    if (comm.size() > 1) comm.sum(&requested, 1);
    return requested > 0;
}

void share_from_root(Communicator& comm, double* values, size_t n) {
    if (comm.size() > 1) comm.broadcast(values, n * sizeof(double), 0);
}

}  // namespace seqgrad
