// One training step of the real model — forward, backward, clip_grad_norm(1.0), Adam — on the
// synthetic data of bench/torch_baseline.py (configs a..e: Seq2Seq) and bench/torch_tutorials.py
// (t: the Transformer, g: the tutorial's GRU model; bench/synthetic.h). Prints one JSON line:
//   {"impl":"seqgrad","bench":"train","config":"a","threads":1,"ms_per_step":..,
//    "tokens_per_s":..,"gflops":..,"peak_rss_mb":..}
// usage: train_throughput --config a|b|c|d|e|t|g [--cell gru|lstm|rnn] [--threads N] [--seconds S]
//                         [--batch B] [--target-len L]   (fixed target length, for the
//                         cost-growth table)
//                         [--warmup-steps N]   untimed steps first (default 10)
//                         [--ladder-off NAME,...]   the model-level rungs of the performance
//                         ladder to undo (bench/ladder_model.h: fused_loss, real_tokens,
//                         one_projection, cached_keys, sort_by_length; config t:
//                         bench/ladder_transformer.h: fused_attention, fused_layer_norm,
//                         fused_loss, packed_sentences); one thread of our own
#include <fmt/format.h>
#include <chrono>

#include <nlohmann/json.hpp>

#include "apps/cli/args.h"
#include "bench_util.h"
#include "ladder_model.h"
#include "ladder_transformer.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/kernels/parallel.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/model/transformer.h"
#include "seqgrad/models/training/data_parallel.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "synthetic.h"

using namespace seqgrad;

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc),
              {"config", "cell", "threads", "seconds", "batch", "target-len", "seed", "parallel",
               "ladder-off", "warmup-steps"},
              {});
    bench::BenchConfig c = bench::bench_config(args.get("config", "a"));
    c.cell = args.get("cell", "gru");
    parse_cell_type(c.cell);  // an unknown cell is an error naming it
    const int threads = args.get_int("threads", 1);
    const double seconds = args.get_double("seconds", 10);
    const int target_len = args.get_int("target-len", 0);
    c.B = args.get_int("batch", c.B);
    // --parallel data (default with threads > 1): the batch's rows split over `threads` threads
    // (models/training/data_parallel.h), each with 1-thread BLAS; --parallel blas: one thread of
    // our own and `threads` BLAS threads.
    const std::string parallel_mode = args.get("parallel", threads > 1 ? "data" : "blas");
    if (parallel_mode != "data" && parallel_mode != "blas")
        throw std::runtime_error("--parallel must be 'data' or 'blas', got '" + parallel_mode +
                                 "'");
    const bool data_parallel = parallel_mode == "data" && threads > 1;
    const std::string ladder_off = args.get("ladder-off", "");
    const bool transformer = c.kind == "transformer";
    // the Seq2Seq rungs (bench/ladder_model.h) or the Transformer's (bench/ladder_transformer.h)
    const bench::LadderOptions ladder =
        bench::parse_ladder_off(transformer ? std::string() : ladder_off);
    const bench::TransformerLadderOptions transformer_ladder =
        bench::parse_transformer_ladder_off(transformer ? ladder_off : std::string());
    if (data_parallel && !ladder_off.empty())
        throw std::runtime_error("--ladder-off runs one thread of our own (--parallel blas)");
    set_blas_threads(threads);
    set_num_threads(threads);

    Rng rng(uint64_t(args.get_int("seed", 0)));
    // The ladders undo optimisations inside a model, so they hold the concrete one they made.
    const ModelConfig model_config = bench::model_config(c);
    std::unique_ptr<TranslationModel> model;
    std::unique_ptr<bench::LadderModel> ladder_model;  // every rung on: model.forward_loss
    Transformer* transformer_model = nullptr;
    if (model_config.kind == "transformer") {
        auto made = std::make_unique<Transformer>(model_config, c.Vs, c.Vt, rng,
                                                   bench::fused_layers(c));
        transformer_model = made.get();
        bench::set_transformer_ladder(*made, transformer_ladder);
        model = std::move(made);
    } else {
        auto made = std::make_unique<Seq2Seq>(model_config, c.Vs, c.Vt, rng,
                                                   bench::fused_layers(c));
        ladder_model = std::make_unique<bench::LadderModel>(*made, ladder);
        model = std::move(made);
    }
    AdamOptions o;
    o.lr = 1e-3;
    Adam adam(model->named_parameters(), o);
    adam.set_zero_grads_in_step(true);  // as the trainer: one pass over the gradients, not two
    adam.zero_grad();
    std::unique_ptr<DataParallel> parallel =
        data_parallel ? std::make_unique<DataParallel>(threads) : nullptr;
    std::vector<Batch> pool = bench::batch_pool(c, 1, 16, 0, 0, target_len);
    std::vector<Tensor> params = model->parameters();
    int64_t parameter_count = 0;
    for (const Tensor& p : params) parameter_count += p.numel();

    size_t next = 0;
    int64_t tokens = 0, steps = 0;
    double flops = 0;
    // wall time of the step's phases, summed over the timed steps (the step itself is timed by
    // bench::time_it): where a step goes, and what a change moved
    // forward + backward, the gradient norm, Adam (which also zeroes the gradients for the next
    // step: set_zero_grads_in_step, so that the zero_grad at the top of a step has nothing to do)
    double phase_seconds[3] = {0, 0, 0};
    auto lap = [](std::chrono::steady_clock::time_point& since) {
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - since).count();
        since = now;
        return seconds;
    };
    auto step = [&] {
        const Batch& batch = pool[next++ % pool.size()];
        auto since = std::chrono::steady_clock::now();
        adam.zero_grad();
        if (data_parallel) {
            parallel->forward_backward(*model, batch, LossOptions{}, rng);
        } else {
            Tensor loss = ladder_model        ? ladder_model->forward_loss(batch).loss
                          : transformer_model ? bench::transformer_ladder_loss(
                                                    *transformer_model, batch, transformer_ladder)
                                              : model->forward_loss(batch).loss;
            loss.backward();
        }
        phase_seconds[0] += lap(since);
        clip_grad_norm(adam, 1.0);
        phase_seconds[1] += lap(since);
        adam.step();
        phase_seconds[2] += lap(since);
        tokens += batch.num_target_tokens;
        flops += bench::training_flops(c, batch);
        ++steps;
    };
    // warm-up (--warmup-steps, default 10), then time
    bench::time_it(step, 0, 0, args.get_int("warmup-steps", 10));
    BufferPoolStats before = buffer_pool_stats();
    tokens = 0;
    steps = 0;
    flops = 0;
    for (double& p : phase_seconds) p = 0;
    bench::Timing t = bench::time_it(step, seconds, 0, 5);
    BufferPoolStats after = buffer_pool_stats();
    double tokens_per_step = double(tokens) / double(steps);
    double flops_per_step = flops / double(steps);
    nlohmann::json line{
        {"impl", "seqgrad"},
        {"bench", "train"},
        {"config", c.name},
        {"cell", c.kind == "rnn" ? c.cell : c.kind},
        {"parameters", parameter_count},
        {"threads", threads},
        {"parallel", data_parallel ? "data" : "blas"},
        {"batch", c.B},
        {"target_len", target_len},
        {"ladder_off", ladder_off},
        {"ms_per_step", t.median_ms},
        {"ms_per_step_mean", t.mean_ms},
        {"cpu_ms_per_step", t.cpu_median_ms},
        {"tokens_per_s", tokens_per_step / (t.median_ms / 1e3)},
        {"tokens_per_step", tokens_per_step},
        {"gflops", flops_per_step / (t.median_ms / 1e3) / 1e9},
        {"gflop_per_step", flops_per_step / 1e9},
        {"steps", t.runs},
        {"live_buffers_growth", after.live_buffers - before.live_buffers},
        {"system_allocations_during_timing", after.system_allocations - before.system_allocations},
        {"pool_cached_mb", double(after.cached_bytes) / (1 << 20)},
        {"peak_rss_mb", bench::peak_rss_mb()},
        {"phase_ms_mean",
         {{"forward_backward", 1e3 * phase_seconds[0] / double(steps)},
          {"grad_norm", 1e3 * phase_seconds[1] / double(steps)},
          {"adam_and_zero_grad", 1e3 * phase_seconds[2] / double(steps)}}}};
    fmt::print("{}\n", line.dump());
    return 0;
}
