// Text preparation: normalising raw sentences and splitting them into tokens.
//
// The pipeline for one sentence is  raw UTF-8 -> normalize() -> tokenize() -> Vocab ids,
// and back:  ids -> tokens -> detokenize() -> text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seqgrad/data/letters.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

/// What normalize() does. Each step can be switched off; they run in the order listed.
struct NormalizeOptions {
    /// Lower-case letters (ASCII, Latin-1, Latin Extended-A, basic Greek and Cyrillic).
    bool lowercase = true;
    /// Replace accented Latin letters by their ASCII spelling (é -> e, ß -> ss, œ -> oe) and
    /// delete combining accents.
    bool strip_accents = false;
    /// Make each punctuation mark its own token ("hi, you!" -> "hi , you !"). The marks are
    /// `. , ; : ! ? " ( ) [ ] { } « » ¡ ¿ …`. Apostrophes and hyphens stay inside words
    /// (don't, l'homme, peut-être), and a `.` or `,` between two digits stays too (3.14, 1,000),
    /// so numbers remain one token.
    bool separate_punctuation = true;
    /// Turn every run of white space into one ASCII space and trim both ends.
    bool collapse_whitespace = true;
};

/// `text` normalised as `options` say. Throws std::invalid_argument if `text` is not valid UTF-8.
std::string normalize(std::string_view text, const NormalizeOptions& options = {});

/// True for the marks that NormalizeOptions::separate_punctuation splits off.
bool is_separable_punctuation(char32_t code_point);

/// How a sentence becomes tokens.
enum class TokenizerKind {
    word,       ///< tokens are the pieces between white space
    character,  ///< every code point is a token, a space included (written " ")
};

/// "word" or "character".
std::string to_string(TokenizerKind kind);
/// The kind named "word" or "character"; throws std::invalid_argument for anything else.
TokenizerKind tokenizer_kind_from_string(std::string_view name);

/// The tokens of `text`. Word level splits on runs of white space (no empty tokens); character
/// level gives one token per code point. Throws std::invalid_argument on invalid UTF-8.
std::vector<std::string> tokenize(std::string_view text, TokenizerKind kind);

/// The inverse of tokenize() on normalised text: word tokens are joined with single spaces,
/// character tokens are concatenated.
std::string detokenize(const std::vector<std::string>& tokens, TokenizerKind kind);

}  // namespace seqgrad
