// The adding and copy-memory generators: see apps/studies/longrange_tasks.h.
#include "apps/studies/longrange_tasks.h"

#include <fmt/format.h>

#include <cmath>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

LongRangeBatch adding_batch(int length, int batch, Rng& rng) {
    if (length < 2 || batch < 1)
        throw Error(fmt::format("adding task: length T = {} must be >= 2 and batch {} >= 1", length,
                                batch));
    LongRangeBatch out;
    out.task = "adding";
    out.batch = batch;
    out.steps = length;
    out.channels = 2;
    out.answer_start = length - 1;  // read after the last step
    out.answers = 1;
    out.memory = length;
    out.inputs.assign(size_t(batch) * size_t(length) * 2, 0);
    out.sums.resize(size_t(batch));
    const int half = length / 2;
    for (int b = 0; b < batch; ++b) {
        real* row = out.inputs.data() + size_t(b) * size_t(length) * 2;
        for (int t = 0; t < length; ++t) row[2 * t] = real(rng.uniform());
        const int first = int(rng.below(uint64_t(half)));
        const int second = half + int(rng.below(uint64_t(length - half)));
        row[2 * first + 1] = 1;
        row[2 * second + 1] = 1;
        out.sums[size_t(b)] = row[2 * first] + row[2 * second];
    }
    return out;
}

LongRangeBatch copy_memory_batch(int length, int batch, Rng& rng) {
    if (length < 1 || batch < 1)
        throw Error(fmt::format("copy_memory task: length T = {} must be >= 1 and batch {} >= 1",
                                length, batch));
    constexpr int K = kCopyMemorySymbols, blank = kCopyMemoryAlphabet, delimiter = blank + 1;
    constexpr int channels = kCopyMemoryAlphabet + 2;
    LongRangeBatch out;
    out.task = "copy_memory";
    out.batch = batch;
    out.steps = length + 2 * K;
    out.channels = channels;
    out.answer_start = length + K;
    out.answers = K;
    out.memory = length + K;  // everything before the answer phase
    out.classes = kCopyMemoryAlphabet;
    out.inputs.assign(size_t(batch * out.steps * channels), 0);
    out.symbols.resize(size_t(batch * K));
    for (int b = 0; b < batch; ++b) {
        real* row = out.inputs.data() + size_t(b * out.steps * channels);
        for (int64_t t = 0; t < out.steps; ++t) {
            int category = blank;
            if (t < K) {
                category = int(rng.below(kCopyMemoryAlphabet));
                out.symbols[size_t(b * K + t)] = category;
            } else if (t == length + K - 1) {
                category = delimiter;
            }
            row[t * channels + category] = 1;
        }
    }
    return out;
}

bool is_long_range_task(const std::string& task) {
    return task == "adding" || task == "copy_memory";
}

LongRangeBatch long_range_batch(const std::string& task, int length, int batch, Rng& rng) {
    if (task == "adding") return adding_batch(length, batch, rng);
    if (task == "copy_memory") return copy_memory_batch(length, batch, rng);
    throw Error(fmt::format("long-range task '{}': expected adding or copy_memory", task));
}

double long_range_baseline(const std::string& task) {
    if (task == "adding") return 1.0 / 6.0;
    if (task == "copy_memory") return std::log(double(kCopyMemoryAlphabet));
    throw Error(fmt::format("long-range task '{}': expected adding or copy_memory", task));
}

}  // namespace seqgrad
