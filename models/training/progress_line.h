// Timings and the progress line of a run: the sums between two train records of metrics.jsonl
// (LogWindow), and the line on stderr that shows where training is.
#pragma once

#include <chrono>
#include <cstdint>

namespace seqgrad {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start);

// The loss, token and timing sums between two train records.
struct LogWindow {
    Clock::time_point start = Clock::now();
    int64_t tokens = 0;
    double loss_sum = 0;                                 // Σ loss · tokens over the steps
    double communication_seconds = 0, wait_seconds = 0;  // across ranks (data_parallel.h)

    void add_step(double loss, int64_t step_tokens) {
        tokens += step_tokens;
        loss_sum += loss * double(step_tokens);
    }
    double mean_loss() const;     // over the window's real target tokens
    double tokens_per_s() const;  // since start
    void restart() { *this = LogWindow(); }
};

// "epoch E step S/T loss L |g| N X tok/s ETA Ts" on stderr, rewritten in place on a terminal.
// The ETA extrapolates the time per step since the run (or its resume) started:
// elapsed_s / steps_done · (total_steps − step).
struct ProgressLine {
    uint64_t epoch = 0;  // 0-based (shown from 1)
    int64_t step = 0, total_steps = 0;
    double loss = 0, grad_norm = 0, tokens_per_s = 0;
    double elapsed_s = 0;
    int64_t steps_done = 0;  // in this session
};
void print_progress_line(const ProgressLine& line);

}  // namespace seqgrad
