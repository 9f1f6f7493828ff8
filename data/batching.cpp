#include "seqgrad/data/batching.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "seqgrad/data/random.h"
#include "seqgrad/data/vocab.h"

namespace seqgrad {

std::vector<uint8_t> sequence_mask(const std::vector<int32_t>& lengths, int max_len) {
    std::vector<uint8_t> mask(lengths.size() * static_cast<size_t>(max_len), 0);
    for (size_t row = 0; row < lengths.size(); ++row) {
        const int n = std::min(lengths[row], max_len);
        std::fill_n(mask.begin() + static_cast<std::ptrdiff_t>(row * max_len), n, uint8_t{1});
    }
    return mask;
}

std::vector<uint8_t> source_mask(const Batch& batch) {
    return sequence_mask(batch.src_lengths, batch.src_len);
}

std::vector<uint8_t> target_mask(const Batch& batch) {
    return sequence_mask(batch.tgt_lengths, batch.tgt_len);
}

Batch make_batch(const std::vector<EncodedPair>& examples, const std::vector<size_t>& indices) {
    Batch batch;
    batch.batch_size = static_cast<int>(indices.size());
    for (size_t i : indices) {
        const EncodedPair& pair = examples.at(i);
        batch.src_len = std::max(batch.src_len, static_cast<int>(pair.source.size()));
        batch.tgt_len = std::max(batch.tgt_len, static_cast<int>(pair.target.size()));
    }
    const size_t B = indices.size(), S = static_cast<size_t>(batch.src_len),
                 T = static_cast<size_t>(batch.tgt_len);
    batch.src_ids.assign(B * S, Vocab::PAD);
    batch.tgt_in.assign(B * T, Vocab::PAD);
    batch.tgt_out.assign(B * T, Vocab::PAD);
    for (size_t row = 0; row < B; ++row) {
        const EncodedPair& pair = examples[indices[row]];
        std::copy(pair.source.begin(), pair.source.end(), batch.src_ids.begin() + row * S);
        // Teacher forcing: the decoder reads the target shifted right by one, SOS in front.
        const size_t n = pair.target.size();
        batch.tgt_in[row * T] = Vocab::SOS;
        std::copy(pair.target.begin(), pair.target.end() - 1, batch.tgt_in.begin() + row * T + 1);
        std::copy(pair.target.begin(), pair.target.end(), batch.tgt_out.begin() + row * T);
        batch.src_lengths.push_back(static_cast<int32_t>(pair.source.size()));
        batch.tgt_lengths.push_back(static_cast<int32_t>(n));
        batch.num_target_tokens += static_cast<int64_t>(n);
        batch.example_index.push_back(indices[row]);
    }
    return batch;
}

bool is_sorted_by_target_length(const Batch& batch) {
    return std::is_sorted(batch.tgt_lengths.rbegin(), batch.tgt_lengths.rend());
}

Batch sort_by_target_length(const Batch& batch) {
    std::vector<size_t> order(size_t(batch.batch_size));
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return batch.tgt_lengths[a] > batch.tgt_lengths[b];
    });
    return take_rows(batch, order);  // all rows: the padded lengths stay the same
}

Batch take_rows(const Batch& batch, const std::vector<size_t>& rows) {
    const size_t S = size_t(batch.src_len), T = size_t(batch.tgt_len);
    Batch part;
    part.batch_size = int(rows.size());
    for (size_t r : rows) {
        part.src_len = std::max(part.src_len, int(batch.src_lengths.at(r)));
        part.tgt_len = std::max(part.tgt_len, int(batch.tgt_lengths.at(r)));
    }
    const size_t S2 = size_t(part.src_len), T2 = size_t(part.tgt_len);
    for (size_t r : rows) {
        part.src_ids.insert(part.src_ids.end(), batch.src_ids.begin() + r * S,
                            batch.src_ids.begin() + r * S + S2);
        part.tgt_in.insert(part.tgt_in.end(), batch.tgt_in.begin() + r * T,
                           batch.tgt_in.begin() + r * T + T2);
        part.tgt_out.insert(part.tgt_out.end(), batch.tgt_out.begin() + r * T,
                            batch.tgt_out.begin() + r * T + T2);
        part.src_lengths.push_back(batch.src_lengths[r]);
        part.tgt_lengths.push_back(batch.tgt_lengths[r]);
        part.num_target_tokens += batch.tgt_lengths[r];
        if (r < batch.example_index.size()) part.example_index.push_back(batch.example_index[r]);
    }
    return part;
}

Batcher::Batcher(std::vector<EncodedPair> examples, const BatchingOptions& options)
    : examples_(std::move(examples)), options_(options) {
    if (options_.batch_size < 1) {
        throw std::invalid_argument("batch_size must be at least 1, got " +
                                    std::to_string(options_.batch_size));
    }
    for (size_t i = 0; i < examples_.size(); ++i) {
        const EncodedPair& pair = examples_[i];
        if (pair.source.empty()) {
            throw std::invalid_argument("example " + std::to_string(i) + ": empty source");
        }
        if (pair.target.empty() || pair.target.back() != Vocab::EOS) {
            throw std::invalid_argument("example " + std::to_string(i) +
                                        ": target must end with EOS (id 2)");
        }
        const bool too_long =
            (options_.max_source_length != 0 && pair.source.size() > options_.max_source_length) ||
            (options_.max_target_length != 0 && pair.target.size() > options_.max_target_length);
        if (too_long) {
            ++num_dropped_;
        } else {
            kept_.push_back(i);
        }
    }
}

size_t Batcher::num_batches(uint64_t epoch) const {
    return options_.batch_tokens > 0 ? plan(epoch).size() : num_batches();
}

size_t Batcher::num_batches() const {
    if (options_.batch_tokens > 0) return plan(0).size();
    const size_t B = static_cast<size_t>(options_.batch_size);
    const size_t chunk = options_.bucket_chunk * B;
    if (chunk == 0) return (kept_.size() + B - 1) / B;
    // Every full chunk gives chunk / B batches; the last, partial chunk rounds up.
    const size_t full_chunks = kept_.size() / chunk;
    const size_t rest = kept_.size() % chunk;
    return full_chunks * options_.bucket_chunk + (rest + B - 1) / B;
}

std::vector<std::vector<size_t>> Batcher::plan(uint64_t epoch) const {
    SplitMix64 rng = SplitMix64::for_stream(options_.seed, epoch);
    std::vector<size_t> order = kept_;
    if (options_.shuffle) rng.shuffle(order);

    const size_t B = static_cast<size_t>(options_.batch_size);
    const size_t chunk = options_.bucket_chunk == 0 ? order.size() : options_.bucket_chunk * B;
    std::vector<std::vector<size_t>> batches;
    for (size_t start = 0; start < order.size(); start += chunk) {
        const auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
        const auto last =
            order.begin() + static_cast<std::ptrdiff_t>(std::min(start + chunk, order.size()));
        if (options_.bucket_chunk != 0) {
            // Stable, so equal lengths keep their shuffled order: the result is fully defined
            // (std::sort's order of ties differs between standard libraries).
            std::stable_sort(first, last, [this](size_t a, size_t b) {
                const EncodedPair& x = examples_[a];
                const EncodedPair& y = examples_[b];
                if (x.source.size() != y.source.size()) return x.source.size() < y.source.size();
                return x.target.size() < y.target.size();
            });
        }
        if (options_.batch_tokens > 0) {
            // n sentences of longest side L cost n·L padded tokens; add while within budget
            std::vector<size_t> batch;
            size_t longest = 0;
            for (auto it = first; it < last; ++it) {
                const EncodedPair& pair = examples_[*it];
                const size_t side = std::max(pair.source.size(), pair.target.size());
                const size_t grown = std::max(longest, side);
                if (!batch.empty() && (batch.size() + 1) * grown > options_.batch_tokens) {
                    batches.push_back(std::move(batch));
                    batch.clear();
                    longest = 0;
                }
                batch.push_back(*it);
                longest = std::max(longest, side);
            }
            if (!batch.empty()) batches.push_back(std::move(batch));
            continue;
        }
        for (auto it = first; it < last; it += std::min<std::ptrdiff_t>(B, last - it)) {
            batches.emplace_back(it, it + std::min<std::ptrdiff_t>(B, last - it));
        }
    }
    if (options_.shuffle) rng.shuffle(batches);
    return batches;
}

Batch Batcher::batch(uint64_t epoch, size_t index) const {
    const auto batches = plan(epoch);
    if (index >= batches.size()) {
        throw std::out_of_range("batch " + std::to_string(index) + " of epoch " +
                                std::to_string(epoch) + ": there are only " +
                                std::to_string(batches.size()) + " batches");
    }
    return make_batch(examples_, batches[index]);
}

EpochIterator::EpochIterator(const Batcher& batcher, uint64_t epoch, size_t first_batch)
    : batcher_(&batcher), epoch_(epoch), plan_(batcher.plan(epoch)), next_(first_batch) {
    if (first_batch > plan_.size()) {
        throw std::out_of_range("cannot start epoch " + std::to_string(epoch) + " at batch " +
                                std::to_string(first_batch) + ": it has " +
                                std::to_string(plan_.size()) + " batches");
    }
}

Batch EpochIterator::next() {
    if (!has_next()) throw std::out_of_range("EpochIterator::next: the epoch is over");
    return make_batch(batcher_->examples(), plan_[next_++]);
}

}  // namespace seqgrad
