// Timing helpers shared by the benchmark programs: run a function until a time budget is
// spent (after a warm-up) and report the median, which is robust to the noise of a shared
// machine.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace seqgrad::bench {

struct Timing {
    double median_ms = 0;
    double mean_ms = 0;
    double cpu_median_ms = 0;  // median CPU time of the process per run (all threads)
    int runs = 0;
};

inline Timing time_it(const std::function<void()>& fn, double seconds = 1.0,
                      double warmup_seconds = 0.2, int min_runs = 5) {
    using Clock = std::chrono::steady_clock;
    auto elapsed = [](Clock::time_point a) {
        return std::chrono::duration<double>(Clock::now() - a).count();
    };
    auto warm = Clock::now();
    do fn();
    while (elapsed(warm) < warmup_seconds);
    // CPU time of the whole process (all its threads): on a machine shared with other jobs a
    // run's wall time includes the time it waited for a core, its CPU time mostly does not.
    auto cpu_ms = [] {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
    };
    std::vector<double> ms, cpu;
    auto start = Clock::now();
    while (elapsed(start) < seconds || int(ms.size()) < min_runs) {
        auto t0 = Clock::now();
        const double c0 = cpu_ms();
        fn();
        ms.push_back(elapsed(t0) * 1e3);
        cpu.push_back(cpu_ms() - c0);
    }
    Timing t;
    t.runs = int(ms.size());
    for (double m : ms) t.mean_ms += m / double(ms.size());
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    t.median_ms = ms[ms.size() / 2];
    std::nth_element(cpu.begin(), cpu.begin() + cpu.size() / 2, cpu.end());
    t.cpu_median_ms = cpu[cpu.size() / 2];
    return t;
}

inline double peak_rss_mb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

}  // namespace seqgrad::bench
