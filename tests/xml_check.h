// A small XML well-formedness checker for the tests of the SVG writers (test_plot.cpp,
// test_apps_attention.cpp): enough of XML to catch what an SVG writer gets wrong.
// xml_problem returns "" when `xml` is well-formed, otherwise a description of the first problem.
//   - every start tag is closed, in order, by an end tag of the same name (or is self-closing);
//   - exactly one root element, and nothing but whitespace outside it;
//   - attributes are name="value" or name='value', each name at most once per tag;
//   - no raw '<' in attribute values, no raw '<' or '>' in text, and '&' only starts one of
//     the five named entities or a numeric character reference.
#pragma once

#include <cctype>
#include <cstddef>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace seqgrad::testing::xml_check {

inline bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
           c == '.';
}

// Checks the '&' at text[i] starts a valid reference; returns its length, or 0 if invalid.
inline std::size_t reference_length(const std::string& text, std::size_t i) {
    static const std::regex reference("&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);");
    std::smatch match;
    const std::string rest = text.substr(i, 12);
    if (std::regex_search(rest, match, reference, std::regex_constants::match_continuous)) {
        return static_cast<std::size_t>(match.length(0));
    }
    return 0;
}

inline std::string check_text(const std::string& text, std::size_t offset) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '>') return "raw '>' in text at " + std::to_string(offset + i);
        if (text[i] == '&' && reference_length(text, i) == 0) {
            return "raw '&' in text at " + std::to_string(offset + i);
        }
    }
    return "";
}

inline std::string xml_problem(const std::string& xml) {
    std::vector<std::string> open;  // stack of element names
    int roots = 0;
    std::size_t i = 0;
    while (i < xml.size()) {
        if (xml[i] != '<') {
            const std::size_t next = xml.find('<', i);
            const std::string text =
                xml.substr(i, next == std::string::npos ? std::string::npos : next - i);
            if (open.empty() && text.find_first_not_of(" \t\r\n") != std::string::npos) {
                return "text outside the root element at " + std::to_string(i);
            }
            if (auto problem = check_text(text, i); !problem.empty()) return problem;
            if (next == std::string::npos) break;
            i = next;
            continue;
        }
        if (xml.compare(i, 5, "<?xml") == 0) {  // declaration
            const std::size_t end = xml.find("?>", i);
            if (end == std::string::npos || i != 0) return "bad XML declaration";
            i = end + 2;
            continue;
        }
        if (xml.compare(i, 4, "<!--") == 0) {
            const std::size_t end = xml.find("-->", i);
            if (end == std::string::npos) return "unterminated comment";
            i = end + 3;
            continue;
        }
        const bool closing = i + 1 < xml.size() && xml[i + 1] == '/';
        std::size_t j = i + (closing ? 2 : 1);
        const std::size_t name_start = j;
        while (j < xml.size() && is_name_char(xml[j])) ++j;
        const std::string name = xml.substr(name_start, j - name_start);
        if (name.empty()) return "'<' not followed by a tag name at " + std::to_string(i);

        if (closing) {
            while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
            if (j >= xml.size() || xml[j] != '>') return "malformed end tag </" + name + ">";
            if (open.empty() || open.back() != name) {
                return "</" + name + "> closes " +
                       (open.empty() ? "nothing" : "<" + open.back() + ">");
            }
            open.pop_back();
            i = j + 1;
            continue;
        }

        // Attributes.
        std::map<std::string, int> seen;
        bool self_closing = false;
        while (true) {
            const std::size_t before_space = j;
            while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
            if (j >= xml.size()) return "unterminated tag <" + name + ">";
            if (xml[j] == '>') break;
            if (xml.compare(j, 2, "/>") == 0) {
                self_closing = true;
                ++j;
                break;
            }
            if (j == before_space) return "attributes of <" + name + "> not separated by space";
            const std::size_t attr_start = j;
            while (j < xml.size() && is_name_char(xml[j])) ++j;
            const std::string attr = xml.substr(attr_start, j - attr_start);
            if (attr.empty()) return "bad attribute name in <" + name + ">";
            if (++seen[attr] > 1) return "duplicate attribute " + attr + " in <" + name + ">";
            if (j >= xml.size() || xml[j] != '=') return "attribute " + attr + " has no '=' value";
            ++j;
            if (j >= xml.size() || (xml[j] != '"' && xml[j] != '\'')) {
                return "attribute " + attr + " of <" + name + "> is not quoted";
            }
            const char quote = xml[j];
            const std::size_t end = xml.find(quote, j + 1);
            if (end == std::string::npos) return "unterminated attribute " + attr;
            const std::string value = xml.substr(j + 1, end - j - 1);
            if (value.find('<') != std::string::npos) return "raw '<' in attribute " + attr;
            for (std::size_t k = 0; k < value.size(); ++k) {
                if (value[k] == '&' && reference_length(value, k) == 0) {
                    return "raw '&' in attribute " + attr;
                }
            }
            j = end + 1;
        }
        if (open.empty()) {
            if (++roots > 1) return "more than one root element";
        }
        if (!self_closing) open.push_back(name);
        i = j + 1;
    }
    if (!open.empty()) return "<" + open.back() + "> is never closed";
    if (roots != 1) return "no root element";
    return "";
}

}  // namespace seqgrad::testing::xml_check
