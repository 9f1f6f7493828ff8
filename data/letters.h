// Letter tables: lower-casing and accent stripping, code point by code point.
//
// seqgrad does not carry the full Unicode database. These tables cover the letters that
// European-language corpora actually use: ASCII, Latin-1 Supplement (U+00C0..U+00FF),
// Latin Extended-A (U+0100..U+017F), basic Greek and Cyrillic for lower-casing. Every other
// code point passes through unchanged.
#pragma once

#include <string_view>

namespace seqgrad {

/// The lower-case form of `code_point` (ASCII, Latin-1, Latin Extended-A, Greek U+0391..U+03AB,
/// Cyrillic U+0400..U+042F); other code points are returned unchanged. One known difference
/// from Python's str.lower(): U+0130 'İ' becomes plain 'i' (Python gives 'i' + U+0307).
char32_t to_lower(char32_t code_point);

/// The ASCII spelling of an accented Latin letter: 'é' -> "e", 'Ç' -> "C", 'ß' -> "ss",
/// 'œ' -> "oe", 'Æ' -> "AE", 'þ' -> "th". Returns an empty view for a code point that is not an
/// accented letter of Latin-1 / Latin Extended-A (including plain ASCII).
std::string_view strip_accent(char32_t code_point);

/// True for combining diacritical marks (U+0300..U+036F), which accent stripping deletes so
/// that text in decomposed form ('e' + U+0301) is handled like precomposed 'é'.
bool is_combining_mark(char32_t code_point);

}  // namespace seqgrad
