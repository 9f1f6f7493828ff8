// Batching: turning encoded sentence pairs into padded, length-bucketed, shuffled batches.
//
// One epoch's batches are made like this (all randomness from (seed, epoch) only):
//   1. shuffle the examples;
//   2. cut the shuffled list into chunks of bucket_chunk * batch_size examples and sort each
//      chunk by (source length, target length), stably - so a batch holds sentences of similar
//      length and little of it is padding, while batches still differ from epoch to epoch;
//   3. cut each chunk into batches of batch_size (a chunk's last batch may be smaller), or, with
//      a token budget (batch_tokens, as Marian's and fairseq's), into batches of as many sentences
//      as keep sentences × their longest side (source or target ids) within the budget (a longer
//      sentence alone is a batch of its own);
//   4. shuffle the order of the batches, so lengths do not rise steadily through the epoch.
// Without shuffling (evaluation), steps 1 and 4 are skipped.
// The number of batches is the same every epoch (with a token budget it may differ: see
// num_batches(epoch)), and batch k of epoch e can be rebuilt on its own, which is what makes
// resuming a run at (epoch, batch index) exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace seqgrad {

/// One training pair as ids. `target` ends with EOS (Vocab::encode(tokens, true)); `source`
/// is what the encoder reads (with or without EOS, as the caller chose).
struct EncodedPair {
    std::vector<int32_t> source;
    std::vector<int32_t> target;
};

/// A batch of B pairs, padded with PAD = 0. Matrices are row-major, one row per pair.
/// For a target y1 .. yn (yn = EOS), the decoder reads tgt_in and is trained to predict tgt_out:
///     tgt_in  = SOS y1 ... y(n-1)
///     tgt_out = y1  y2 ... yn
struct Batch {
    int batch_size = 0;                 ///< B
    int src_len = 0;                    ///< S, the longest source in the batch
    int tgt_len = 0;                    ///< T, the longest target in the batch
    std::vector<int32_t> src_ids;       ///< [B, S]
    std::vector<int32_t> src_lengths;   ///< [B]
    std::vector<int32_t> tgt_in;        ///< [B, T]
    std::vector<int32_t> tgt_out;       ///< [B, T]
    std::vector<int32_t> tgt_lengths;   ///< [B]
    int64_t num_target_tokens = 0;      ///< sum of tgt_lengths: the non-PAD entries of tgt_out
    std::vector<size_t> example_index;  ///< [B] each row's index in the batcher's input
};

/// [B, max_len] row-major: 1 where column < lengths[row], 0 over the padding.
std::vector<uint8_t> sequence_mask(const std::vector<int32_t>& lengths, int max_len);
/// The [B, S] mask of a batch's real source positions.
std::vector<uint8_t> source_mask(const Batch& batch);
/// The [B, T] mask of a batch's real target positions.
std::vector<uint8_t> target_mask(const Batch& batch);

/// Builds the padded batch of `examples[indices[0]], examples[indices[1]], ...`.
Batch make_batch(const std::vector<EncodedPair>& examples, const std::vector<size_t>& indices);

/// The same rows in order of decreasing target length (stable: equal lengths keep their order),
/// with example_index permuted alike. The decoder of such a batch runs step t on the rows
/// 0..n_t-1 only (n_t = targets longer than t), as finished sequences form the tail.
Batch sort_by_target_length(const Batch& batch);
/// The sub-batch of the given rows (in that order), its padded lengths cut to its own longest
/// source and target.
Batch take_rows(const Batch& batch, const std::vector<size_t>& rows);
/// Whether tgt_lengths never increases down the batch.
bool is_sorted_by_target_length(const Batch& batch);

struct BatchingOptions {
    int batch_size = 32;
    /// Pairs with a longer source / target (counted in ids, EOS included) are dropped;
    /// 0 means no limit.
    size_t max_source_length = 0;
    size_t max_target_length = 0;
    /// How many examples are sorted by length together: bucket_chunk * batch_size. Larger
    /// chunks give less padding but batches that change less between epochs; 0 turns length
    /// bucketing off.
    size_t bucket_chunk = 100;
    /// > 0: batches by tokens; a batch of n sentences whose longest source or target has L ids
    /// holds n·L <= batch_tokens (a sentence longer than the budget makes a batch alone).
    /// batch_size then only sizes the bucketing chunks.
    size_t batch_tokens = 0;
    bool shuffle = true;
    uint64_t seed = 0;
};

/// Owns a data set and plans its batches epoch by epoch.
class Batcher {
  public:
    /// Takes the examples, drops the over-long ones (see num_dropped()). Throws
    /// std::invalid_argument for batch_size < 1, an empty source, or a target that is empty or
    /// does not end with EOS, naming the example's index.
    Batcher(std::vector<EncodedPair> examples, const BatchingOptions& options);

    /// Pairs dropped because they were longer than the limits.
    size_t num_dropped() const { return num_dropped_; }
    /// Pairs that take part in batches.
    size_t num_examples() const { return kept_.size(); }
    /// Batches per epoch (the same for every epoch; with batch_tokens, epoch 0's).
    size_t num_batches() const;
    /// Batches of epoch `epoch` (with batch_tokens the count changes with the shuffle).
    size_t num_batches(uint64_t epoch) const;
    const std::vector<EncodedPair>& examples() const { return examples_; }
    const BatchingOptions& options() const { return options_; }

    /// Epoch `epoch`'s batches, as lists of example indices, in the order they are served.
    std::vector<std::vector<size_t>> plan(uint64_t epoch) const;

    /// Batch `index` of epoch `epoch`.
    Batch batch(uint64_t epoch, size_t index) const;

  private:
    std::vector<EncodedPair> examples_;
    BatchingOptions options_;
    std::vector<size_t> kept_;  // indices of the examples within the length limits
    size_t num_dropped_ = 0;
};

/// Walks through one epoch's batches, optionally starting in the middle (when resuming):
///     EpochIterator it(batcher, epoch, first_batch);
///     while (it.has_next()) { Batch b = it.next(); ... }
class EpochIterator {
  public:
    EpochIterator(const Batcher& batcher, uint64_t epoch, size_t first_batch = 0);
    bool has_next() const { return next_ < plan_.size(); }
    /// The next batch; throws std::out_of_range past the end.
    Batch next();
    /// Index (within the epoch) of the batch next() will return.
    size_t position() const { return next_; }
    uint64_t epoch() const { return epoch_; }

  private:
    const Batcher* batcher_;
    uint64_t epoch_;
    std::vector<std::vector<size_t>> plan_;
    size_t next_;
};

}  // namespace seqgrad
