// Rng: a small, fast, seeded random generator (xoshiro256**), the same sequence on every
// platform (unlike std::uniform_real_distribution). Its state can be saved in a checkpoint so
// that a resumed run draws the same numbers as an uninterrupted one.
#pragma once

#include <array>
#include <cstdint>

namespace seqgrad {

class Rng {
  public:
    explicit Rng(uint64_t seed = 0x5eed) { seed_with(seed); }
    void seed_with(uint64_t seed);

    uint64_t next_u64();
    double uniform();                      // [0, 1)
    double uniform(double lo, double hi);  // [lo, hi)
    double normal();                       // standard normal (Box-Muller)
    uint64_t below(uint64_t n);            // uniform integer in [0, n)

    std::array<uint64_t, 4> state() const { return state_; }
    void set_state(const std::array<uint64_t, 4>& state) { state_ = state; }

  private:
    std::array<uint64_t, 4> state_{};
};

// The generator a module should draw from on the calling thread: `own` (the model's generator)
// unless a ThreadRng is alive on this thread. Data-parallel workers install one each, seeded
// from the model's generator, so that dropout and teacher forcing never share a generator
// between threads and a run stays reproducible for a given number of threads.
Rng& thread_rng(Rng& own);

class ThreadRng {
  public:
    explicit ThreadRng(Rng& rng);
    ~ThreadRng();
    ThreadRng(const ThreadRng&) = delete;
    ThreadRng& operator=(const ThreadRng&) = delete;

  private:
    Rng* previous_;
};

}  // namespace seqgrad
