#include "seqgrad/data/reversible_tokenizer.h"

#include "seqgrad/data/utf8.h"

namespace seqgrad {

namespace {

constexpr char32_t kJoinerCodePoint = 0xFFED;

bool is_ascii_digit(char32_t c) {
    return c >= '0' && c <= '9';
}

bool is_apostrophe_or_hyphen(char32_t c) {
    return c == '\'' || c == 0x2019 || c == '-';
}

// A token as it is being built: its code points, and whether a joiner goes before or after.
struct Piece {
    std::u32string text;
    bool punctuation = false;
    bool joined_left = false, joined_right = false;
};

}  // namespace

bool is_split_punctuation(char32_t c) {
    if (c < 0x80)
        return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
               (c >= '{' && c <= '~');
    switch (c) {
        case 0xA1:    // ¡
        case 0xA2:    // ¢
        case 0xA3:    // £
        case 0xA5:    // ¥
        case 0xA7:    // §
        case 0xAB:    // «
        case 0xB0:    // °
        case 0xB7:    // ·
        case 0xBB:    // »
        case 0xBF:    // ¿
        case 0x20AC:  // €
        case 0x3001:  // 、
        case 0x3002:  // 。
            return true;
        default:
            return c >= 0x2010 && c <= 0x205E;  // general punctuation: dashes, quotes, …, ‰
    }
}

std::vector<std::string> reversible_tokenize(std::string_view text) {
    const std::u32string chars = decode_utf8(text);
    std::vector<Piece> pieces;
    bool space_before = true;  // the start of the text counts as a space
    auto is_word_char = [](char32_t c) {
        return !is_unicode_space(c) && !is_split_punctuation(c) && c != kJoinerCodePoint;
    };
    for (size_t i = 0; i < chars.size(); ++i) {
        const char32_t c = chars[i];
        if (c == kJoinerCodePoint) continue;  // dropped (documented)
        if (is_unicode_space(c)) {
            space_before = true;
            continue;
        }
        // The previous and next characters that are kept (joiners skipped).
        char32_t prev = 0, next = 0;
        for (size_t j = i; j-- > 0;)
            if (chars[j] != kJoinerCodePoint) {
                prev = chars[j];
                break;
            }
        for (size_t j = i + 1; j < chars.size(); ++j)
            if (chars[j] != kJoinerCodePoint) {
                next = chars[j];
                break;
            }
        bool word_char = is_word_char(c);
        if (!word_char && !space_before && !pieces.empty() && !pieces.back().punctuation) {
            // inside a word: don't, peut-être; inside a number: 3.14, 1,000
            const bool inner = is_apostrophe_or_hyphen(c) && next != 0 && is_word_char(next);
            const bool in_number =
                (c == '.' || c == ',') && is_ascii_digit(prev) && is_ascii_digit(next);
            word_char = inner || in_number;
        }
        const bool extends_word =
            word_char && !space_before && !pieces.empty() && !pieces.back().punctuation;
        if (extends_word) {
            pieces.back().text.push_back(c);
        } else {
            Piece p;
            p.text.push_back(c);
            p.punctuation = !word_char;
            if (!space_before && !pieces.empty()) {
                if (p.punctuation)
                    p.joined_left = true;
                else
                    pieces.back().joined_right = true;
            }
            pieces.push_back(std::move(p));
        }
        space_before = false;
    }
    std::vector<std::string> tokens;
    tokens.reserve(pieces.size());
    for (const Piece& p : pieces) {
        std::string t;
        if (p.joined_left) t += kJoiner;
        t += encode_utf8(p.text);
        if (p.joined_right) t += kJoiner;
        tokens.push_back(std::move(t));
    }
    return tokens;
}

std::string reversible_detokenize(const std::vector<std::string>& tokens) {
    std::string out;
    bool glue_next = true;  // no space before the first token
    for (const std::string& token : tokens) {
        std::string_view t = token;
        bool glue_left = false, glue_right = false;
        if (t.substr(0, kJoiner.size()) == kJoiner) {
            glue_left = true;
            t.remove_prefix(kJoiner.size());
        }
        if (t.size() >= kJoiner.size() && t.substr(t.size() - kJoiner.size()) == kJoiner) {
            glue_right = true;
            t.remove_suffix(kJoiner.size());
        }
        if (t.empty() && !glue_left && !glue_right) continue;
        if (!glue_next && !glue_left) out += ' ';
        out += t;
        glue_next = glue_right;
    }
    return out;
}

std::string reversible_normal_form(std::string_view text) {
    std::string out;
    bool pending_space = false;
    for (char32_t c : decode_utf8(text)) {
        if (c == kJoinerCodePoint) continue;
        if (is_unicode_space(c)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) out += ' ';
        pending_space = false;
        append_utf8(out, c);
    }
    return out;
}

}  // namespace seqgrad
