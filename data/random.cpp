#include "seqgrad/data/random.h"

#include <stdexcept>

namespace seqgrad {

uint64_t SplitMix64::next() {
    // Weyl sequence step, then a bijective mix of the 64 bits (constants from the paper).
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

SplitMix64 SplitMix64::for_stream(uint64_t seed, uint64_t stream) {
    SplitMix64 mixer(seed);
    const uint64_t a = mixer.next();
    SplitMix64 stream_mixer(stream ^ 0x6A09E667F3BCC909ULL);
    return SplitMix64(a ^ stream_mixer.next());
}

uint64_t SplitMix64::below(uint64_t n) {
    if (n == 0) throw std::invalid_argument("SplitMix64::below: n must be positive");
    // Accept x only if it lies in the largest multiple of n that fits in 2^64;
    // (2^64 - n) % n == 2^64 % n is the size of the rejected slice.
    const uint64_t rejected = (0 - n) % n;
    uint64_t x = next();
    while (x < rejected) x = next();
    return x % n;
}

}  // namespace seqgrad
