#include "seqgrad/data/utf8.h"

#include <stdexcept>
#include <string>

namespace seqgrad {

namespace {

// Decodes one code point starting at `text[pos]`. On success stores it in `code_point`, the
// number of bytes used in `length`, and returns true; returns false for an ill-formed sequence.
//
// The rules (RFC 3629, table 3-7 of the Unicode standard):
//   00..7F                       1 byte
//   C2..DF 80..BF                2 bytes (C0, C1 would be overlong)
//   E0 A0..BF 80..BF             3 bytes, E0 needs a second byte >= A0 (else overlong)
//   E1..EC, EE..EF 80..BF 80..BF
//   ED 80..9F 80..BF             ED A0.. would encode a surrogate
//   F0 90..BF 80..BF 80..BF      4 bytes, F0 needs >= 90 (else overlong)
//   F1..F3 80..BF 80..BF 80..BF
//   F4 80..8F 80..BF 80..BF      F4 90.. would be above U+10FFFF
bool decode_one(std::string_view text, size_t pos, char32_t& code_point, size_t& length) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
    auto is_continuation = [](unsigned char b) { return (b & 0xC0) == 0x80; };
    const size_t left = text.size() - pos;
    const unsigned char lead = byte(0);

    if (lead < 0x80) {
        code_point = lead;
        length = 1;
        return true;
    }
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        code_point = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        code_point = lead & 0x0F;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        code_point = lead & 0x07;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    } else {
        return false;  // 80..BF (continuation), C0, C1, F5..FF
    }
    if (left < length) return false;
    if (byte(1) < lo || byte(1) > hi) return false;
    for (size_t i = 1; i < length; ++i) {
        if (!is_continuation(byte(i))) return false;
        code_point = (code_point << 6) | (byte(i) & 0x3F);
    }
    return true;
}

}  // namespace

size_t find_invalid_utf8(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        char32_t code_point = 0;
        size_t length = 0;
        if (!decode_one(text, pos, code_point, length)) return pos;
        pos += length;
    }
    return std::string::npos;
}

bool is_valid_utf8(std::string_view text) {
    return find_invalid_utf8(text) == std::string::npos;
}

std::u32string decode_utf8(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        char32_t code_point = 0;
        size_t length = 0;
        if (!decode_one(text, pos, code_point, length)) {
            throw std::invalid_argument("invalid UTF-8 at byte " + std::to_string(pos));
        }
        out.push_back(code_point);
        pos += length;
    }
    return out;
}

void append_utf8(std::string& out, char32_t code_point) {
    if ((code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF) {
        throw std::invalid_argument("cannot encode U+" + std::to_string(code_point) +
                                    " in UTF-8 (surrogate or out of range)");
    }
    if (code_point < 0x80) {
        out.push_back(static_cast<char>(code_point));
    } else if (code_point < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
        out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    } else if (code_point < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
        out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
        out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    }
}

std::string encode_utf8(std::u32string_view code_points) {
    std::string out;
    out.reserve(code_points.size());
    for (char32_t c : code_points) append_utf8(out, c);
    return out;
}

bool is_unicode_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace seqgrad
