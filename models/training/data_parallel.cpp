#include "seqgrad/models/training/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <tuple>
#include <utility>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/kernels.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/data/vocab.h"

namespace seqgrad {
namespace {

// The rows of `sorted` (sorted by decreasing target length) dealt to `shards` shards: each row
// to the shard with the least work so far, so the longest are placed first and each shard stays
// sorted. The work of a row is counted in FLOPs of a model with E = H = A = 256 and a target
// vocabulary of 6000, forward and backward: ~2.4 M per source token (the encoder step) and
// ~13 M per target token (output projection 9.2 M, decoder GRU 3.5 M, attention), so cost =
// source + 5 target tokens. Dealing rows k, k + n, ... instead gave shard 0 the longer row of
// every pair and left the other thread waiting ~5% of the step.
std::vector<std::vector<size_t>> deal_rows(const Batch& sorted, int shards) {
    std::vector<std::vector<size_t>> rows(static_cast<size_t>(shards));
    std::vector<int64_t> work(static_cast<size_t>(shards), 0);
    for (int r = 0; r < sorted.batch_size; ++r) {
        const size_t k = size_t(std::min_element(work.begin(), work.end()) - work.begin());
        rows[k].push_back(size_t(r));
        work[k] += sorted.src_lengths[size_t(r)] + 5 * int64_t(sorted.tgt_lengths[size_t(r)]);
    }
    return rows;
}

// Σ over the ranks, rank 0 first, of the gradients and the loss's parts, in place; returns the
// seconds spent waiting for the slowest rank (the barrier) and transferring.
std::pair<double, double> sum_over_ranks(const TranslationModel& model, Communicator& communicator,
                                         LossOutput& total, double& loss) {
    using clock = std::chrono::steady_clock;
    auto seconds_since = [](clock::time_point t) {
        return std::chrono::duration<double>(clock::now() - t).count();
    };
    // The barrier separates the wait for the slowest rank from the transfer itself.
    auto start = clock::now();
    communicator.barrier();
    const double wait = seconds_since(start);
    start = clock::now();
    for (Tensor p : model.parameters())  // in place, one parameter at a time
        communicator.sum(p.mutable_grad_data(), size_t(p.numel()));
    int64_t counts[2] = {total.num_tokens, total.num_correct};
    communicator.sum(counts, 2);
    communicator.sum(&loss, 1);
    total.num_tokens = counts[0];
    total.num_correct = counts[1];
    return {wait, seconds_since(start)};
}

}  // namespace

DataParallel::DataParallel(int threads)
    : shards_(std::make_unique<kernels::ParallelGradients>()), threads_(threads) {
    if (threads < 1)
        throw Error(fmt::format("DataParallel: threads must be >= 1, got {}", threads));
    set_num_threads(threads);
    // Each shard runs its own products: BLAS threads would only compete with the shards.
    if (threads > 1) set_blas_threads(1);
}

DataParallel::~DataParallel() = default;

int DataParallel::threads() const {
    return threads_;
}

LossOutput DataParallel::forward_backward(const TranslationModel& model, const Batch& batch,
                                          const LossOptions& options, Rng& rng,
                                          Communicator* communicator) {
    const int ranks = communicator ? communicator->size() : 1;
    const int rank = communicator ? communicator->rank() : 0;
    const Batch sorted = is_sorted_by_target_length(batch) ? batch : sort_by_target_length(batch);
    const int shards = std::max(1, std::min(threads_ * ranks, sorted.batch_size));
    const std::vector<std::vector<size_t>> rows = deal_rows(sorted, shards);
    // This rank's shards: [first, last) (empty when the batch has fewer rows than shards).
    const int first = std::min(rank * threads_, shards);
    const int last = std::min(first + threads_, shards);
    std::vector<Batch> parts(static_cast<size_t>(shards));
    for (int k = first; k < last; ++k) parts[size_t(k)] = take_rows(sorted, rows[size_t(k)]);
    int64_t total_tokens = 0;  // N: the real target tokens of the whole batch
    for (int32_t id : sorted.tgt_out) total_tokens += id != Vocab::PAD;
    std::vector<uint64_t> seeds(static_cast<size_t>(shards));  // drawn by every rank alike
    for (uint64_t& seed : seeds) seed = rng.next_u64();

    std::vector<LossOutput> results(static_cast<size_t>(shards));
    std::vector<double> losses(static_cast<size_t>(shards), 0);
    // each shard on its own thread, its parameter gradients kept apart and then added into .grad
    shards_->run(last - first, [&](int local) {
        const int k = first + local;
        Rng shard_rng(seeds[size_t(k)]);
        ThreadRng use(shard_rng);
        LossOutput out = model.forward_loss(parts[size_t(k)], options);
        losses[size_t(k)] = double(out.loss.item());
        if (out.num_tokens > 0 && out.loss.requires_grad())  // L_k weighs n_k / N in L
            out.loss.backward(Tensor::scalar(real(double(out.num_tokens) / double(total_tokens))));
        out.loss = Tensor();
        results[size_t(k)] = out;
    });
    LossOutput total;
    double loss = 0;
    for (int k = first; k < last; ++k) {
        const LossOutput& r = results[size_t(k)];
        total.num_tokens += r.num_tokens;
        total.num_correct += r.num_correct;
        loss += losses[size_t(k)] * double(r.num_tokens);
    }
    communication_seconds_ = wait_seconds_ = 0;
    if (ranks > 1)
        std::tie(wait_seconds_, communication_seconds_) =
            sum_over_ranks(model, *communicator, total, loss);
    total.loss = Tensor::scalar(real(loss / double(std::max<int64_t>(total.num_tokens, 1))));
    return total;
}

}  // namespace seqgrad
