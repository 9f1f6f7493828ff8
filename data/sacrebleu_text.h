// The text processing sacreBLEU 2.x applies before counting n-grams: its "13a" tokenizer
// (the default, a port of mteval-v13a.pl), its "intl" and "char" tokenizers, and the Python string
// operations its metrics are defined with (str.split, str.rstrip, str.lower). Ported so that
// seqgrad's BLEU and chrF give sacreBLEU's numbers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seqgrad {

/// Python's str.split(): the pieces between runs of Unicode white space, no empty pieces.
std::vector<std::string> split_on_whitespace(std::string_view text);

/// Python's str.rstrip(): `text` without trailing Unicode white space.
std::string_view rstrip_whitespace(std::string_view text);

/// Python's str.lower() as far as the letter tables of data/letters.h reach (ASCII, Latin-1,
/// Latin Extended-A, basic Greek and Cyrillic).
std::string lowercase_text(std::string_view text);

/// sacreBLEU's Tokenizer13a, step by step:
///   1. remove "<skipped>", join lines broken after a hyphen ("-\n"), turn "\n" into " ";
///   2. unescape &quot; &amp; &lt; &gt; (in that order, each over the whole line);
///   3. pad the line with a space on each side, then apply these rules, each to the output of
///      the one before, as Python's re.sub does (left to right, matches do not overlap):
///        [{-~[-` -&(-+:-@/]  ->  " \0 "   most ASCII punctuation and symbols become tokens
///                                         (not: ' , - . which the next rules handle)
///        ([^0-9])([.,])      ->  "\1 \2 " a period or comma not after a digit is split off
///        ([.,])([^0-9])      ->  " \1 \2" ... and one not before a digit
///        ([0-9])(-)          ->  "\1 \2 " a hyphen after a digit is split off
///   4. collapse white space: " ".join(line.split()).
/// So "3.5" and "1,000" stay whole, "end." becomes "end .", "1990-1995" becomes "1990 - 1995",
/// while "well-known" and "don't" stay whole.
std::string tokenize_13a(std::string_view line);

/// sacreBLEU's "intl" tokenizer (TokenizerV14International, after mteval-v14.pl's
/// international tokenisation), on code points, each rule applied to the output of the one
/// before as Python's re.sub does (left to right, matches do not overlap):
///   (\P{N})(\p{P})  ->  "\1 \2 "   punctuation after a non-number is split off
///   (\p{P})(\P{N})  ->  " \1 \2"   ... and punctuation before a non-number
///   (\p{S})         ->  " \1 "     every symbol becomes a token
/// then white space is collapsed. \p{N}, \p{P}, \p{S} are Unicode's number, punctuation and
/// symbol categories (data/unicode_categories.h). So "3.5" and "1,000" stay whole, "don't"
/// becomes "don ' t", "$5" becomes "$ 5". Throws std::invalid_argument on invalid UTF-8.
std::string tokenize_intl(std::string_view line);

/// sacreBLEU's "char" tokenizer: every character is a token ("ab c" -> "a b   c"; white space
/// then separates nothing).
std::string tokenize_char(std::string_view line);

/// The tokenizer named "13a", "intl", "char" or "none" (which returns the line unchanged);
/// throws std::invalid_argument for other names.
std::string tokenize_for_bleu(std::string_view line, std::string_view tokenizer);

}  // namespace seqgrad
