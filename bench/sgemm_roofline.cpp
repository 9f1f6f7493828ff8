// cblas_sgemm GFLOP/s on the GEMM shapes of a training step, so that a step's useful GFLOP/s
// can be stated as a fraction of what BLAS reaches on the same shapes.
//
// usage: sgemm_roofline [--threads N] [--seconds S]
//          a fixed list of shapes of configs (a) and (c) plus square 1024 (one JSON line each)
//        sgemm_roofline --config a|b|c|d|e|t|g [--threads N] [--seconds S]
//          the GEMM mix of one training step of that config (see below): one JSON line per
//          product ("bench":"sgemm"), then one summary line ("bench":"sgemm_roofline")
//
// The mix of --config: every matrix product of the model's training step, at the shape the
// step computes it (x Wᵀ, rows = tokens), with its two backward products (dX = dY W and
// dW = dYᵀ X), on the same synthetic batch pool as train_throughput (seed 1, 16 batches):
//   encoder input gates, all steps at once   [B*S_pad, E]   x [E, 3H]
//   encoder hidden gates, per step           [B, H]         x [H, 3H]
//   attention keys, once per batch           [B*S_pad, H]   x [H, A]      (Luong: W_a, H x H)
//   attention query, per decoder step        [B, H]         x [H, A]      (Bahdanau)
//   decoder input gates, per step            [B, E+H]       x [E+H, 3H]   (Luong: [B, E])
//   decoder hidden gates, per step           [B, H]         x [H, 3H]
//   Luong W_c, per step                      [B, 2H]        x [2H, H]
//   output projection, real tokens only      [N_tok, H]     x [H, V]
// (S_pad = mean padded source length of the pool, N_tok = mean real target tokens per batch;
// a bidirectional encoder (g) has each encoder product twice, K = 2 He the encoder's output
// size, which the keys and the decoder's input read; g's deep output reads [h; c; emb].)
// The Transformer (t), each product once per layer of its stack, on the real tokens only (it
// trains on packed sentences; S_tok = mean real source tokens per batch):
//   encoder q, k, v (in_proj) [S_tok, E] x [E, 3E]; out_proj [E, E];
//   feed-forward [S_tok, E] x [E, F] and [S_tok, F] x [F, E]
//   decoder self q, k, v [N_tok, E] x [E, 3E]; out_proj; cross q [N_tok, E] x [E, E];
//   cross k, v of the memory [S_tok, E] x [E, 2E]; out_proj; the feed-forward pair
//   output projection [N_tok, E] x [E, V]
// (attention's q·k and a·v products per head are counted as non-GEMM work)
// Each product is weighted by the USEFUL (non-pad) FLOPs it carries per step, counted exactly
// as bench::training_flops counts them, and the summary gives
//   weighted_gflops = sum(useful FLOPs) / sum(useful FLOPs / measured GFLOP/s of its shape)
// i.e. the throughput of a BLAS that spent exactly sgemm's own time on the step's useful GEMM
// work: the roofline against which `useful GFLOP/s / weighted_gflops` is the efficiency of a
// step. A shape that occurs twice in the mix is timed once. Attention scores and context (not
// GEMMs in the engine, < 1% of (c)'s FLOPs) are reported as non_gemm_gflop_per_step and left
// out of the mix. best_gflops (the fastest shape of the mix) and square1024_gflops are printed
// for reference.
#include <cblas.h>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "apps/cli/args.h"
#include "bench_util.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/rng.h"
#include "synthetic.h"

using namespace seqgrad;

namespace {

struct Shape {
    std::string what;
    int M, N, K;
    bool ta, tb;
    double useful_flops = 0;  // per training step (--config mode only)
};

// cblas_sgemm GFLOP/s and median ms of one shape
std::pair<double, double> time_shape(const Shape& s, double seconds, Rng& rng) {
    std::vector<float> a(size_t(s.M) * s.K), b(size_t(s.K) * s.N), c(size_t(s.M) * s.N);
    for (auto& x : a) x = float(rng.uniform(-1, 1));
    for (auto& x : b) x = float(rng.uniform(-1, 1));
    auto t = bench::time_it(
        [&] {
            cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                        s.tb ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, 1, a.data(),
                        s.ta ? s.M : s.K, b.data(), s.tb ? s.K : s.N, 0, c.data(), s.N);
        },
        seconds);
    return {2.0 * s.M * s.N * s.K / (t.median_ms / 1e3) / 1e9, t.median_ms};
}

int fixed_list(int threads, double seconds) {
    // M x K times K x N, as the engine calls them (x Wᵀ: tb = true)
    const Shape shapes[] = {
        {"(a) output projection, all real tokens: [274,256] x [256,6000]", 274, 6000, 256, false,
         true},
        {"(a) output dW: [6000,274] x [274,256]", 6000, 256, 274, true, false},
        {"(a) GRU hidden gates per step: [32,256] x [256,768]", 32, 768, 256, false, true},
        {"(a) encoder input gates, all steps: [384,256] x [256,768]", 384, 768, 256, false, true},
        {"(a) output per step: [32,256] x [256,6000]", 32, 6000, 256, false, true},
        {"(c) output projection: [548,512] x [512,6000]", 548, 6000, 512, false, true},
        {"(c) GRU hidden gates per step: [64,512] x [512,1536]", 64, 1536, 512, false, true},
        {"(c) encoder input gates: [768,512] x [512,1536]", 768, 1536, 512, false, true},
        {"square 1024", 1024, 1024, 1024, false, false},
    };
    Rng rng(1);
    for (const Shape& s : shapes) {
        auto [gflops, ms] = time_shape(s, seconds, rng);
        fmt::print("{}\n", nlohmann::json{{"impl", "openblas"},
                                          {"bench", "sgemm"},
                                          {"shape", s.what},
                                          {"threads", threads},
                                          {"gflops", gflops},
                                          {"ms", ms}}
                               .dump());
    }
    return 0;
}

int config_mix(const std::string& name, int threads, double seconds) {
    const bench::BenchConfig c = bench::bench_config(name);
    const std::vector<Batch> pool = bench::batch_pool(c, 1, 16, 0, 0, 0);  // as train_throughput
    double src_pad = 0, src_tokens = 0, tgt_tokens = 0, all_flops = 0;
    for (const Batch& b : pool) {
        src_pad += b.src_len;
        for (int i = 0; i < b.batch_size; ++i) src_tokens += b.src_lengths[i];
        tgt_tokens += double(b.num_target_tokens);
        all_flops += bench::training_flops(c, b);
    }
    const double n = double(pool.size());
    src_pad /= n;
    src_tokens /= n;
    tgt_tokens /= n;
    all_flops /= n;
    const int B = c.B, E = c.E, H = c.H, A = c.A, V = int(c.Vt);
    const int rows_src = int(std::lround(B * src_pad)), rows_tgt = int(std::lround(tgt_tokens));
    const bool bahdanau = c.attention == "bahdanau";
    const int He = c.encoder_hidden > 0 ? c.encoder_hidden : H, dirs = c.bidirectional ? 2 : 1;
    const int Ke = dirs * He;                      // the encoder's output size
    const int O = c.deep_output ? H + Ke + E : H;  // what the output projection reads

    struct Product {
        std::string what;
        int M, N, K;         // forward x Wᵀ: [M,K] x [K,N]
        double useful_rows;  // real tokens per step that go through it, times its repeats
    };
    std::vector<Product> products;
    if (c.kind == "transformer") {
        const int F = c.H, L = c.layers;
        const int rows_enc = int(std::lround(src_tokens)), rows_dec = rows_tgt;
        const double s = L * src_tokens, t = L * tgt_tokens;
        products = {
            {"encoder q, k, v", rows_enc, 3 * E, E, s},
            {"encoder out_proj", rows_enc, E, E, s},
            {"encoder feed-forward 1", rows_enc, F, E, s},
            {"encoder feed-forward 2", rows_enc, E, F, s},
            {"decoder self q, k, v", rows_dec, 3 * E, E, t},
            {"decoder self out_proj", rows_dec, E, E, t},
            {"decoder cross q", rows_dec, E, E, t},
            {"decoder cross k, v (memory)", rows_enc, 2 * E, E, s},
            {"decoder cross out_proj", rows_dec, E, E, t},
            {"decoder feed-forward 1", rows_dec, F, E, t},
            {"decoder feed-forward 2", rows_dec, E, F, t},
            {"output projection, real tokens", rows_tgt, V, E, tgt_tokens},
        };
    } else {
        products = {
            {"encoder input gates, all steps", rows_src, 3 * He, E, dirs * src_tokens},
            {"encoder hidden gates, per step", B, 3 * He, He, dirs * src_tokens},
        };
        if (bahdanau) {
            products.push_back({"attention keys, once", rows_src, A, Ke, src_tokens});
            products.push_back({"attention query, per step", B, A, H, tgt_tokens});
            products.push_back({"decoder input gates, per step", B, 3 * H, E + Ke, tgt_tokens});
        } else {
            products.push_back({"attention W_a keys, once", rows_src, H, H, src_tokens});
            products.push_back({"decoder input gates, per step", B, 3 * H, E, tgt_tokens});
            products.push_back({"attention W_c, per step", B, H, 2 * H, tgt_tokens});
        }
        products.push_back({"decoder hidden gates, per step", B, 3 * H, H, tgt_tokens});
        products.push_back({"output projection, real tokens", rows_tgt, V, O, tgt_tokens});
    }

    std::vector<Shape> shapes;
    double gemm_flops = 0;
    for (const Product& p : products) {
        const double w = 2.0 * p.N * p.K * p.useful_rows;  // each of fwd, dX, dW
        gemm_flops += 3 * w;
        auto dims = [](int M, int K, int N) {
            return fmt::format("[{},{}] x [{},{}]", M, K, K, N);
        };
        shapes.push_back({fmt::format("({}) {}: fwd {}", name, p.what, dims(p.M, p.K, p.N)), p.M,
                          p.N, p.K, false, true, w});
        shapes.push_back({fmt::format("({}) {}: dX {}", name, p.what, dims(p.M, p.N, p.K)), p.M,
                          p.K, p.N, false, false, w});
        shapes.push_back({fmt::format("({}) {}: dW {}", name, p.what, dims(p.N, p.M, p.K)), p.N,
                          p.K, p.M, true, false, w});
    }

    Rng rng(1);
    double sgemm_seconds = 0, best = 0;
    std::string best_shape;
    // identical shapes (the encoder's and the decoder's hidden gates) are timed once
    std::map<std::tuple<bool, bool, int, int, int>, std::pair<double, double>> timed;
    for (const Shape& s : shapes) {
        auto key = std::make_tuple(s.ta, s.tb, s.M, s.N, s.K);
        if (!timed.count(key)) timed[key] = time_shape(s, seconds, rng);
        auto [gflops, ms] = timed[key];
        sgemm_seconds += s.useful_flops / (gflops * 1e9);
        if (gflops > best) best = gflops, best_shape = s.what;
        fmt::print("{}\n",
                   nlohmann::json{{"impl", "openblas"},
                                  {"bench", "sgemm"},
                                  {"config", name},
                                  {"shape", s.what},
                                  {"op", fmt::format("{}{}", s.ta ? 'T' : 'N', s.tb ? 'T' : 'N')},
                                  {"M", s.M},
                                  {"N", s.N},
                                  {"K", s.K},
                                  {"threads", threads},
                                  {"gflops", gflops},
                                  {"ms", ms},
                                  {"useful_gflop_per_step", s.useful_flops / 1e9},
                                  {"share_of_gemm_flops", s.useful_flops / gemm_flops}}
                       .dump());
    }
    auto [square, square_ms] =
        time_shape({"square 1024", 1024, 1024, 1024, false, false}, seconds, rng);
    (void)square_ms;
    fmt::print("{}\n", nlohmann::json{{"impl", "openblas"},
                                      {"bench", "sgemm_roofline"},
                                      {"config", name},
                                      {"threads", threads},
                                      {"weighted_gflops", gemm_flops / sgemm_seconds / 1e9},
                                      {"sgemm_ms_per_step", sgemm_seconds * 1e3},
                                      {"useful_gemm_gflop_per_step", gemm_flops / 1e9},
                                      {"useful_gflop_per_step", all_flops / 1e9},
                                      {"non_gemm_gflop_per_step", (all_flops - gemm_flops) / 1e9},
                                      {"best_gflops", best},
                                      {"best_shape", best_shape},
                                      {"square1024_gflops", square},
                                      {"shapes", int(shapes.size())}}
                           .dump());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Args args(std::vector<std::string>(argv + 1, argv + argc), {"threads", "seconds", "config"},
              {});
    const int threads = args.get_int("threads", 1);
    const double seconds = args.get_double("seconds", 1);
    set_blas_threads(threads);
    if (args.has("config")) return config_mix(args.get("config"), threads, seconds);
    return fixed_list(threads, seconds);
}
