#include "models/data_parallel.h"

#include <fmt/format.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "autograd/gemm.h"
#include "data/vocab.h"

namespace seqgrad {

// threads - 1 workers, each with its own gradient shard; the calling thread is shard 0.
struct DataParallel::Pool {
    struct Worker {
        std::thread thread;
        std::function<void()> task;  // set by run(), cleared when done
        std::exception_ptr error;
        GradientShard shard;
    };
    int threads = 1;
    std::mutex mutex;
    std::condition_variable wake, finished;
    bool stopping = false;
    std::vector<std::unique_ptr<Worker>> workers;

    void loop(Worker& w) {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(mutex);
                wake.wait(lock, [&] { return stopping || w.task; });
                if (!w.task) return;  // stopping
                task = w.task;
            }
            try {
                GradientShard::Scope scope(w.shard);
                task();
            } catch (...) {
                w.error = std::current_exception();
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                w.task = nullptr;
            }
            finished.notify_all();
        }
    }

    // Runs task(k) for k = 1..count-1 on the workers and task(0) here; returns when all are done.
    // The first exception (shard 0's, else the lowest worker's) is rethrown after that.
    void run(int count, const std::function<void(int)>& task) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            for (int k = 1; k < count; ++k) {
                workers[size_t(k - 1)]->error = nullptr;
                workers[size_t(k - 1)]->task = [&task, k] { task(k); };
            }
        }
        wake.notify_all();
        std::exception_ptr error;
        try {
            task(0);
        } catch (...) {
            error = std::current_exception();
        }
        {
            std::unique_lock<std::mutex> lock(mutex);
            finished.wait(lock, [&] {
                for (int k = 1; k < count; ++k)
                    if (workers[size_t(k - 1)]->task) return false;
                return true;
            });
        }
        for (int k = 1; k < count && !error; ++k) error = workers[size_t(k - 1)]->error;
        if (error) std::rethrow_exception(error);
    }
};

DataParallel::DataParallel(int threads) : pool_(std::make_unique<Pool>()) {
    if (threads < 1)
        throw Error(fmt::format("DataParallel: threads must be >= 1, got {}", threads));
    pool_->threads = threads;
    // Each shard runs its own products: BLAS threads would only compete with the shards.
    if (threads > 1) set_blas_threads(1);
    for (int k = 1; k < threads; ++k) {
        pool_->workers.push_back(std::make_unique<Pool::Worker>());
        Pool::Worker& w = *pool_->workers.back();
        w.thread = std::thread([this, &w] { pool_->loop(w); });
    }
}

DataParallel::~DataParallel() {
    {
        std::lock_guard<std::mutex> lock(pool_->mutex);
        pool_->stopping = true;
    }
    pool_->wake.notify_all();
    for (auto& w : pool_->workers) w->thread.join();
}

int DataParallel::threads() const {
    return pool_->threads;
}

LossOutput DataParallel::forward_backward(const Seq2Seq& model, const Batch& batch,
                                          double teacher_forcing, double label_smoothing,
                                          Rng& rng) {
    const Batch sorted = is_sorted_by_target_length(batch) ? batch : sort_by_target_length(batch);
    const int shards = std::max(1, std::min(pool_->threads, sorted.batch_size));
    std::vector<Batch> parts(static_cast<size_t>(shards));
    for (int k = 0; k < shards; ++k) {
        std::vector<size_t> rows;
        for (int r = k; r < sorted.batch_size; r += shards) rows.push_back(size_t(r));
        parts[size_t(k)] = take_rows(sorted, rows);
    }
    int64_t total_tokens = 0;  // N: the real target tokens of the whole batch
    for (int32_t id : sorted.tgt_out) total_tokens += id != Vocab::PAD;
    std::vector<uint64_t> seeds(static_cast<size_t>(shards));
    for (uint64_t& seed : seeds) seed = rng.next_u64();

    std::vector<LossOutput> results(static_cast<size_t>(shards));
    std::vector<double> losses(static_cast<size_t>(shards), 0);
    pool_->run(shards, [&](int k) {
        Rng shard_rng(seeds[size_t(k)]);
        ThreadRng use(shard_rng);
        LossOutput out = model.forward_loss(parts[size_t(k)], teacher_forcing, label_smoothing);
        losses[size_t(k)] = double(out.loss.item());
        if (out.num_tokens > 0 && out.loss.requires_grad())  // L_k weighs n_k / N in L
            out.loss.backward(Tensor::scalar(real(double(out.num_tokens) / double(total_tokens))));
        out.loss = Tensor();
        results[size_t(k)] = out;
    });
    // Σ_k shard k into .grad: every thread adds its own part of every shard's leaves.
    const int reducers = pool_->threads;
    pool_->run(reducers, [&](int k) {
        for (auto& w : pool_->workers) w->shard.reduce_into_leaves(size_t(k), size_t(reducers));
    });

    LossOutput total;
    double loss = 0;
    for (int k = 0; k < shards; ++k) {
        const LossOutput& r = results[size_t(k)];
        total.num_tokens += r.num_tokens;
        total.num_correct += r.num_correct;
        loss += losses[size_t(k)] * double(r.num_tokens);
    }
    total.loss = Tensor::scalar(real(loss / double(std::max<int64_t>(total.num_tokens, 1))));
    return total;
}

}  // namespace seqgrad
