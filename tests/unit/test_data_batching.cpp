// Batching: padding, masks, teacher-forcing shifts, length filter, bucketing, reproducible
// shuffling (data/batching.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "seqgrad/data/batching.h"

using namespace seqgrad;

namespace {

constexpr int32_t PAD = 0, SOS = 1, EOS = 2;

// n examples; example i has a source of 1 + i % 7 ids and a target of 2 + i % 5 ids ending in
// EOS. Ids encode the example so that rows can be traced back.
std::vector<EncodedPair> make_examples(size_t n) {
    std::vector<EncodedPair> examples;
    for (size_t i = 0; i < n; ++i) {
        EncodedPair pair;
        for (size_t k = 0; k < 1 + i % 7; ++k) pair.source.push_back(static_cast<int32_t>(10 + i));
        for (size_t k = 0; k + 1 < 2 + i % 5; ++k)
            pair.target.push_back(static_cast<int32_t>(10 + i));
        pair.target.push_back(EOS);
        examples.push_back(pair);
    }
    return examples;
}

}  // namespace

TEST_CASE("make_batch pads with PAD and shifts targets for teacher forcing") {
    const std::vector<EncodedPair> examples = {
        {{5, 6, 7}, {8, 9, EOS}},
        {{5}, {EOS}},
        {{4, 4}, {7, EOS}},
    };
    const Batch b = make_batch(examples, {0, 1, 2});
    CHECK(b.batch_size == 3);
    CHECK(b.src_len == 3);
    CHECK(b.tgt_len == 3);
    CHECK(b.src_ids == std::vector<int32_t>{5, 6, 7, 5, PAD, PAD, 4, 4, PAD});
    CHECK(b.src_lengths == std::vector<int32_t>{3, 1, 2});
    // tgt_in = SOS y1 .. y(n-1); tgt_out = y1 .. yn (yn = EOS)
    CHECK(b.tgt_in == std::vector<int32_t>{SOS, 8, 9, SOS, PAD, PAD, SOS, 7, PAD});
    CHECK(b.tgt_out == std::vector<int32_t>{8, 9, EOS, EOS, PAD, PAD, 7, EOS, PAD});
    CHECK(b.tgt_lengths == std::vector<int32_t>{3, 1, 2});
    CHECK(b.num_target_tokens == 6);
    CHECK(b.example_index == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("masks mark exactly the real positions") {
    const std::vector<EncodedPair> examples = {{{5, 6, 7}, {8, EOS}}, {{5}, {9, 9, 9, EOS}}};
    const Batch b = make_batch(examples, {1, 0});
    CHECK(source_mask(b) == std::vector<uint8_t>{1, 0, 0, 1, 1, 1});
    CHECK(target_mask(b) == std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 0, 0});
    // The target mask is where tgt_out is not PAD.
    const auto mask = target_mask(b);
    for (size_t i = 0; i < mask.size(); ++i) CHECK((mask[i] == 1) == (b.tgt_out[i] != PAD));
    CHECK(sequence_mask({2, 0}, 3) == std::vector<uint8_t>{1, 1, 0, 0, 0, 0});
}

TEST_CASE("over-long pairs are dropped and counted, bad examples are rejected") {
    BatchingOptions options;
    options.batch_size = 4;
    options.max_source_length = 5;  // drops sources of 6 and 7 ids
    options.max_target_length = 5;  // drops targets of 6 ids
    const auto examples = make_examples(70);
    size_t expected_dropped = 0;
    for (const auto& e : examples) expected_dropped += e.source.size() > 5 || e.target.size() > 5;
    const Batcher batcher(examples, options);
    CHECK(batcher.num_dropped() == expected_dropped);
    CHECK(batcher.num_dropped() > 0);
    CHECK(batcher.num_examples() == 70 - expected_dropped);
    for (size_t k = 0; k < batcher.num_batches(); ++k) {
        const Batch b = batcher.batch(0, k);
        CHECK(b.src_len <= 5);
        CHECK(b.tgt_len <= 5);
    }

    CHECK_THROWS_WITH_AS(Batcher({{{}, {EOS}}}, options), "example 0: empty source",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(Batcher({{{3}, {3}}}, options),
                         "example 0: target must end with EOS (id 2)", std::invalid_argument);
    options.batch_size = 0;
    CHECK_THROWS_AS(Batcher(examples, options), std::invalid_argument);
}

TEST_CASE("an epoch serves every kept example exactly once, in batches of batch_size") {
    BatchingOptions options;
    options.batch_size = 8;
    options.bucket_chunk = 3;  // chunks of 24 examples
    options.seed = 5;
    const Batcher batcher(make_examples(100), options);
    // 100 = 4 chunks of 24 (3 batches each) + a chunk of 4 (1 batch).
    CHECK(batcher.num_batches() == 13);
    std::multiset<size_t> seen;
    EpochIterator it(batcher, 0);
    size_t batches = 0;
    while (it.has_next()) {
        const Batch b = it.next();
        CHECK(b.batch_size <= 8);
        for (size_t row = 0; row < static_cast<size_t>(b.batch_size); ++row) {
            const size_t i = b.example_index[row];
            seen.insert(i);
            CHECK(b.src_ids[row * static_cast<size_t>(b.src_len)] == static_cast<int32_t>(10 + i));
        }
        ++batches;
    }
    CHECK(batches == batcher.num_batches());
    CHECK(seen.size() == 100);
    CHECK(std::set<size_t>(seen.begin(), seen.end()).size() == 100);
    CHECK_THROWS_AS(it.next(), std::out_of_range);
}

TEST_CASE("bucketing makes batches of similar source length") {
    BatchingOptions bucketed;
    bucketed.batch_size = 10;
    bucketed.seed = 1;
    BatchingOptions plain = bucketed;
    plain.bucket_chunk = 0;
    const auto examples = make_examples(700);
    auto padding = [&](const BatchingOptions& options) {
        const Batcher batcher(examples, options);
        int64_t pads = 0;
        for (const auto& indices : batcher.plan(0)) {
            const Batch b = make_batch(examples, indices);
            for (int32_t id : b.src_ids) pads += id == PAD;
        }
        return pads;
    };
    // Sources are 1..7 long; a chunk of 1000 sorted examples leaves almost no padding.
    const int64_t bucketed_pads = padding(bucketed);
    const int64_t plain_pads = padding(plain);
    CHECK(bucketed_pads * 10 < plain_pads);
}

TEST_CASE("batches of one length bucket are served in shuffled order, not by length") {
    BatchingOptions options;
    options.batch_size = 10;
    options.seed = 3;
    const auto examples = make_examples(700);  // one chunk: sorted by length as a whole
    const Batcher batcher(examples, options);
    std::vector<int> lengths;
    for (const auto& indices : batcher.plan(0)) {
        lengths.push_back(make_batch(examples, indices).src_len);
    }
    CHECK_FALSE(std::is_sorted(lengths.begin(), lengths.end()));
    options.shuffle = false;
    std::vector<int> unshuffled;
    for (const auto& indices : Batcher(examples, options).plan(0)) {
        unshuffled.push_back(make_batch(examples, indices).src_len);
    }
    CHECK(std::is_sorted(unshuffled.begin(), unshuffled.end()));
}

TEST_CASE("batch order depends only on (seed, epoch): resuming mid-epoch is exact") {
    BatchingOptions options;
    options.batch_size = 6;
    options.bucket_chunk = 2;
    options.seed = 77;
    const Batcher batcher(make_examples(90), options);
    const Batcher twin(make_examples(90), options);
    CHECK(batcher.plan(3) == twin.plan(3));     // same seed and epoch: same batches
    CHECK(batcher.plan(3) != batcher.plan(4));  // reshuffled every epoch
    options.seed = 78;
    CHECK(Batcher(make_examples(90), options).plan(3) != batcher.plan(3));

    // Resume epoch 2 at batch 5: the rest of the epoch is what an uninterrupted run sees.
    EpochIterator full(batcher, 2);
    std::vector<std::vector<size_t>> uninterrupted;
    while (full.has_next()) uninterrupted.push_back(full.next().example_index);
    EpochIterator resumed(batcher, 2, 5);
    CHECK(resumed.position() == 5);
    for (size_t k = 5; k < uninterrupted.size(); ++k) {
        CHECK(resumed.next().example_index == uninterrupted[k]);
    }
    CHECK_FALSE(resumed.has_next());
    CHECK(batcher.batch(2, 7).example_index == uninterrupted[7]);
    CHECK_THROWS_AS(batcher.batch(2, batcher.num_batches()), std::out_of_range);
    CHECK_THROWS_AS(EpochIterator(batcher, 0, batcher.num_batches() + 1), std::out_of_range);
}

TEST_CASE("without shuffling, batches follow the data order") {
    BatchingOptions options;
    options.batch_size = 4;
    options.shuffle = false;
    options.bucket_chunk = 0;
    const Batcher batcher(make_examples(10), options);
    const auto plan = batcher.plan(0);
    REQUIRE(plan.size() == 3);
    CHECK(plan[0] == std::vector<size_t>{0, 1, 2, 3});
    CHECK(plan[2] == std::vector<size_t>{8, 9});
    CHECK(batcher.plan(1) == plan);
}

TEST_CASE("batch_tokens: every batch within the token budget, every sentence once per epoch") {
    const std::vector<EncodedPair> examples = make_examples(300);
    BatchingOptions options;
    options.batch_size = 16;  // sizes the bucketing chunks only
    options.bucket_chunk = 4;
    options.batch_tokens = 60;
    options.seed = 5;
    const Batcher batcher(examples, options);
    for (uint64_t epoch = 0; epoch < 3; ++epoch) {
        const auto plan = batcher.plan(epoch);
        CHECK(plan.size() == batcher.num_batches(epoch));
        std::vector<size_t> seen;
        size_t full = 0;  // batches that could not take one more sentence of their longest side
        for (const auto& batch : plan) {
            REQUIRE(!batch.empty());
            size_t longest = 0;
            for (size_t i : batch)
                longest = std::max({longest, examples[i].source.size(), examples[i].target.size()});
            // within the budget, or one sentence alone that is longer than it
            CHECK((batch.size() * longest <= options.batch_tokens || batch.size() == 1));
            full += (batch.size() + 1) * longest > options.batch_tokens;
            seen.insert(seen.end(), batch.begin(), batch.end());
            const Batch b = batcher.batch(epoch, size_t(&batch - plan.data()));
            CHECK(size_t(b.batch_size) == batch.size());
        }
        std::sort(seen.begin(), seen.end());
        std::vector<size_t> all(examples.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        CHECK(seen == all);
        CHECK(full > plan.size() / 2);  // batches are filled, not cut short
    }
    // still length-bucketed: less padding than batches of as many sentences drawn at random
    BatchingOptions random = options;
    random.bucket_chunk = 0;
    const Batcher unbucketed(examples, random);
    auto padding = [&](const Batcher& b) {
        size_t pad = 0;
        for (size_t k = 0; k < b.num_batches(0); ++k) {
            const Batch batch = b.batch(0, k);
            pad += size_t(batch.batch_size * batch.src_len);
            for (int32_t length : batch.src_lengths) pad -= size_t(length);
        }
        return pad;
    };
    CHECK(padding(batcher) < padding(unbucketed));
}
