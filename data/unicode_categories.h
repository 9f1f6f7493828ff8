// The Unicode general-category classes sacreBLEU's "intl" tokenizer looks at: numbers (N*:
// Nd, Nl, No), punctuation (P*: Pc, Pd, Ps, Pe, Pi, Pf, Po) and symbols (S*: Sm, Sc, Sk, So).
// The table is generated from Python's unicodedata by data/make_unicode_categories.py.
#pragma once

namespace seqgrad {

enum class UnicodeClass { other, number, punctuation, symbol };

/// The class of `code_point`'s general category (\p{N}, \p{P}, \p{S} of regular expressions).
UnicodeClass unicode_class(char32_t code_point);

/// The Unicode version of the table, e.g. "14.0.0".
extern const char* const kUnicodeCategoriesVersion;

}  // namespace seqgrad
