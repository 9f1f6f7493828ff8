// UTF-8 handling, letter tables, the normaliser and the tokenizers (data/utf8.h, letters.h,
// text.h).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/data/text.h"

using namespace seqgrad;

TEST_CASE("is_valid_utf8 accepts well-formed text of every sequence length") {
    CHECK(is_valid_utf8(""));
    CHECK(is_valid_utf8("plain ascii"));
    CHECK(is_valid_utf8("\xC3\xA9t\xC3\xA9"));     // été (2-byte)
    CHECK(is_valid_utf8("\xE2\x82\xAC"));          // € (3-byte)
    CHECK(is_valid_utf8("\xF0\x9F\x98\x80"));      // U+1F600 (4-byte)
    CHECK(is_valid_utf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF, the last code point
    CHECK(is_valid_utf8(std::string("a\0b", 3)));  // NUL is a valid code point
}

TEST_CASE("is_valid_utf8 rejects ill-formed sequences, and find_invalid_utf8 points at them") {
    CHECK_FALSE(is_valid_utf8("\x80"));              // lone continuation byte
    CHECK_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
    CHECK_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong, 3 bytes
    CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // UTF-16 surrogate U+D800
    CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // U+110000, above the range
    CHECK_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));  // F5 never occurs
    CHECK_FALSE(is_valid_utf8("\xC3"));              // truncated
    CHECK_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
    CHECK_FALSE(is_valid_utf8("ab\xC3(d"));          // lead byte followed by a non-continuation
    CHECK(find_invalid_utf8("ok") == std::string::npos);
    CHECK(find_invalid_utf8("ab\xC3\xA9\xFF") == 4);
}

TEST_CASE("decode_utf8 and encode_utf8 are inverse, bad input and bad code points throw") {
    const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a é € 😀
    const std::u32string chars = decode_utf8(text);
    REQUIRE(chars.size() == 4);
    CHECK(chars[0] == U'a');
    CHECK(chars[1] == 0xE9);
    CHECK(chars[2] == 0x20AC);
    CHECK(chars[3] == 0x1F600);
    CHECK(encode_utf8(chars) == text);
    CHECK_THROWS_WITH_AS(decode_utf8("ab\xFF"), "invalid UTF-8 at byte 2", std::invalid_argument);
    std::string out;
    CHECK_THROWS_AS(append_utf8(out, 0xD800), std::invalid_argument);
    CHECK_THROWS_AS(append_utf8(out, 0x110000), std::invalid_argument);
}

TEST_CASE("is_unicode_space is Python's str.isspace set") {
    for (char32_t c : {U' ', U'\t', U'\n', U'\r', U'\v', U'\f', char32_t(0x1C), char32_t(0x85),
                       char32_t(0xA0), char32_t(0x2003), char32_t(0x3000)}) {
        CHECK(is_unicode_space(c));
    }
    for (char32_t c :
         {U'a', U'_', char32_t(0x200B) /* zero-width space: not isspace */, char32_t(0x1B)}) {
        CHECK_FALSE(is_unicode_space(c));
    }
}

TEST_CASE("to_lower and strip_accent follow the letter tables") {
    CHECK(to_lower(U'A') == U'a');
    CHECK(to_lower(U'z') == U'z');
    CHECK(to_lower(0xC9) == 0xE9);       // É -> é
    CHECK(to_lower(0xD7) == 0xD7);       // × is not a letter
    CHECK(to_lower(0x152) == 0x153);     // Œ -> œ (even upper, odd lower)
    CHECK(to_lower(0x139) == 0x13A);     // Ĺ -> ĺ (odd upper, even lower)
    CHECK(to_lower(0x178) == 0xFF);      // Ÿ -> ÿ
    CHECK(to_lower(0x17D) == 0x17E);     // Ž -> ž
    CHECK(to_lower(0x391) == 0x3B1);     // Α -> α
    CHECK(to_lower(0x416) == 0x436);     // Ж -> ж
    CHECK(strip_accent(0xE9) == "e");    // é
    CHECK(strip_accent(0xC7) == "C");    // Ç
    CHECK(strip_accent(0xDF) == "ss");   // ß
    CHECK(strip_accent(0x153) == "oe");  // œ
    CHECK(strip_accent(0x141) == "L");   // Ł
    CHECK(strip_accent(U'e').empty());   // nothing to strip
    CHECK(strip_accent(0xF7).empty());   // ÷ is not a letter
}

TEST_CASE("normalize lower-cases, separates punctuation and collapses white space") {
    CHECK(normalize("  Hello,   World!  ") == "hello , world !");
    CHECK(normalize("Où es-tu?") == "o\xC3\xB9 es-tu ?");  // hyphen stays in the word
    CHECK(normalize("I'm \"fine\".") == "i'm \" fine \" .");
    CHECK(normalize("Pi is 3.14, not 1,000.") == "pi is 3.14 , not 1,000 .");
    CHECK(normalize("\xC2\xBFQu\xC3\xA9?") == "\xC2\xBF qu\xC3\xA9 ?");  // ¿Qué?
    CHECK(normalize("wait...") == "wait . . .");
    CHECK(normalize("tab\there\n") == "tab here");
    CHECK(normalize("") == "");
}

TEST_CASE("normalize: each option can be switched off, accents can be stripped") {
    NormalizeOptions keep_case;
    keep_case.lowercase = false;
    CHECK(normalize("Hello, World!", keep_case) == "Hello , World !");

    NormalizeOptions no_punct;
    no_punct.separate_punctuation = false;
    CHECK(normalize("Hello, World!", no_punct) == "hello, world!");

    NormalizeOptions raw_space;
    raw_space.collapse_whitespace = false;
    CHECK(normalize(" a  b,c ", raw_space) == " a  b , c ");

    NormalizeOptions ascii;
    ascii.strip_accents = true;
    // Ç'était Noël, ma sœur à Straße
    CHECK(normalize("\xC3\x87'\xC3\xA9tait No\xC3\xABl, ma s\xC5\x93ur \xC3\xA0 Stra\xC3\x9F"
                    "e",
                    ascii) == "c'etait noel , ma soeur a strasse");
    // Decomposed input: e + combining acute accent.
    CHECK(normalize("cafe\xCC\x81", ascii) == "cafe");
    CHECK_THROWS_AS(normalize("bad \xFF byte"), std::invalid_argument);
}

TEST_CASE("word tokenizer splits on white space and detokenize joins with spaces") {
    const auto tokens = tokenize("  je suis  l\xC3\xA0 .\t", TokenizerKind::word);
    REQUIRE(tokens.size() == 4);
    CHECK(tokens[0] == "je");
    CHECK(tokens[2] == "l\xC3\xA0");
    CHECK(tokens[3] == ".");
    CHECK(detokenize(tokens, TokenizerKind::word) == "je suis l\xC3\xA0 .");
    CHECK(tokenize("", TokenizerKind::word).empty());
    CHECK(tokenize("   ", TokenizerKind::word).empty());
}

TEST_CASE("character tokenizer gives one token per code point, spaces included") {
    const std::string text = "3 ao\xC3\xBBt";  // "3 août"
    const auto tokens = tokenize(text, TokenizerKind::character);
    REQUIRE(tokens.size() == 6);
    CHECK(tokens[0] == "3");
    CHECK(tokens[1] == " ");
    CHECK(tokens[4] == "\xC3\xBB");  // û is one token of two bytes
    CHECK(detokenize(tokens, TokenizerKind::character) == text);
    CHECK_THROWS_AS(tokenize("\xC3", TokenizerKind::character), std::invalid_argument);
}

TEST_CASE("tokenizer kinds are named in configs") {
    CHECK(tokenizer_kind_from_string("word") == TokenizerKind::word);
    CHECK(tokenizer_kind_from_string("character") == TokenizerKind::character);
    CHECK(to_string(TokenizerKind::character) == "character");
    CHECK_THROWS_WITH_AS(tokenizer_kind_from_string("bpe"),
                         "unknown tokenizer \"bpe\" (expected \"word\" or \"character\")",
                         std::invalid_argument);
}
