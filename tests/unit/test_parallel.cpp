// autograd/kernels/parallel.h: every index is visited exactly once, errors come back to the caller,
// nested calls run serially, and the optimizer passes built on it give the same bits with 1, 2
// and 3 threads.
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "seqgrad/optim/sgd.h"
#include "test_util.h"

using namespace seqgrad;
using seqgrad::testing::random_tensor;

namespace {
// Restores one thread at the end of a test, whatever happened in it.
struct Threads {
    explicit Threads(int n) { set_num_threads(n); }
    ~Threads() { set_num_threads(1); }
};
}  // namespace

TEST_CASE("parallel_run runs every task once, on more than one thread when it has them") {
    for (int threads : {1, 2, 3}) {
        Threads use(threads);
        CHECK(num_threads() == threads);
        for (int count : {1, 2, 3, 5}) {
            std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
            std::mutex mutex;
            std::set<std::thread::id> ids;
            parallel_run(count, [&](int k) {
                runs[size_t(k)]++;
                std::lock_guard<std::mutex> lock(mutex);
                ids.insert(std::this_thread::get_id());
            });
            for (auto& r : runs) CHECK(r.load() == 1);
            CHECK(int(ids.size()) <= std::min(count, threads));
            if (threads > 1 && count > 1) CHECK(ids.size() > 1);
        }
    }
}

TEST_CASE("parallel_for_arrays covers every element once, cut at multiples of align") {
    Threads use(3);
    const std::vector<int64_t> sizes = {5, 0, 70000, 12, 4096 * 9 + 7, 1};
    std::vector<std::vector<std::atomic<int>>> hits;
    for (int64_t n : sizes) hits.emplace_back(static_cast<size_t>(n));
    parallel_for_arrays(
        sizes, 1000,
        [&](size_t i, int64_t begin, int64_t end) {
            CHECK(begin % 4096 == 0);
            for (int64_t e = begin; e < end; ++e) hits[i][size_t(e)]++;
        },
        4096);
    for (auto& array : hits)
        for (auto& h : array) CHECK(h.load() == 1);
}

TEST_CASE("parallel_run rethrows the lowest task's error after all tasks stopped") {
    Threads use(2);
    std::atomic<int> finished{0};
    try {
        parallel_run(4, [&](int k) {
            if (k == 1 || k == 3) throw std::runtime_error("task " + std::to_string(k));
            finished++;
        });
        FAIL("no exception");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "task 1");
    }
    CHECK(finished.load() == 2);
    // the pool still works afterwards
    std::atomic<int> runs{0};
    parallel_run(2, [&](int) { runs++; });
    CHECK(runs.load() == 2);
}

TEST_CASE("parallel calls nested in a task run serially on that task's thread") {
    Threads use(2);
    std::atomic<int> inner{0}, foreign{0};
    parallel_run(2, [&](int) {
        const auto me = std::this_thread::get_id();
        parallel_for_arrays({100000}, 1, [&](size_t, int64_t begin, int64_t end) {
            inner += int(end - begin);
            if (std::this_thread::get_id() != me) foreign++;
        });
    });
    CHECK(inner.load() == 200000);
    CHECK(foreign.load() == 0);
    CHECK_THROWS_AS(parallel_run(1, [](int) { set_num_threads(3); }), Error);
    CHECK_THROWS_AS(set_num_threads(0), Error);
}

TEST_CASE("grad_norm, zero_grad, Adam and SGD give the same bits on 1, 2 and 3 threads") {
    // parameters large enough to be cut between threads, and small ones dealt whole
    auto make_params = [] {
        Rng rng(11);
        std::vector<Tensor> params = {random_tensor({300, 257}, 1), random_tensor({7}, 2),
                                      random_tensor({40000}, 3), random_tensor({3, 5}, 4)};
        for (Tensor& p : params) {
            real* g = p.mutable_grad_data();
            for (int64_t i = 0; i < p.numel(); ++i) g[i] = real(rng.normal());
        }
        return params;
    };
    auto named = [](const std::vector<Tensor>& params) {
        NamedTensors out;
        for (size_t i = 0; i < params.size(); ++i)
            out.push_back({"p" + std::to_string(i), params[i]});
        return out;
    };
    struct Result {
        double norm;
        std::vector<std::vector<real>> adam, sgd;
    };
    auto run = [&](int threads) {
        Threads use(threads);
        Result r;
        std::vector<Tensor> a = make_params(), s = make_params();
        r.norm = grad_norm(a);
        AdamOptions o;
        o.weight_decay = 0.01;
        Adam adam(named(a), o);
        SGD sgd(named(s), 0.1, 0.9, true, 0.001);
        for (int step = 0; step < 3; ++step) {
            adam.step(0.5);
            sgd.step();
        }
        adam.zero_grad();
        for (const Tensor& p : a)
            for (int64_t i = 0; i < p.numel(); ++i) CHECK(p.grad_data()[i] == 0);
        for (const Tensor& p : a) r.adam.push_back(p.to_vector());
        for (const Tensor& p : s) r.sgd.push_back(p.to_vector());
        return r;
    };
    const Result one = run(1);
    double sum_squares = 0;  // the definition, in one running sum
    for (const Tensor& p : make_params())
        for (int64_t i = 0; i < p.numel(); ++i) sum_squares += p.grad_data()[i] * p.grad_data()[i];
    CHECK(one.norm == doctest::Approx(std::sqrt(sum_squares)).epsilon(1e-12));
    for (int threads : {2, 3}) {
        const Result many = run(threads);
        CHECK(many.norm == one.norm);  // bit for bit
        CHECK(many.adam == one.adam);
        CHECK(many.sgd == one.sgd);
    }
}
