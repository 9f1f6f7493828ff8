// The two classic long-range benchmarks, as generators of batches (`seqgrad gradflow --task
// adding|copy_memory`). Both put the information the loss needs at the START of a long input
// and read the answer at its END, so a recurrent model must carry it across T steps.
//
// Adding problem (Hochreiter & Schmidhuber 1997, in the form of Le et al. 2015 and Arjovsky et
// al. 2016). T steps, two channels per step:
//   channel 0: a value v_t ~ U[0, 1)
//   channel 1: a marker m_t ∈ {0, 1} with exactly two 1s: one at a position drawn uniformly from
//              the first half [0, ⌊T/2⌋), the other uniformly from the second half [⌊T/2⌋, T)
//   target:    y = Σ_t m_t v_t, the sum of the two marked values, read after the last step.
// Loss: the mean squared error. Always predicting 1 (the mean of y) gives E[(y − 1)²] =
// Var(v_a + v_b) = 2 · 1/12 = 1/6 ≈ 0.1667: the baseline a model must beat. (Le et al. 2015
// print 0.1767 for it; the definition gives 1/6, which is what our generator measures.)
//
// Copy-memory task (Hochreiter & Schmidhuber 1997, in the form of Arjovsky et al. 2016).
// Categories 0..7 are symbols, 8 is the blank, 9 the delimiter; the input is T + 20 steps, one
// category each (one-hot, 10 channels):
//   steps 0 .. 9             10 symbols drawn uniformly from the 8
//   steps 10 .. T + 8        T − 1 blanks
//   step  T + 9              the delimiter ("now repeat")
//   steps T + 10 .. T + 19   10 blanks, during which the model must output the 10 symbols
// Arjovsky et al. score all T + 20 outputs (blanks expected before the answer), where the
// memoryless strategy (blanks, then a uniform guess) scores 10 ln 8 / (T + 20). We score only
// the 10 answer steps, with a classifier over the 8 symbols, so the memoryless baseline is
// ln 8 ≈ 2.079 for every T, and a loss of 0 means all 10 symbols recalled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqgrad/autograd/real.h"
#include "seqgrad/autograd/rng.h"

namespace seqgrad {

struct LongRangeBatch {
    std::string task;                            // "adding" or "copy_memory"
    int64_t batch = 0, steps = 0, channels = 0;  // inputs [batch, steps, channels]
    std::vector<real> inputs;                    // batch-first, row b at b * steps * channels
    // The model reads its answer from the recurrent state at steps
    // answer_start .. answer_start + answers − 1 and attends over the states at [0, memory).
    int64_t answer_start = 0, answers = 0, memory = 0;
    std::vector<real> sums;        // adding: the target of row b
    std::vector<int32_t> symbols;  // copy_memory: the target of row b, answer k at b * 10 + k
    int64_t classes = 0;           // copy_memory: 8 symbol classes; adding: 0 (regression)
};

// The number of symbols to recall and the size of the alphabet (Arjovsky et al. 2016).
constexpr int kCopyMemorySymbols = 10, kCopyMemoryAlphabet = 8;

// `batch` adding-problem sequences of `length` T >= 2 steps.
LongRangeBatch adding_batch(int length, int batch, Rng& rng);
// `batch` copy-memory sequences with T = `length` >= 1 blanks between symbols and answer (so
// T + 20 steps).
LongRangeBatch copy_memory_batch(int length, int batch, Rng& rng);
// One of the two by name; throws naming the task otherwise.
LongRangeBatch long_range_batch(const std::string& task, int length, int batch, Rng& rng);
bool is_long_range_task(const std::string& task);

// The loss of the memoryless baseline: 1/6 (adding: always predict 1), ln 8 (copy_memory: a
// uniform guess at each of the 10 answer steps).
double long_range_baseline(const std::string& task);

}  // namespace seqgrad
