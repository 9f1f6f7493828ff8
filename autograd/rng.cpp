#include "seqgrad/autograd/rng.h"

#include <cmath>

namespace seqgrad {

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

// The state is filled from the seed by splitmix64, as the xoshiro authors recommend.
void Rng::seed_with(uint64_t seed) {
    for (auto& s : state_) {
        seed += 0x9e3779b97f4a7c15ull;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        s = z ^ (z >> 31);
    }
}

uint64_t Rng::next_u64() {
    uint64_t* s = state_.data();
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double Rng::uniform() {
    return double(next_u64() >> 11) * 0x1.0p-53;
}
double Rng::uniform(double lo, double hi) {
    return lo + (hi - lo) * uniform();
}

double Rng::normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Lemire's multiply-shift with rejection: unbiased.
uint64_t Rng::below(uint64_t n) {
    if (n == 0) return 0;
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        __uint128_t m = __uint128_t(next_u64()) * n;
        if (uint64_t(m) >= threshold) return uint64_t(m >> 64);
    }
}

namespace {
thread_local Rng* g_thread_rng = nullptr;
}  // namespace

Rng& thread_rng(Rng& own) {
    return g_thread_rng ? *g_thread_rng : own;
}

ThreadRng::ThreadRng(Rng& rng) : previous_(g_thread_rng) {
    g_thread_rng = &rng;
}
ThreadRng::~ThreadRng() {
    g_thread_rng = previous_;
}

}  // namespace seqgrad
