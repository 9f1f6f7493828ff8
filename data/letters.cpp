#include "seqgrad/data/letters.h"

namespace seqgrad {

namespace {

// ASCII spellings of U+00C0..U+00FF. An empty entry means "not a letter": U+00D7 (multiplication
// sign) and U+00F7 (division sign). Letters with no accent to remove are transliterated the
// usual way: Æ -> AE, Ð -> D, Ø -> O, Þ -> TH, ß -> ss.
constexpr std::string_view kLatin1[64] = {
    "A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I",  "I",   // C0
    "D", "N", "O", "O", "O", "O", "O",  "",  "O", "U", "U", "U", "U", "Y", "TH", "ss",  // D0
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",   // E0
    "d", "n", "o", "o", "o", "o", "o",  "",  "o", "u", "u", "u", "u", "y", "th", "y",   // F0
};

// ASCII spellings of Latin Extended-A, U+0100..U+017F. Upper and lower case alternate.
constexpr std::string_view kLatinExtendedA[128] = {
    "A", "a", "A",  "a",  "A", "a", "C", "c", "C", "c",  "C", "c", "C", "c", "D", "d",  // 0100
    "D", "d", "E",  "e",  "E", "e", "E", "e", "E", "e",  "E", "e", "G", "g", "G", "g",  // 0110
    "G", "g", "G",  "g",  "H", "h", "H", "h", "I", "i",  "I", "i", "I", "i", "I", "i",  // 0120
    "I", "i", "IJ", "ij", "J", "j", "K", "k", "k", "L",  "l", "L", "l", "L", "l", "L",  // 0130
    "l", "L", "l",  "N",  "n", "N", "n", "N", "n", "'n", "N", "n", "O", "o", "O", "o",  // 0140
    "O", "o", "OE", "oe", "R", "r", "R", "r", "R", "r",  "S", "s", "S", "s", "S", "s",  // 0150
    "S", "s", "T",  "t",  "T", "t", "T", "t", "U", "u",  "U", "u", "U", "u", "U", "u",  // 0160
    "U", "u", "U",  "u",  "W", "w", "Y", "y", "Y", "Z",  "z", "Z", "z", "Z", "z", "s",  // 0170
};

}  // namespace

char32_t to_lower(char32_t c) {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 0x20 : c;
    // Latin-1: À..Þ map to à..þ by +0x20, except × (U+00D7).
    if (c >= 0xC0 && c <= 0xDE) return c == 0xD7 ? c : c + 0x20;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x130) return U'i';                           // İ (dotted capital I)
        if (c == 0x178) return 0xFF;                           // Ÿ -> ÿ
        if (c == 0x138 || c == 0x149 || c == 0x17F) return c;  // ĸ, ŉ, ſ have no upper case
        // Pairs start on an even code point in 0100..0137 and 014A..0177 (upper even, lower
        // odd), and on an odd one in 0139..0148 and 0179..017E (upper odd, lower even).
        const bool upper_is_even = (c <= 0x137) || (c >= 0x14A && c <= 0x177);
        const bool is_even = (c % 2) == 0;
        return is_even == upper_is_even ? c + 1 : c;
    }
    // Greek capitals Α..Ϋ -> α..ϋ (U+03A2 is unassigned), Cyrillic Ѐ..Џ and А..Я.
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
    if (c >= 0x400 && c <= 0x40F) return c + 0x50;
    if (c >= 0x410 && c <= 0x42F) return c + 0x20;
    return c;
}

std::string_view strip_accent(char32_t c) {
    if (c >= 0xC0 && c <= 0xFF) return kLatin1[c - 0xC0];
    if (c >= 0x100 && c <= 0x17F) return kLatinExtendedA[c - 0x100];
    return {};
}

bool is_combining_mark(char32_t c) {
    return c >= 0x300 && c <= 0x36F;
}

}  // namespace seqgrad
