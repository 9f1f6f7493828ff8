// SplitMix64: the data pipeline's seeded random generator.
//
// Shuffling and date sampling must give the same sequence on every compiler and standard
// library, so that a seed means the same data everywhere. std::mt19937_64 would be portable,
// but std::uniform_int_distribution and std::shuffle are not (each library maps random bits to
// ranges its own way). So seqgrad uses its own generator and its own bounded-integer rule.
//
// SplitMix64 (Steele, Lea, Flood 2014; the seeding generator of xoshiro) has one 64-bit word
// of state, passes BigCrush, and any seed - including 0 - is a good seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace seqgrad {

class SplitMix64 {
  public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}

    /// A generator for the `stream`-th independent use of one seed (e.g. one per epoch):
    /// the state is the seed and the stream number mixed, so (seed, stream) pairs that differ
    /// in either give unrelated sequences.
    static SplitMix64 for_stream(uint64_t seed, uint64_t stream);

    /// The next 64 random bits.
    uint64_t next();

    /// A uniform integer in [0, n), n > 0, without modulo bias: draws that fall in the short
    /// top slice of the 64-bit range (2^64 mod n values) are rejected and redrawn.
    uint64_t below(uint64_t n);

    /// Shuffles `items` uniformly (Fisher-Yates, from the back).
    template <typename T>
    void shuffle(std::vector<T>& items) {
        for (size_t i = items.size(); i > 1; --i) {
            const size_t j = static_cast<size_t>(below(i));
            std::swap(items[i - 1], items[j]);
        }
    }

    uint64_t state() const { return state_; }

  private:
    uint64_t state_;
};

}  // namespace seqgrad
