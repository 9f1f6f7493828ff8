#include "seqgrad/data/sacrebleu_text.h"

#include <stdexcept>

#include "seqgrad/data/letters.h"
#include "seqgrad/data/unicode_categories.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

namespace {

// Python's str.replace: every non-overlapping occurrence, left to right.
std::string replace_all(std::string text, std::string_view from, std::string_view to) {
    std::string out;
    size_t pos = 0;
    for (size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, pos)) {
        out.append(text, pos, hit - pos);
        out.append(to);
        pos = hit + from.size();
    }
    out.append(text, pos, std::string::npos);
    return out;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// The character class [\{-\~\[-\` -\&\(-\+\:-\@\/] of the first 13a rule, i.e. the ranges
// { | } ~   [ \ ] ^ _ `   space ! " # $ % &   ( ) * +   : ; < = > ? @   and /.
bool is_13a_symbol(char c) {
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// Working on bytes gives the same result as Python's code points here: every pattern character
// is ASCII, and a byte of a multi-byte character never equals an ASCII byte, so a match of
// [^0-9] against the first or last byte of such a character inserts the space at the same
// place as a match against the whole character would.

// ([^0-9])([.,]) -> "\1 \2 "
std::string split_period_comma_after_non_digit(const std::string& s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    size_t i = 0;
    while (i < s.size()) {
        if (i + 1 < s.size() && !is_digit(s[i]) && (s[i + 1] == '.' || s[i + 1] == ',')) {
            out += s[i];
            out += ' ';
            out += s[i + 1];
            out += ' ';
            i += 2;
        } else {
            out += s[i++];
        }
    }
    return out;
}

// ([.,])([^0-9]) -> " \1 \2"
std::string split_period_comma_before_non_digit(const std::string& s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    size_t i = 0;
    while (i < s.size()) {
        if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && !is_digit(s[i + 1])) {
            out += ' ';
            out += s[i];
            out += ' ';
            out += s[i + 1];
            i += 2;
        } else {
            out += s[i++];
        }
    }
    return out;
}

// ([0-9])(-) -> "\1 \2 "
std::string split_dash_after_digit(const std::string& s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    size_t i = 0;
    while (i < s.size()) {
        if (i + 1 < s.size() && is_digit(s[i]) && s[i + 1] == '-') {
            out += s[i];
            out += " - ";
            i += 2;
        } else {
            out += s[i++];
        }
    }
    return out;
}

std::string join_with_spaces(const std::vector<std::string>& pieces) {
    std::string out;
    for (size_t i = 0; i < pieces.size(); ++i) {
        if (i > 0) out += ' ';
        out += pieces[i];
    }
    return out;
}

}  // namespace

std::vector<std::string> split_on_whitespace(std::string_view text) {
    std::vector<std::string> pieces;
    std::string current;
    for (char32_t c : decode_utf8(text)) {
        if (is_unicode_space(c)) {
            if (!current.empty()) pieces.push_back(std::move(current));
            current.clear();
        } else {
            append_utf8(current, c);
        }
    }
    if (!current.empty()) pieces.push_back(std::move(current));
    return pieces;
}

std::string_view rstrip_whitespace(std::string_view text) {
    size_t end = 0;  // byte offset just past the last character that is not white space
    size_t pos = 0;
    for (char32_t c : decode_utf8(text)) {
        pos += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;  // its UTF-8 length
        if (!is_unicode_space(c)) end = pos;
    }
    return text.substr(0, end);
}

std::string lowercase_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : decode_utf8(text)) append_utf8(out, to_lower(c));
    return out;
}

std::string tokenize_13a(std::string_view line) {
    std::string s(line);
    s = replace_all(std::move(s), "<skipped>", "");
    s = replace_all(std::move(s), "-\n", "");
    s = replace_all(std::move(s), "\n", " ");
    if (s.find('&') != std::string::npos) {
        s = replace_all(std::move(s), "&quot;", "\"");
        s = replace_all(std::move(s), "&amp;", "&");
        s = replace_all(std::move(s), "&lt;", "<");
        s = replace_all(std::move(s), "&gt;", ">");
    }
    s = " " + s + " ";
    std::string padded;
    padded.reserve(s.size() * 2);
    for (char c : s) {
        if (is_13a_symbol(c)) {
            padded += ' ';
            padded += c;
            padded += ' ';
        } else {
            padded += c;
        }
    }
    s = split_period_comma_after_non_digit(padded);
    s = split_period_comma_before_non_digit(s);
    s = split_dash_after_digit(s);
    return join_with_spaces(split_on_whitespace(s));
}

namespace {

bool is_number(char32_t c) {
    return unicode_class(c) == UnicodeClass::number;
}

bool is_punctuation(char32_t c) {
    return unicode_class(c) == UnicodeClass::punctuation;
}

// One rule (A)(B) -> "\1 \2 " (space_before = false) or " \1 \2" (true), applied as re.sub
// does: left to right, a match consumes both characters, matches do not overlap.
std::u32string split_pairs(const std::u32string& s, bool (*first)(char32_t),
                           bool (*second)(char32_t), bool space_before) {
    std::u32string out;
    out.reserve(s.size() + s.size() / 4);
    size_t i = 0;
    while (i < s.size()) {
        if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
            if (space_before) out += U' ';
            out += s[i];
            out += U' ';
            out += s[i + 1];
            if (!space_before) out += U' ';
            i += 2;
        } else {
            out += s[i++];
        }
    }
    return out;
}

}  // namespace

std::string tokenize_intl(std::string_view line) {
    const std::u32string text = decode_utf8(line);
    std::u32string s = split_pairs(
        text, [](char32_t c) { return !is_number(c); }, is_punctuation, false);
    s = split_pairs(
        s, is_punctuation, [](char32_t c) { return !is_number(c); }, true);
    std::u32string spaced;
    spaced.reserve(s.size() + s.size() / 4);
    for (char32_t c : s) {
        if (unicode_class(c) == UnicodeClass::symbol) {
            spaced += U' ';
            spaced += c;
            spaced += U' ';
        } else {
            spaced += c;
        }
    }
    return join_with_spaces(split_on_whitespace(encode_utf8(spaced)));
}

std::string tokenize_char(std::string_view line) {
    std::string out;
    out.reserve(line.size() * 2);
    bool first = true;
    for (char32_t c : decode_utf8(line)) {
        if (!first) out += ' ';
        append_utf8(out, c);
        first = false;
    }
    return out;
}

std::string tokenize_for_bleu(std::string_view line, std::string_view tokenizer) {
    if (tokenizer == "13a") return tokenize_13a(line);
    if (tokenizer == "intl") return tokenize_intl(line);
    if (tokenizer == "char") return tokenize_char(line);
    if (tokenizer == "none") return std::string(line);
    throw std::invalid_argument("unknown BLEU tokenizer \"" + std::string(tokenizer) +
                                "\" (expected 13a, intl, char or none)");
}

}  // namespace seqgrad
