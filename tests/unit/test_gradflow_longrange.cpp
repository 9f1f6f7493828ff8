// The long-range tasks of `seqgrad gradflow` (apps/studies/longrange_tasks.h,
// apps/studies/longrange_model.h): the generators as the literature defines them (the adding
// problem's 1/6 baseline, the copy-memory layout), the direct-versus-recurrent split of the
// gradient, and the command's
// --cells / --attention parsing.
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "apps/cli/gradflow_options.h"
#include "apps/studies/gradflow.h"
#include "apps/studies/gradflow_longrange.h"
#include "apps/studies/longrange_model.h"
#include "test_util.h"

using namespace seqgrad;

TEST_CASE("adding problem: two markers, one in each half; target = their sum; MSE of 1 is 1/6") {
    Rng rng(11);
    const int T = 9, B = 20000;  // odd T: halves [0, 4) and [4, 9)
    LongRangeBatch batch = adding_batch(T, B, rng);
    CHECK(batch.steps == T);
    CHECK(batch.channels == 2);
    CHECK(batch.answer_start == T - 1);
    CHECK(batch.answers == 1);
    CHECK(batch.memory == T);
    double squared_error_of_one = 0, mean_value = 0;
    for (int b = 0; b < B; ++b) {
        const real* row = batch.inputs.data() + size_t(b) * T * 2;
        std::vector<int> marked;
        for (int t = 0; t < T; ++t) {
            CHECK_UNARY(row[2 * t] >= 0);
            CHECK_UNARY(row[2 * t] < 1);
            mean_value += row[2 * t] / double(B * T);
            CHECK_UNARY((row[2 * t + 1] == 0 || row[2 * t + 1] == 1));
            if (row[2 * t + 1] == 1) marked.push_back(t);
        }
        REQUIRE(marked.size() == 2);
        CHECK(marked[0] < T / 2);
        CHECK(marked[1] >= T / 2);
        CHECK(batch.sums[size_t(b)] == row[2 * marked[0]] + row[2 * marked[1]]);
        squared_error_of_one += (batch.sums[size_t(b)] - 1) * (batch.sums[size_t(b)] - 1) / B;
    }
    CHECK(mean_value == doctest::Approx(0.5).epsilon(0.01));
    // E[(v_a + v_b − 1)²] = 1/6 = 0.1667; the standard error of this estimate is ~0.0015
    CHECK(squared_error_of_one == doctest::Approx(1.0 / 6).epsilon(0.03));
    CHECK(std::fabs(squared_error_of_one - 0.1767) > 0.005);  // not the number Le et al. print
    CHECK(long_range_baseline("adding") == doctest::Approx(1.0 / 6));
    CHECK_THROWS_AS(adding_batch(1, 4, rng), Error);
}

TEST_CASE("copy memory: 10 symbols of 8, T - 1 blanks, a delimiter, 10 blanks; answers last") {
    Rng rng(12);
    const int T = 7, B = 50;
    LongRangeBatch batch = copy_memory_batch(T, B, rng);
    CHECK(batch.steps == T + 20);
    CHECK(batch.channels == 10);
    CHECK(batch.classes == 8);
    CHECK(batch.answer_start == T + 10);
    CHECK(batch.answers == 10);
    CHECK(batch.memory == T + 10);
    std::vector<int> counts(8, 0);
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T + 20; ++t) {
            const real* step = batch.inputs.data() + size_t((b * (T + 20) + t) * 10);
            int hot = -1, ones = 0;
            for (int c = 0; c < 10; ++c) {
                CHECK_UNARY((step[c] == 0 || step[c] == 1));
                if (step[c] == 1) {
                    hot = c;
                    ones++;
                }
            }
            REQUIRE(ones == 1);  // one-hot
            if (t < 10) {
                CHECK(hot < 8);
                CHECK(batch.symbols[size_t(b * 10 + t)] == hot);
                counts[size_t(hot)]++;
            } else if (t == T + 9) {
                CHECK(hot == 9);  // the delimiter
            } else {
                CHECK(hot == 8);  // blank
            }
        }
    for (int c : counts) CHECK(c > 0);  // every symbol occurs
    CHECK(long_range_baseline("copy_memory") == doctest::Approx(std::log(8.0)));
    // a fresh model is close to the memoryless loss ln 8
    Rng model_rng(3);
    LongRangeModel model("copy_memory", "gru", "none", 8, model_rng);
    CHECK(double(model.forward(batch).loss.item()) == doctest::Approx(std::log(8.0)).epsilon(0.1));
}

// dL/dh_t = (the part through attention, dL/d outputs[:, t]) + (the part through h_{t+1}):
// both checked against an independent computation of the second, J_{t+1}ᵀ dL/dh_{t+1}, by
// backpropagating dL/dh_{t+1} through one composed cell step (RNN and GRU, whose state is h
// alone; the LSTM's also passes through c_{t+1}, whose gradient is not kept: its check is the
// norms' and the zero direct part's).
TEST_CASE(
    "the direct-versus-recurrent split: direct + recurrent = total, direct = 0 without "
    "attention") {
    for (const char* cell : {"rnn", "gru", "lstm"})
        for (const char* task : {"adding", "copy_memory"})
            for (const char* attention : {"none", "bahdanau", "luong_general"}) {
                CAPTURE(cell);
                CAPTURE(task);
                CAPTURE(attention);
                Rng data_rng(4);
                LongRangeBatch batch = long_range_batch(task, 6, 3, data_rng);
                Rng rng(5);
                LongRangeModel model(task, cell, attention, 4, rng);
                const bool lstm = std::string(cell) == "lstm";
                model.eval();
                const int64_t B = batch.batch, N = batch.steps, H = 4, C = batch.channels;
                model.zero_grad();
                LongRangeModel::Output o = model.forward(batch);
                o.outputs.retain_grad();
                for (Tensor& h : o.step_states) h.retain_grad();
                o.loss.backward();
                const Recurrent::Weights& w = model.encoder->weights(0, 0);
                const bool none = std::string(attention) == "none";
                CHECK((o.outputs.grad_data() == nullptr) == none);
                double direct_sum = 0;
                // up to the first answer step (from there on the head also reads h_t)
                for (int64_t t = 0; t < std::min(batch.answer_start, N - 1); ++t) {
                    CAPTURE(t);
                    // J_{t+1}ᵀ g_{t+1}: one composed step from a leaf h_t, seeded with g_{t+1}
                    Tensor h =
                        Tensor::from_vector({B, H}, o.step_states[size_t(t)].to_vector(), true);
                    std::vector<real> x(size_t(B * C));
                    for (int64_t b = 0; b < B; ++b)
                        for (int64_t c = 0; c < C; ++c)
                            x[size_t(b * C + c)] = batch.inputs[size_t((b * N + t + 1) * C + c)];
                    if (lstm) break;
                    Tensor next = cell_step_composed(parse_cell_type(cell), w,
                                                     Tensor::from_vector({B, C}, x), {h, Tensor()})
                                      .h;
                    const real* g_next = o.step_states[size_t(t + 1)].grad_data();
                    REQUIRE(g_next != nullptr);
                    Tensor seed =
                        Tensor::from_vector({B, H}, std::vector<real>(g_next, g_next + B * H));
                    sum(mul(next, seed)).backward();
                    const real* total = o.step_states[size_t(t)].grad_data();
                    const real* direct = o.outputs.grad_data();
                    for (int64_t b = 0; b < B; ++b)
                        for (int64_t j = 0; j < H; ++j) {
                            const double d = direct ? double(direct[(b * N + t) * H + j]) : 0;
                            direct_sum += std::fabs(d);
                            CHECK(double(total[b * H + j]) ==
                                  doctest::Approx(d + double(h.grad_data()[b * H + j]))
                                      .epsilon(1e-10));
                        }
                }
                if (none)
                    CHECK(direct_sum == 0);
                else if (!lstm)
                    CHECK(direct_sum > 0);
                // measure_long_range_flow reports the norms of these parts
                FlowMeasurement f = measure_long_range_flow(model, batch);
                REQUIRE(f.hidden.size() == size_t(N));
                for (int64_t t = 0; t < N; ++t) {
                    CAPTURE(t);
                    if (none) CHECK(f.direct[size_t(t)] == 0);
                    CHECK(f.hidden[size_t(t)] > 0);
                    CHECK(f.hidden[size_t(t)] <=
                          f.direct[size_t(t)] + f.recurrent[size_t(t)] + 1e-15);
                    if (t < batch.memory && !none) CHECK(f.direct[size_t(t)] > 0);
                }
            }
}

TEST_CASE("equal parameter budgets: the matched hidden size is the closest count") {
    Rng rng(1);
    const int64_t budget = LongRangeModel("adding", "gru", "none", 20, rng).num_parameters();
    CHECK(matched_hidden_size("adding", "gru", "none", budget) == 20);
    const int64_t H = matched_hidden_size("adding", "gru", "bahdanau", budget);
    CHECK(H < 20);  // attention's parameters come out of the recurrent layer's share
    auto count = [](int64_t h) {
        Rng r(1);
        return LongRangeModel("adding", "gru", "bahdanau", h, r).num_parameters();
    };
    CHECK(std::llabs(count(H) - budget) <= std::llabs(count(H - 1) - budget));
    CHECK(std::llabs(count(H) - budget) <= std::llabs(count(H + 1) - budget));
}

TEST_CASE("gradflow options: --cells, --attention and its older name --models") {
    GradflowOptions o = parse_gradflow_options(
        {"--cells", "rnn,gru,lstm", "--attention", "none,bahdanau", "--task", "adding"});
    CHECK(o.cells == std::vector<std::string>{"rnn", "gru", "lstm"});
    CHECK(o.models == std::vector<std::string>{"none", "bahdanau"});
    CHECK(o.lengths == std::vector<int>{50, 100, 200});  // the long-range tasks' default T
    CHECK(parse_gradflow_options({"--models", "luong_dot"}).models ==
          std::vector<std::string>{"luong_dot"});
    CHECK(parse_gradflow_options({}).cells == std::vector<std::string>{"gru"});
    auto message = [](const std::vector<std::string>& argv) {
        try {
            parse_gradflow_options(argv);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message({"--cells", "gru,transformer"}).find("--cells: unknown name \"transformer\"") !=
          std::string::npos);
    CHECK(message({"--cells", "gru,gru"}).find("listed twice") != std::string::npos);
    CHECK(message({"--cells", ","}).find("--cells: empty list") != std::string::npos);
    CHECK(message({"--attention", "luong"}).find("--attention: unknown name \"luong\"") !=
          std::string::npos);
    CHECK(message({"--models", "x"}).find("--models: unknown name") != std::string::npos);
    CHECK(message({"--models", "none", "--attention", "none"}).find("older name") !=
          std::string::npos);
    CHECK(message({"--lengths", "5,x"}).find("--lengths") != std::string::npos);
    CHECK(message({"--threshold", "-1"}).find("--threshold") != std::string::npos);
    CHECK(message({"--task", "adding", "--seeds", "3", "--seed-index", "3"})
              .find("--seed-index 3: expected 0..2") != std::string::npos);
    CHECK(message({"--task", "copy", "--seed-index", "0"}).find("--seed-index") !=
          std::string::npos);
    CHECK(parse_gradflow_options({"--task", "adding", "--seed-index", "2"}).seed_index == 2);
    CHECK_THROWS_AS(parse_gradflow_options({"stray"}), GradflowUsageError);
}

TEST_CASE("the long-range study: curves per cell+attention, threshold runs, table and files") {
    GradflowOptions o = parse_gradflow_options({"--task", "copy_memory", "--cells", "gru",
                                                "--attention", "none,luong_dot", "--lengths", "3,5",
                                                "--seeds", "2", "--batch", "4", "--hidden", "6",
                                                "--train-steps", "3", "--window", "2", "--quiet"});
    o.out_dir = (std::filesystem::temp_directory_path() /
                 ("seqgrad_test_gradflow_longrange_" + std::to_string(::getpid())))
                    .string();
    std::filesystem::remove_all(o.out_dir);
    GradflowReport report = run_gradflow(o);
    REQUIRE(report.curves.size() == 8);  // 2 models x 2 stages x 2 lengths
    for (const FlowCurve& c : report.curves) {
        CAPTURE(c.model);
        CHECK((c.model == "gru+none" || c.model == "gru+luong_dot"));
        CHECK(int(c.hidden.size()) == c.length + 20);  // T + 20 steps
        for (size_t t = 0; t < c.hidden.size(); ++t) {
            CHECK(std::isfinite(c.hidden[t]));
            CHECK((c.direct[t] == 0) == (c.model == "gru+none" || int(t) >= c.length + 10));
        }
    }
    REQUIRE(report.threshold_runs.size() == 8);  // 2 models x 2 lengths x 2 seeds
    for (const ThresholdRun& r : report.threshold_runs) {
        CHECK(r.steps_run >= 2);
        CHECK(r.steps_run <= 3);
        CHECK(r.reached_at == -1);  // ln 8 / 10 is not reached in 3 steps
    }
    // the parameter counts are matched to the reference (a GRU of 6 without attention)
    CHECK(report.threshold_runs.front().hidden_size == 6);
    std::string table = threshold_table(report.threshold_runs, o.train_steps);
    CHECK(table.find("| gru | luong_dot | 5 |") != std::string::npos);
    CHECK(table.find("> 3 | – | 2 of 2 |") != std::string::npos);
    write_gradflow_outputs(report, o);
    for (const char* name : {"gradflow.csv", "threshold_runs.csv", "threshold_table.md",
                             "grad_split_fresh.svg", "training.csv", "training_loss.svg"}) {
        CAPTURE(name);
        CHECK(std::filesystem::exists(std::filesystem::path(o.out_dir) / name));
    }
    std::filesystem::remove_all(o.out_dir);
    // --seed-index runs one seed, with the numbers it has in the whole study
    GradflowOptions one = o;
    one.seed_index = 1;
    GradflowReport part = run_gradflow(one);
    REQUIRE(part.threshold_runs.size() == 4);
    for (const ThresholdRun& r : part.threshold_runs) {
        CHECK(r.seed == 1);
        bool found = false;
        for (const ThresholdRun& full : report.threshold_runs)
            if (full.seed == 1 && full.length == r.length && full.attention == r.attention) {
                CHECK(full.final_loss == r.final_loss);
                found = true;
            }
        CHECK(found);
    }
    o.run_dirs = {"runs/x"};
    CHECK_THROWS_AS(run_gradflow(o), Error);  // fresh models only
}

TEST_CASE("the long-range study with a causal Transformer at the same parameter budget") {
    GradflowOptions o = parse_gradflow_options(
        {"--task",        "adding", "--cells",  "gru,lstm", "--attention", "none,transformer",
         "--lengths",     "4",      "--seeds",  "1",        "--batch",     "3",
         "--hidden",      "6",      "--heads",  "2",        "--layers",    "1",
         "--train-steps", "2",      "--window", "1",        "--quiet"});
    GradflowReport report = run_gradflow(o);
    int rows = 0;
    for (const FlowCurve& c : report.curves) {
        if (c.model != "transformer") continue;  // one model, whatever the cells
        ++rows;
        CAPTURE(c.stage);
        REQUIRE(c.hidden.size() == 4);
        for (size_t t = 0; t < 4; ++t) {
            CAPTURE(t);
            // causal self-attention: the answer step (the last) reads every step
            CHECK((std::isfinite(c.hidden[t]) && c.hidden[t] > 0));
            CHECK((std::isfinite(c.embedding[t]) && c.embedding[t] > 0));
            CHECK(std::isnan(c.direct[t]));  // no recurrence to split by
        }
    }
    CHECK(rows == 2);  // fresh and trained
    int transformer_runs = 0;
    for (const ThresholdRun& r : report.threshold_runs)
        if (r.attention == "transformer") {
            ++transformer_runs;
            CHECK(r.hidden_size % 2 == 0);  // a multiple of the heads
            CHECK(std::isfinite(r.final_loss));
        }
    CHECK(transformer_runs == 1);
    // its size is the one whose count is closest to the GRU's of 6 without attention
    Rng rng(1);
    const int64_t budget = LongRangeModel("adding", "gru", "none", 6, rng).num_parameters();
    CHECK(matched_hidden_size("adding", "gru", "transformer", budget, 2, 1) % 2 == 0);
    // a bad combination is a clear error
    Rng rng2(1);
    CHECK_THROWS_WITH_AS(LongRangeModel("adding", "gru", "transformer", 6, rng2, 4, 1),
                         doctest::Contains("4 heads must divide the size 6"), Error);
}
