// UTF-8: checking, decoding and encoding code points.
//
// Everything in seqgrad's data pipeline is UTF-8. Strings stay UTF-8 encoded `std::string`s;
// code that needs to look at characters decodes to `std::u32string` (one char32_t per code
// point) and encodes back.
//
// Valid UTF-8 here is what RFC 3629 calls valid: shortest form only (no overlong encodings),
// no UTF-16 surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seqgrad {

/// True if `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

/// Byte offset of the first byte that starts an ill-formed sequence, or std::string::npos if
/// `text` is valid. Used to point at the problem in error messages.
size_t find_invalid_utf8(std::string_view text);

/// The code points of `text`. Throws std::invalid_argument naming the byte offset if `text`
/// is not valid UTF-8.
std::u32string decode_utf8(std::string_view text);

/// Appends the UTF-8 encoding of `code_point` to `out`. Throws std::invalid_argument for a
/// surrogate or a value above U+10FFFF.
void append_utf8(std::string& out, char32_t code_point);

/// The UTF-8 encoding of `code_points`.
std::string encode_utf8(std::u32string_view code_points);

/// True for the code points Python's str.isspace() accepts (and so str.split() splits on):
/// ASCII \t \n \v \f \r and space, U+001C..U+001F, U+0085, U+00A0, U+1680, U+2000..U+200A,
/// U+2028, U+2029, U+202F, U+205F, U+3000. sacreBLEU splits tokens with str.split(), so BLEU
/// must use exactly this set.
bool is_unicode_space(char32_t code_point);

}  // namespace seqgrad
