// A reversible pre-tokeniser: splits raw, cased text into words and punctuation marks before
// BPE, and marks every place where two tokens touched without a space, so that
// reversible_detokenize(reversible_tokenize(x)) gives x back.
//
//   "Ich habe Hunger."        ->  Ich habe Hunger ￭.
//   "«Oui», dit-il (2,5 %)."  ->  «￭ Oui ￭» ￭, dit-il (￭ 2,5 % ￭) ￭.
//
// Why a joiner mark on the punctuation rather than SentencePiece's "▁" before every word: the
// words stay as they are, so a word has one spelling whether it starts the sentence, follows a
// space or a quote, and BPE learns one set of subwords for it; the mark falls only on the
// (rarer, and mostly predictable) no-space boundaries next to punctuation. The mark is
// U+FFED "￭", the joiner of OpenNMT's tokenizer.
//
// Tokens: a run of word characters is a word; every punctuation mark or symbol is a token of its
// own (the list: is_split_punctuation). Three exceptions keep common words whole: an apostrophe
// (' or ’) or a hyphen between two word characters (don't, aujourd’hui, peut-être), and a '.' or
// ',' between two ASCII digits (3.14, 1,000). At each boundary without a space, the joiner is
// glued to the right token when it is punctuation ("Hunger ￭."), else to the left one
// ("(￭ 2").
//
// What does not come back (the documented normalisations, each tested):
//   - white space: every run of white space (tabs, no-break spaces included) becomes one ASCII
//     space, and the ends are trimmed;
//   - the joiner character U+FFED itself is dropped from the input.
// No Unicode normalisation (NFC) is applied: the text's code points are kept as they are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seqgrad {

/// U+FFED, glued to a token on the side where there was no space.
inline constexpr std::string_view kJoiner = "\xEF\xBF\xAD";

/// True for the characters that become tokens of their own: ASCII punctuation and symbols, and
/// the Unicode marks of European text (« » ‹ › ¡ ¿ “ ” „ ‘ ’ ‚ – — … · § ° € £ ¥ ¢ and the
/// rest of U+2010..U+205E general punctuation).
bool is_split_punctuation(char32_t code_point);

/// The tokens of `text`, joiners attached. Throws std::invalid_argument on invalid UTF-8.
std::vector<std::string> reversible_tokenize(std::string_view text);

/// The text of `tokens`: joined with single spaces, except where a joiner marks that there was
/// none; the joiners are removed.
std::string reversible_detokenize(const std::vector<std::string>& tokens);

/// What reversible_detokenize(reversible_tokenize(text)) returns: `text` with white space
/// collapsed and trimmed and U+FFED removed.
std::string reversible_normal_form(std::string_view text);

}  // namespace seqgrad
