// BLEU as sacreBLEU 2.x computes it (data/bleu.h, data/sacrebleu_text.h). Expected values are
// worked out by hand in the comments; the last case is sacreBLEU's own published example.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/data/bleu.h"
#include "seqgrad/data/sacrebleu_text.h"
#include "seqgrad/data/unicode_categories.h"

using namespace seqgrad;

namespace {

BleuScore bleu(const std::string& hyp, const std::vector<std::string>& refs,
               const BleuOptions& options = {}) {
    std::vector<std::vector<std::string>> streams;
    for (const auto& r : refs) streams.push_back({r});
    return corpus_bleu({hyp}, streams, options);
}

BleuOptions smoothing(const std::string& method) {
    BleuOptions options;
    options.smooth_method = method;
    return options;
}

}  // namespace

TEST_CASE("13a: punctuation and symbols become tokens, apostrophes stay") {
    CHECK(tokenize_13a("Hello, world!") == "Hello , world !");
    CHECK(tokenize_13a("(a) [b] {c} a/b 100% #1 @x") == "( a ) [ b ] { c } a / b 100 % # 1 @ x");
    CHECK(tokenize_13a("don't") == "don't");
    CHECK(tokenize_13a("  many   spaces\t here ") == "many spaces here");
}

TEST_CASE("13a: periods and commas split unless between digits") {
    // ([^0-9])([.,]) splits "s," and "n." ; ([.,])([^0-9]) splits ", " ; "3.50" and "1,000"
    // have digits on both sides and stay whole.
    CHECK(tokenize_13a("It costs $3.50, or 1,000 yen.") == "It costs $ 3.50 , or 1,000 yen .");
    CHECK(tokenize_13a("U.S.A.") == "U . S . A .");
    // ".5": the period follows the padding space (not a digit), so rule 2 splits it off;
    // "5.": the period precedes a space (not a digit), so rule 3 does.
    CHECK(tokenize_13a("x.y 3.5 .5 5.") == "x . y 3.5 . 5 5 .");
}

TEST_CASE("13a: a hyphen is split only after a digit") {
    CHECK(tokenize_13a("1990-1995") == "1990 - 1995");
    CHECK(tokenize_13a("well-known -5 a-1") == "well-known -5 a-1");
}

TEST_CASE("13a: entities are unescaped, <skipped> removed, hyphenated line breaks joined") {
    CHECK(tokenize_13a("&quot;Yes&quot; &amp; no") == "\" Yes \" & no");
    CHECK(tokenize_13a("&lt;b&gt;") == "< b >");
    CHECK(tokenize_13a("&amp;quot;") == "& quot ;");  // unescaped once, in sacreBLEU's order
    CHECK(tokenize_13a("don't <skipped> stop") == "don't stop");
    CHECK(tokenize_13a("line-\nbreak\nnext") == "linebreak next");
    CHECK(tokenize_for_bleu("a,b", "none") == "a,b");
    CHECK_THROWS_AS(tokenize_for_bleu("a", "v14"), std::invalid_argument);
}

TEST_CASE("perfect match scores 100, no overlap scores 0") {
    const BleuScore perfect = bleu("The cat sat on the mat.", {"The cat sat on the mat."});
    CHECK(perfect.score == doctest::Approx(100.0));
    CHECK(perfect.bp == 1.0);
    CHECK(perfect.format() ==
          "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 "
          "ref_len = 7)");

    const BleuScore none = bleu("a b c d", {"w x y z"});
    CHECK(none.score == 0.0);
    CHECK(none.format() ==
          "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)");
}

TEST_CASE("brevity penalty") {
    // hyp "the cat sat on the mat" (6 tokens), ref adds "today" (7 tokens).
    // Every hypothesis n-gram is in the reference: p1..p4 = 6/6, 5/5, 4/4, 3/3 = 100%.
    // hyp_len 6 < ref_len 7, so BP = exp(1 - 7/6) = exp(-1/6) = 0.846482, BLEU = 84.648172.
    const BleuScore s = bleu("the cat sat on the mat", {"the cat sat on the mat today"});
    CHECK(s.bp == doctest::Approx(std::exp(-1.0 / 6.0)).epsilon(1e-12));
    CHECK(s.score == doctest::Approx(84.648172489).epsilon(1e-9));
    CHECK(s.format() ==
          "BLEU = 84.65 100.0/100.0/100.0/100.0 (BP = 0.846 ratio = 0.857 hyp_len = 6 "
          "ref_len = 7)");
    // A longer hypothesis is not penalised.
    CHECK(bleu("the cat sat on the mat today", {"the cat sat on the mat"}).bp == 1.0);
    // An empty hypothesis gets BP 0 and BLEU 0.
    const BleuScore empty = bleu("", {"a b"});
    CHECK(empty.bp == 0.0);
    CHECK(empty.score == 0.0);
}

TEST_CASE("counts are clipped by the reference, the four smoothing methods") {
    // Papineni's example: hyp "the" x 7, ref "the cat is on the mat" (6 tokens).
    // Unigrams: "the" occurs 7 times but only twice in the reference -> correct 2 of 7.
    // Bigrams "the the" x 6, trigrams x 5, 4-grams x 4: none in the reference.
    // p1 = 100 * 2/7 = 28.571429. BP = 1 (7 >= 6).
    const std::string hyp = "the the the the the the the";
    const std::vector<std::string> ref = {"the cat is on the mat"};
    const BleuScore exp_smooth = bleu(hyp, ref);
    CHECK(exp_smooth.counts == std::vector<int64_t>{2, 0, 0, 0});
    CHECK(exp_smooth.totals == std::vector<int64_t>{7, 6, 5, 4});
    // exp: the k-th zero order gets 100 / (2^k total): p2 = 100/12, p3 = 100/20, p4 = 100/32.
    // BLEU = (28.5714 * 8.3333 * 5 * 3.125)^(1/4) = 3720.24^(1/4) = 7.809850
    CHECK(exp_smooth.score == doctest::Approx(7.809849842).epsilon(1e-9));
    CHECK(exp_smooth.format() ==
          "BLEU = 7.81 28.6/8.3/5.0/3.1 (BP = 1.000 ratio = 1.167 hyp_len = 7 ref_len = 6)");
    // floor (0.1): p_n = 100 * 0.1 / total: p2 = 1.6667, p3 = 2, p4 = 2.5.
    // BLEU = (28.5714 * 1.6667 * 2 * 2.5)^(1/4) = 238.095^(1/4) = 3.928147
    CHECK(bleu(hyp, ref, smoothing("floor")).score == doctest::Approx(3.928146509).epsilon(1e-9));
    // add-k (1), orders 2..4 only: p2 = 1/7, p3 = 1/6, p4 = 1/5.
    // BLEU = (28.5714 * 14.2857 * 16.6667 * 20)^(1/4) = 136054.4^(1/4) = 19.205613
    CHECK(bleu(hyp, ref, smoothing("add-k")).score == doctest::Approx(19.205612637).epsilon(1e-9));
    // none: p2 = 0, so log p2 = -9999999999 and BLEU = 0, but p1 is still reported.
    const BleuScore unsmoothed = bleu(hyp, ref, smoothing("none"));
    CHECK(unsmoothed.score == 0.0);
    CHECK(unsmoothed.precisions[0] == doctest::Approx(100.0 * 2 / 7));
    // A custom floor value.
    BleuOptions floor_half = smoothing("floor");
    floor_half.smooth_value = 0.5;
    // p2 = 50/6, p3 = 10, p4 = 12.5: (28.5714 * 8.3333 * 10 * 12.5)^(1/4) = 29761.9^(1/4) = 13.1346
    CHECK(bleu(hyp, ref, floor_half).score ==
          doctest::Approx(std::pow(100.0 * 2 / 7 * 50.0 / 6 * 10 * 12.5, 0.25)).epsilon(1e-12));
    CHECK_THROWS_AS(bleu(hyp, ref, smoothing("laplace")), std::invalid_argument);
}

TEST_CASE("multiple references: clip by the best reference per n-gram, closest length") {
    // hyp "a b c d"; ref1 "a b x y", ref2 "x x c d".
    // Unigrams: a, b from ref1, c, d from ref2 -> 4/4. Bigrams: "a b" (ref1), "c d" (ref2),
    // "b c" (neither) -> 2/3. Trigrams 0/2, 4-gram 0/1 -> exp smoothing: 100/(2*2), 100/(4*1).
    // BLEU = (100 * 66.667 * 25 * 25)^(1/4) = 45.180100
    const BleuScore both = bleu("a b c d", {"a b x y", "x x c d"});
    CHECK(both.counts == std::vector<int64_t>{4, 2, 0, 0});
    CHECK(both.score == doctest::Approx(45.18010018).epsilon(1e-9));
    // With ref1 alone: 2/4, 1/3, then 100/(2*2), 100/(4*1) -> (50 * 33.33 * 25 * 25)^(1/4) = 31.947
    CHECK(bleu("a b c d", {"a b x y"}).score == doctest::Approx(31.94715521).epsilon(1e-9));

    // hyp of 5 tokens, references of 4 and 6: both 1 away, the shorter wins -> ref_len 4.
    const std::vector<std::string> tie = {"a b c d", "a b c d e f"};
    CHECK(bleu_segment_stats("a b c d e", tie).ref_len == 4);
    CHECK(bleu("a b c d e", tie).bp == 1.0);
    CHECK(bleu_segment_stats("a b c d e", {"a b c", "a b c d e f g"}).ref_len == 3);
}

TEST_CASE("corpus BLEU sums statistics over segments before forming precisions") {
    // Segment 2 ("x y") alone has no 3- or 4-grams, so its own BLEU would be 0, but the corpus
    // sums: hyp 5 + 2 = 7 tokens, ref 6 + 2 = 8; n-grams 7/7, 5/5, 3/3, 2/2 all correct.
    // BLEU = BP = exp(1 - 8/7) = 86.687790
    const BleuScore s =
        corpus_bleu({"one two three four five", "x y"}, {{"one two three four five six", "x y"}});
    CHECK(s.sys_len == 7);
    CHECK(s.ref_len == 8);
    CHECK(s.totals == std::vector<int64_t>{7, 5, 3, 2});
    CHECK(s.score == doctest::Approx(100.0 * std::exp(1.0 - 8.0 / 7.0)).epsilon(1e-12));
    CHECK_THROWS_WITH_AS(corpus_bleu({"a", "b"}, {{"a"}}),
                         "BLEU: reference stream 1 has 1 lines, the hypotheses have 2",
                         std::invalid_argument);
}

TEST_CASE("effective order for sentence BLEU, lower-casing") {
    // "a b" vs "a b": orders 1 and 2 are 100%, there are no 3-grams. Corpus BLEU (fixed order
    // 4) gives 0; sentence BLEU averages over the 2 orders present and gives 100.
    CHECK(bleu("a b", {"a b"}).score == 0.0);
    CHECK(sentence_bleu("a b", {"a b"}).score == doctest::Approx(100.0));
    CHECK(sentence_bleu_options().effective_order);

    CHECK(sentence_bleu("The Cat", {"the cat"}).score == 0.0);
    BleuOptions lower = sentence_bleu_options();
    lower.lowercase = true;
    CHECK(sentence_bleu("The Cat", {"the cat"}, lower).score == doctest::Approx(100.0));
    // Lower-casing reaches accented capitals too.
    CHECK(sentence_bleu("\xC3\x89T\xC3\x89", {"\xC3\xA9t\xC3\xA9"}, lower).score ==
          doctest::Approx(100.0));
    // Trailing white space is stripped before tokenizing.
    CHECK(sentence_bleu("a b \n", {"a b"}).score == doctest::Approx(100.0));
}

TEST_CASE("tokenize none keeps punctuation attached") {
    BleuOptions none;
    none.tokenize = "none";
    none.effective_order = true;
    // "mat." vs "mat ." are different tokens without 13a: 1 of 2 unigrams match.
    CHECK(bleu("the mat.", {"the mat ."}, none).counts[0] == 1);
    BleuOptions tok13a;
    CHECK(bleu("the mat.", {"the mat ."}, tok13a).counts[0] == 3);
}

TEST_CASE("Unicode classes: numbers, punctuation and symbols of every script") {
    // Python: unicodedata.category(c)[0] is N, P or S for these.
    for (char32_t c : {U'5', U'\u0663', U'\u00BD', U'\u2167', U'\u0E53', U'\U0001D7CE'})
        CHECK(unicode_class(c) == UnicodeClass::number);
    for (char32_t c : {U'.', U'_', U'\u00AB', U'\u201C', U'\u3001', U'\u00BF', U'\u060C'})
        CHECK(unicode_class(c) == UnicodeClass::punctuation);
    for (char32_t c : {U'$', U'+', U'`', U'\u20AC', U'\u00A9', U'\u2192', U'\U0001F600'})
        CHECK(unicode_class(c) == UnicodeClass::symbol);
    for (char32_t c : {U'a', U'\u00E9', U' ', U'\u4E00', U'\u0301', U'\U0010FFFF', U'\0'})
        CHECK(unicode_class(c) == UnicodeClass::other);
}

TEST_CASE("intl: punctuation splits off unless a number is on its side, symbols always") {
    CHECK(tokenize_intl("Hello, world!") == "Hello , world !");
    CHECK(tokenize_intl("3.5 and 1,000") == "3.5 and 1,000");
    CHECK(tokenize_intl("don't") == "don ' t");  // 13a keeps "don't"
    CHECK(tokenize_intl("\u00ABBonjour\u00BB") == "\u00AB Bonjour \u00BB");
    CHECK(tokenize_intl("costs \u20AC5.") == "costs \u20AC 5.");  // as mteval-v14: "5." stays
    CHECK(tokenize_intl("a+b") == "a + b");
    CHECK(tokenize_for_bleu("x\u3001y", "intl") == "x \u3001 y");
}

TEST_CASE("char: every character is a token") {
    CHECK(tokenize_char("ab c") == "a b   c");
    CHECK(tokenize_for_bleu("\u00E9t\u00E9", "char") == "\u00E9 t \u00E9");
    BleuOptions chars;
    chars.tokenize = "char";
    chars.effective_order = true;
    CHECK(bleu("abc", {"abd"}, chars).counts[0] == 2);
    CHECK_THROWS_AS(tokenize_for_bleu("x", "spacy"), std::invalid_argument);
}

TEST_CASE("sacreBLEU's published example, with its signature") {
    // From sacreBLEU's README: corpus_score(sys, refs) prints exactly this line.
    const std::vector<std::string> sys = {"The dog bit the man.", "It wasn't surprising.",
                                          "The man had just bitten him."};
    const std::vector<std::vector<std::string>> refs = {
        {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
        {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
    const BleuScore s = corpus_bleu(sys, refs);
    CHECK(s.format() ==
          "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
    CHECK(s.format(4).rfind("BLEU = 48.53", 0) == 0);
    CHECK(bleu_signature(BleuOptions{}, 2) ==
          "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x-seqgrad");
    BleuOptions other;
    other.lowercase = true;
    other.tokenize = "none";
    other.smooth_method = "floor";
    other.effective_order = true;
    CHECK(bleu_signature(other, -1) ==
          "nrefs:var|case:lc|eff:yes|tok:none|smooth:floor[0.10]|version:2.x-seqgrad");
    CHECK(s.format(2, "nrefs:2").rfind("BLEU|nrefs:2 = 48.53 82.4/", 0) == 0);
}
