// bench/recurrent_cell: a fused recurrent cell against its composed twin (float; the GRU by
// default, or --cell lstm / rnn; batch 32, input 256, H = 256 by default): forward + backward, and
// forward alone under NoGradGuard (decoding); then a whole encoder layer of that cell over a
// padded batch [B, T, in] run with each form.
//
// Usage: recurrent_cell [--cell gru|lstm|rnn] [--batch B] [--hidden H] [--steps T] [--reps N]
//                       [--threads N]
//
// One repetition = forward, then backward from a fixed upstream gradient (gradients
// accumulate; zeroing them is not timed). Each figure is the median over N repetitions after
// N/10 warm-up ones, fused and composed interleaved (a, b, a, b, ...) so that a change of
// machine load during the run affects both alike. Two clocks: wall time, and the CPU time of
// the calling thread, which is what to read on a shared, loaded machine (with --threads 1
// OpenBLAS computes in the calling thread, so that CPU time covers all the work).
// Prints a table and one JSON line.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/recurrent.h"

using namespace seqgrad;

namespace {

Tensor random_tensor(const Shape& shape, Rng& rng, bool requires_grad) {
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(rng.uniform(-1, 1));
    t.set_requires_grad(requires_grad);
    return t;
}

double thread_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

struct Timing {
    double wall_ms, cpu_ms;  // medians
};

// Medians of `reps` interleaved calls of fn_a and fn_b, after reps/10 warm-up calls of each.
template <class FnA, class FnB>
std::pair<Timing, Timing> interleaved_medians(int reps, FnA fn_a, FnB fn_b) {
    for (int i = 0; i < std::max(1, reps / 10); ++i) fn_a(), fn_b();
    std::vector<double> wall_a, cpu_a, wall_b, cpu_b;
    auto time_one = [](auto& fn, std::vector<double>& wall, std::vector<double>& cpu) {
        const double cpu_start = thread_cpu_ms();
        const auto wall_start = std::chrono::steady_clock::now();
        fn();
        const auto wall_stop = std::chrono::steady_clock::now();
        cpu.push_back(thread_cpu_ms() - cpu_start);
        wall.push_back(std::chrono::duration<double, std::milli>(wall_stop - wall_start).count());
    };
    for (int i = 0; i < reps; ++i) {
        time_one(fn_a, wall_a, cpu_a);
        time_one(fn_b, wall_b, cpu_b);
    }
    auto median = [](std::vector<double>& v) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
    };
    return {{median(wall_a), median(cpu_a)}, {median(wall_b), median(cpu_b)}};
}

void print_pair(const char* what, Timing fused, Timing composed) {
    fmt::print("| {:<34} | {:8.3f} | {:8.3f} | {:5.2f}x | {:8.3f} | {:8.3f} | {:5.2f}x |\n", what,
               fused.cpu_ms, composed.cpu_ms, composed.cpu_ms / fused.cpu_ms, fused.wall_ms,
               composed.wall_ms, composed.wall_ms / fused.wall_ms);
}

}  // namespace

int main(int argc, char** argv) {
    int64_t B = 32, H = 256, T = 12;
    int reps = 500, threads = 1;
    CellType type = CellType::gru;
    if (argc % 2 == 0) {
        fmt::print(stderr, "recurrent_cell: option {} needs a value\n", argv[argc - 1]);
        return 2;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const long value = std::atol(argv[i + 1]);
        if (key == "--cell") {
            try {
                type = parse_cell_type(argv[i + 1]);
            } catch (const Error& e) {
                fmt::print(stderr, "recurrent_cell: --cell: {}\n", e.what());
                return 2;
            }
        } else if (key == "--batch") {
            B = value;
        } else if (key == "--hidden") {
            H = value;
        } else if (key == "--steps") {
            T = value;
        } else if (key == "--reps") {
            reps = int(value);
        } else if (key == "--threads") {
            threads = int(value);
        } else {
            fmt::print(stderr, "recurrent_cell: unknown option {} (see the comment at the top)\n",
                       key);
            return 2;
        }
    }
    if (B < 1 || H < 1 || T < 1 || reps < 1 || threads < 1) {
        fmt::print(stderr, "recurrent_cell: every option must be >= 1\n");
        return 2;
    }
    set_blas_threads(threads);
    const int64_t I = H;  // input size = hidden size, as in the E = H = 256 configs
    Rng rng(1);

    // ---- one cell step: x [B,I], state [B,H] -> state' [B,H], backward from h' to every input
    // and weight (for the LSTM, through c' too)
    auto cell = make_cell(type, I, H, rng);
    Tensor x = random_tensor({B, I}, rng, true), h = random_tensor({B, H}, rng, true);
    Tensor c = random_tensor({B, H}, rng, type == CellType::lstm);
    const RecurrentState state{h, type == CellType::lstm ? c : Tensor()};
    Tensor upstream = random_tensor({B, H}, rng, false);
    auto step = [&](bool fused) {
        cell->use_fused = fused;
        return cell->step(x, state);
    };
    auto [cell_fused, cell_composed] = interleaved_medians(
        reps, [&] { step(true).h.backward(upstream); }, [&] { step(false).h.backward(upstream); });
    auto [forward_fused, forward_composed] = interleaved_medians(
        reps,
        [&] {
            NoGradGuard no_grad;
            step(true);
        },
        [&] {
            NoGradGuard no_grad;
            step(false);
        });
    double max_difference = 0;  // the same function: float rounding and activations aside
    {
        NoGradGuard no_grad;
        Tensor a = step(true).h, b = step(false).h;
        for (int64_t i = 0; i < a.numel(); ++i)
            max_difference = std::max(max_difference, double(std::fabs(a.data()[i] - b.data()[i])));
    }

    // ---- a layer over a padded batch [B,T,I], lengths T, T-1, T-2, T-3, T, ... (>= 1)
    auto layer = make_recurrent(type, I, H, 1, false, 0, rng);
    Tensor inputs = random_tensor({B, T, I}, rng, true);
    std::vector<int32_t> lengths(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) lengths[size_t(b)] = int32_t(std::max<int64_t>(1, T - b % 4));
    Tensor out_grad = random_tensor({B, T, H}, rng, false);
    auto layer_step = [&](bool fused) {
        layer->use_fused = fused;
        layer->forward(inputs, lengths).outputs.backward(out_grad);
    };
    const int layer_reps = std::max(10, reps / 10);
    auto [layer_fused, layer_composed] = interleaved_medians(
        layer_reps, [&] { layer_step(true); }, [&] { layer_step(false); });

    fmt::print(
        "{} cell, float, batch {}, input {}, hidden {}, {} BLAS thread(s); medians of {} reps "
        "({} for the layer)\n\n",
        cell_type_name(type), B, I, H, threads, reps, layer_reps);
    fmt::print(
        "| {:<34} | fused ms | comp. ms | ratio  | fused ms | comp. ms | ratio  |\n"
        "| {:<34} | (cpu)    | (cpu)    | (cpu)  | (wall)   | (wall)   | (wall) |\n"
        "|{:-<36}|{:-<10}|{:-<10}|{:-<8}|{:-<10}|{:-<10}|{:-<8}|\n",
        "", "", "", "", "", "", "", "", "");
    print_pair("cell forward + backward", cell_fused, cell_composed);
    print_pair("cell forward (no grad)", forward_fused, forward_composed);
    print_pair(fmt::format("layer T={} fwd + bwd", T).c_str(), layer_fused, layer_composed);
    // the products of a cell step: 2 forward (x W_ihᵀ, h W_hhᵀ), 4 backward (dx, dW_ih, dh,
    // dW_hh), each 2·B·G·(I or H) flop with G = gates·H
    const double cell_gflop = 2.0 * double(B * cell_gate_count(type) * H * (I + H)) * 3 / 1e9;
    fmt::print(
        "\nfused cell forward + backward: {:.1f} GFLOP/s counting only its products (cpu time); "
        "max |fused - composed| = {:.2g}\n",
        cell_gflop / (cell_fused.cpu_ms / 1e3), max_difference);
    fmt::print(
        "{{\"impl\":\"seqgrad\",\"bench\":\"recurrent_cell\",\"cell\":\"{}\",\"batch\":{},"
        "\"hidden\":{},\"threads\":{},"
        "\"cell_fused_cpu_ms\":{:.4f},\"cell_composed_cpu_ms\":{:.4f},\"cell_fused_wall_ms\":{:.4f}"
        ","
        "\"cell_composed_wall_ms\":{:.4f},\"forward_fused_cpu_ms\":{:.4f},"
        "\"forward_composed_cpu_ms\":{:.4f},\"steps\":{},\"layer_fused_cpu_ms\":{:.4f},"
        "\"layer_composed_cpu_ms\":{:.4f}}}\n",
        cell_type_name(type), B, H, threads, cell_fused.cpu_ms, cell_composed.cpu_ms,
        cell_fused.wall_ms, cell_composed.wall_ms, forward_fused.cpu_ms, forward_composed.cpu_ms, T,
        layer_fused.cpu_ms, layer_composed.cpu_ms);
    return 0;
}
