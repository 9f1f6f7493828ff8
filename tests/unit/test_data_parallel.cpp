// Data parallelism and the decoder's row shrinking: a step split over threads, or run on a batch
// sorted by target length, gives the loss and the gradients of one plain backward of the whole
// batch (in double, to rounding), and gradient shards keep concurrent threads apart.
#include <cmath>
#include <thread>

#include "batch_util.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/training/data_parallel.h"
#include "test_util.h"

using namespace seqgrad;

namespace {

Batch mixed_batch() {
    return testing::mixed_length_batch(3);
}

std::vector<std::vector<real>> gradients(const Seq2Seq& model) {
    std::vector<std::vector<real>> g;
    for (const Tensor& p : model.parameters()) g.push_back(p.grad().to_vector());
    return g;
}

void zero_grads(Seq2Seq& model) {
    for (Tensor p : model.parameters()) p.zero_grad();
}

double max_difference(const std::vector<std::vector<real>>& a,
                      const std::vector<std::vector<real>>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i].size() == b[i].size());
        for (size_t j = 0; j < a[i].size(); ++j)
            worst = std::max(worst, std::abs(double(a[i][j]) - double(b[i][j])));
    }
    return worst;
}

double largest(const std::vector<std::vector<real>>& a) {
    double m = 0;
    for (const auto& v : a)
        for (real x : v) m = std::max(m, std::abs(double(x)));
    return m;
}

}  // namespace

TEST_CASE("row shrinking: a sorted batch gives the loss and gradients of the unsorted one") {
    for (const std::string attention : {"bahdanau", "luong_general", "none"}) {
        CAPTURE(attention);
        Rng rng(11);
        Seq2Seq model(testing::small_model_config(attention), 13, 13, rng);
        const Batch batch = mixed_batch();
        REQUIRE(!is_sorted_by_target_length(batch));
        // forward_loss(batch, source) keeps the given row order: only a finished tail is dropped
        LossOutput unsorted = model.forward_loss(batch, model.encode(batch));
        unsorted.loss.backward();
        const auto g_unsorted = gradients(model);
        zero_grads(model);
        LossOutput sorted = model.forward_loss(batch);  // sorts, then drops rows as they end
        sorted.loss.backward();
        CHECK(std::abs(sorted.loss.item() - unsorted.loss.item()) < 1e-12);
        CHECK(sorted.num_tokens == unsorted.num_tokens);
        CHECK(sorted.num_tokens == 22);
        CHECK(sorted.num_correct == unsorted.num_correct);
        CHECK(largest(g_unsorted) > 1e-3);
        CHECK(max_difference(gradients(model), g_unsorted) < 1e-12);
    }
}

TEST_CASE("data parallel: 1, 2, 3 and 8 threads give one backward's loss and gradients") {
    for (const std::string attention : {"bahdanau", "luong_general"}) {
        CAPTURE(attention);
        Rng rng(12);
        Seq2Seq model(testing::small_model_config(attention), 13, 13, rng);
        const Batch batch = mixed_batch();
        LossOutput plain = model.forward_loss(batch);
        plain.loss.backward();
        const auto g_plain = gradients(model);
        for (int threads : {1, 2, 3, 8}) {  // 8 > B = 7: one row per shard
            CAPTURE(threads);
            zero_grads(model);
            DataParallel parallel(threads);
            Rng shard_seeds(5);
            LossOutput out = parallel.forward_backward(model, batch, LossOptions{}, shard_seeds);
            CHECK(std::abs(out.loss.item() - plain.loss.item()) < 1e-12);
            CHECK(out.num_tokens == plain.num_tokens);
            CHECK(out.num_correct == plain.num_correct);
            CHECK(max_difference(gradients(model), g_plain) < 1e-12);
            // gradients accumulate over calls, as backward does
            parallel.forward_backward(model, batch, LossOptions{}, shard_seeds);
            auto doubled = g_plain;
            for (auto& v : doubled)
                for (real& x : v) x *= 2;
            CHECK(max_difference(gradients(model), doubled) < 1e-12);
        }
    }
}

TEST_CASE("data parallel: with dropout and sampling, a run is reproducible for a thread count") {
    ModelConfig c = testing::small_model_config("bahdanau");
    c.dropout = 0.3;
    auto run = [&](int threads) {
        Rng rng(21);
        Seq2Seq model(c, 13, 13, rng);
        model.train();
        DataParallel parallel(threads);
        Rng seeds(9);
        LossOutput out = parallel.forward_backward(model, mixed_batch(), LossOptions{0.5, 0.1}, seeds);
        return std::make_pair(double(out.loss.item()), gradients(model));
    };
    const auto a = run(2), b = run(2);
    CHECK(a.first == b.first);
    CHECK(max_difference(a.second, b.second) == 0);
    CHECK(std::isfinite(a.first));
}

TEST_CASE("data parallel: errors name the problem") {
    CHECK_THROWS_WITH_AS(DataParallel(0), doctest::Contains("threads must be >= 1"), Error);
}
