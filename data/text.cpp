#include "seqgrad/data/text.h"

#include <stdexcept>

namespace seqgrad {

namespace {

bool is_digit_0_to_9(char32_t c) {
    return c >= '0' && c <= '9';
}

// The code points after lower-casing and accent stripping (the per-character steps).
std::u32string map_characters(const std::u32string& in, const NormalizeOptions& options) {
    std::u32string out;
    out.reserve(in.size());
    for (char32_t c : in) {
        if (options.lowercase) c = to_lower(c);
        if (options.strip_accents) {
            if (is_combining_mark(c)) continue;
            std::string_view ascii = strip_accent(c);
            if (!ascii.empty()) {
                for (char a : ascii) out.push_back(static_cast<char32_t>(a));
                continue;
            }
        }
        out.push_back(c);
    }
    return out;
}

// Puts a space on each side of every separable punctuation mark, unless a space (or the start
// or end of the text) is already there. A '.' or ',' with a digit on both sides is part of a
// number and stays where it is.
std::u32string separate_punctuation(const std::u32string& in) {
    std::u32string out;
    out.reserve(in.size() + in.size() / 4);
    for (size_t i = 0; i < in.size(); ++i) {
        const char32_t c = in[i];
        const bool inside_number = (c == '.' || c == ',') && i > 0 && i + 1 < in.size() &&
                                   is_digit_0_to_9(in[i - 1]) && is_digit_0_to_9(in[i + 1]);
        if (!is_separable_punctuation(c) || inside_number) {
            out.push_back(c);
            continue;
        }
        if (!out.empty() && !is_unicode_space(out.back())) out.push_back(' ');
        out.push_back(c);
        if (i + 1 < in.size() && !is_unicode_space(in[i + 1])) out.push_back(' ');
    }
    return out;
}

std::u32string collapse_whitespace(const std::u32string& in) {
    std::u32string out;
    out.reserve(in.size());
    bool pending_space = false;
    for (char32_t c : in) {
        if (is_unicode_space(c)) {
            pending_space = !out.empty();  // leading space is dropped
            continue;
        }
        if (pending_space) out.push_back(' ');
        pending_space = false;
        out.push_back(c);
    }
    return out;  // a trailing space is never written
}

}  // namespace

bool is_separable_punctuation(char32_t c) {
    switch (c) {
        case '.':
        case ',':
        case ';':
        case ':':
        case '!':
        case '?':
        case '"':
        case '(':
        case ')':
        case '[':
        case ']':
        case '{':
        case '}':
        case 0xAB:    // «
        case 0xBB:    // »
        case 0xA1:    // ¡
        case 0xBF:    // ¿
        case 0x2026:  // …
            return true;
        default:
            return false;
    }
}

std::string normalize(std::string_view text, const NormalizeOptions& options) {
    std::u32string chars = map_characters(decode_utf8(text), options);
    if (options.separate_punctuation) chars = separate_punctuation(chars);
    if (options.collapse_whitespace) chars = collapse_whitespace(chars);
    return encode_utf8(chars);
}

std::string to_string(TokenizerKind kind) {
    return kind == TokenizerKind::word ? "word" : "character";
}

TokenizerKind tokenizer_kind_from_string(std::string_view name) {
    if (name == "word") return TokenizerKind::word;
    if (name == "character") return TokenizerKind::character;
    throw std::invalid_argument("unknown tokenizer \"" + std::string(name) +
                                "\" (expected \"word\" or \"character\")");
}

std::vector<std::string> tokenize(std::string_view text, TokenizerKind kind) {
    std::vector<std::string> tokens;
    const std::u32string chars = decode_utf8(text);
    if (kind == TokenizerKind::character) {
        tokens.reserve(chars.size());
        for (char32_t c : chars) {
            tokens.emplace_back();
            append_utf8(tokens.back(), c);
        }
        return tokens;
    }
    std::string current;
    for (char32_t c : chars) {
        if (is_unicode_space(c)) {
            if (!current.empty()) tokens.push_back(std::move(current));
            current.clear();
        } else {
            append_utf8(current, c);
        }
    }
    if (!current.empty()) tokens.push_back(std::move(current));
    return tokens;
}

std::string detokenize(const std::vector<std::string>& tokens, TokenizerKind kind) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (kind == TokenizerKind::word && i > 0) out.push_back(' ');
        out += tokens[i];
    }
    return out;
}

}  // namespace seqgrad
