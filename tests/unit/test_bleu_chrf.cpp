// chrF (data/chrf.h) and exact-match accuracy (data/accuracy.h).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/data/accuracy.h"
#include "seqgrad/data/chrf.h"

using namespace seqgrad;

TEST_CASE("chrF: identical strings score 100, disjoint ones 0") {
    CHECK(sentence_chrf("the cat", {"the cat"}).score == doctest::Approx(100.0));
    CHECK(sentence_chrf("abc", {"xyz"}).score == 0.0);
    CHECK(sentence_chrf("abc", {"xyz"}).format() == "chrF2 = 0.00");
}

TEST_CASE("chrF by hand: white space is ignored, recall weighs beta^2 = 4 times") {
    // hyp "ab", ref "abc" (order 6; only orders with both hyp and ref n-grams count).
    // n=1: hyp {a,b}, ref {a,b,c}: P = 2/2, R = 2/3.  n=2: hyp {ab}, ref {ab,bc}: P = 1, R = 1/2.
    // n=3: hyp has none -> left out. Mean P = 1, mean R = (2/3 + 1/2) / 2 = 7/12.
    // chrF2 = 100 * 5 P R / (4 P + R) = 100 * (35/12) / (4 + 7/12) = 100 * 35/55 = 63.6364
    CHECK(sentence_chrf("ab", {"abc"}).score == doctest::Approx(100.0 * 35.0 / 55.0));
    CHECK(sentence_chrf("a b", {"abc"}).score == doctest::Approx(100.0 * 35.0 / 55.0));
    // Swapping the roles gives P = 7/12, R = 1 (the 3-gram "abc" is not counted: the
    // reference has no 3-grams): 100 * 5 (7/12) / (4 (7/12) + 1) = 100 * 35/40 = 87.5
    CHECK(sentence_chrf("abc", {"ab"}).score == doctest::Approx(87.5));
}

TEST_CASE("chrF corpus statistics: n-grams of an order the reference lacks are not counted") {
    // Segment 1: hyp "abc", ref "ab". Segment 2: hyp "xyz", ref "xyz". Summed (hyp, ref, match):
    //   n=1: (3+3, 2+3, 2+3) -> P = 5/6, R = 1
    //   n=2: (2+2, 1+2, 1+2) -> P = 3/4, R = 1
    //   n=3: segment 1's reference has no 3-gram, so its hyp 3-gram "abc" is not counted:
    //        (0+1, 0+1, 0+1) -> P = 1, R = 1        (counting it would give P = 1/2)
    //   n=4..6: nothing on either side -> left out.
    // P = (5/6 + 3/4 + 1) / 3 = 31/36, R = 1: chrF2 = 100 * 5 P / (4 P + 1) = 100 * 155/160
    CHECK(corpus_chrf({"abc", "xyz"}, {{"ab", "xyz"}}).score == doctest::Approx(96.875));
}

TEST_CASE("chrF: the best of several references is used per sentence") {
    const double alone = sentence_chrf("the cat", {"a dog"}).score;
    const double best = sentence_chrf("the cat", {"a dog", "the cat"}).score;
    CHECK(alone < 50.0);
    CHECK(best == doctest::Approx(100.0));
}

TEST_CASE("chrF: sacreBLEU's published example scores 59.73") {
    const std::vector<std::string> sys = {"The dog bit the man.", "It wasn't surprising.",
                                          "The man had just bitten him."};
    const std::vector<std::vector<std::string>> refs = {
        {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
        {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
    CHECK(corpus_chrf(sys, refs).format() == "chrF2 = 59.73");
    ChrfOptions plus;
    plus.word_order = 2;
    CHECK(corpus_chrf(sys, refs, plus).name == "chrF2++");
    CHECK(chrf_signature(ChrfOptions{}, 2) ==
          "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.x-seqgrad");
    CHECK_THROWS_AS(corpus_chrf(sys, {{"only one"}}), std::invalid_argument);
}

TEST_CASE("chrF: lower-casing option") {
    CHECK(sentence_chrf("ABC", {"abc"}).score == 0.0);
    ChrfOptions lower;
    lower.lowercase = true;
    CHECK(sentence_chrf("ABC", {"abc"}, lower).score == doctest::Approx(100.0));
}

TEST_CASE("exact-match accuracy") {
    CHECK(exact_match_accuracy({"2001-03-03", "1979-05-03", "x"},
                               {"2001-03-03", "1979-05-04", "x"}) == doctest::Approx(2.0 / 3.0));
    CHECK(exact_match_accuracy({}, {}) == 0.0);
    CHECK(exact_match_accuracy({"a "}, {"a"}) == 0.0);  // byte for byte
    CHECK_THROWS_WITH_AS(exact_match_accuracy({"a"}, {}),
                         "exact_match_accuracy: 1 hypotheses but 0 references",
                         std::invalid_argument);
}
