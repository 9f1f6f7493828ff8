#include "seqgrad/models/training/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace seqgrad {

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double LogWindow::mean_loss() const {
    return loss_sum / double(std::max<int64_t>(tokens, 1));
}

double LogWindow::tokens_per_s() const {
    return double(tokens) / std::max(seconds_since(start), 1e-9);
}

void print_progress_line(const ProgressLine& p) {
    const double per_step = p.elapsed_s / double(std::max<int64_t>(p.steps_done, 1));
    const double eta = per_step * double(p.total_steps - p.step);
    const bool tty = isatty(STDERR_FILENO);
    fmt::print(stderr, "{}epoch {} step {}/{} loss {:.4f} |g| {:.3f} {:.0f} tok/s ETA {:.0f}s{}",
               tty ? "\r" : "", p.epoch + 1, p.step, p.total_steps, p.loss, p.grad_norm,
               p.tokens_per_s, eta, tty ? "   " : "\n");
}

}  // namespace seqgrad
