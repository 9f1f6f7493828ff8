// Tests for the pieces `seqgrad eval` adds to its report (apps/cli/commands.h): repeated words and
// 3-grams are counted per sentence (a repeat across two sentences is none), the rates are per
// 1,000 words, and the summary lines say both the output's and the references' numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/cli/commands.h"

using namespace seqgrad;

TEST_CASE("count_repeats: immediate repeats and 3-grams seen before in the same sentence") {
    const RepeatCounts c = count_repeats(
        {{"the", "the", "the", "cat"}, {"a", "b", "c", "a", "b", "c", "a"}, {"cat", "dog"}, {}});
    CHECK(c.words == 4 + 7 + 2);
    // "the the the": positions 1 and 2 repeat the word before; "cat" then "cat" across two
    // sentences does not count.
    CHECK(c.immediate == 2);
    // Sentence 1: "the the the", "the the cat": different. Sentence 2: a b c | b c a | c a b |
    // a b c (repeat) | b c a (repeat).
    CHECK(c.repeated_trigrams == 2);
    CHECK(c.immediate_per_1000() == doctest::Approx(1000.0 * 2 / 13));
    CHECK(c.trigrams_per_1000() == doctest::Approx(1000.0 * 2 / 13));

    const RepeatCounts none = count_repeats({});
    CHECK(none.words == 0);
    CHECK(none.immediate_per_1000() == 0);  // no division by zero
}

TEST_CASE("output_stats_text: mean lengths and repeat rates of output and references") {
    RepeatCounts output{2000, 4, 1}, references{2200, 0, 0};
    CHECK(output_stats_text(output, references, 400) ==
          "output length: mean 5.00 words (references 5.50)\n"
          "repeats per 1,000 output words: 2.00 immediate (\"the the\"), 0.50 repeated 3-grams "
          "(references 0.00, 0.00)\n");
}

TEST_CASE("dropped_source_share: source tokens never attended above 0.3, the <eos> excluded") {
    Translation a;
    a.source_tokens = {"x", "y", "z", "<eos>"};
    Hypothesis h;
    // x peaks at 0.6, y at 0.3 (not above: dropped), z at 0.2 (dropped); <eos> not counted
    h.attention = {{0.6f, 0.3f, 0.1f, 0.0f}, {0.1f, 0.2f, 0.2f, 0.5f}};
    a.nbest = {h};
    Translation b;  // no attention (a model without): not counted
    b.source_tokens = {"w", "<eos>"};
    b.nbest = {Hypothesis{}};
    CHECK(dropped_source_share({a, b}) == doctest::Approx(2.0 / 3));
    CHECK(dropped_source_share({b}) == -1);
}
