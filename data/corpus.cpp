#include "seqgrad/data/corpus.h"

#include <algorithm>
#include <stdexcept>

#include "seqgrad/data/file_io.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

// Checks one line (without its line end). Returns an empty string and fills `pair` if the line
// is good, or a description of what is wrong.
std::string parse_line(std::string_view line, int source_column, size_t expected_columns,
                       SentencePair& pair) {
    const size_t bad_byte = find_invalid_utf8(line);
    if (bad_byte != std::string::npos) {
        return "invalid UTF-8 at byte " + std::to_string(bad_byte + 1) + " of the line";
    }
    if (line.empty()) return "empty line (expected source<TAB>target)";
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) return "no tab (expected source<TAB>target)";
    const size_t second_tab = line.find('\t', tab + 1);
    const size_t found = size_t(std::count(line.begin(), line.end(), '\t')) + 1;
    if (found != expected_columns) {
        std::string problem = std::to_string(found) + " tab-separated columns, expected " +
                              std::to_string(expected_columns);
        if (found > expected_columns) problem += " (a tab inside a sentence?)";
        return problem;
    }
    const std::string_view columns[2] = {
        trim(line.substr(0, tab)),
        trim(line.substr(tab + 1, second_tab == std::string_view::npos ? std::string_view::npos
                                                                       : second_tab - tab - 1))};
    const std::string_view source = columns[source_column];
    const std::string_view target = columns[1 - source_column];
    if (source.empty()) {
        return "empty source side (column " + std::to_string(source_column + 1) + ")";
    }
    if (target.empty()) {
        return "empty target side (column " + std::to_string(2 - source_column) + ")";
    }
    pair.source = std::string(source);
    pair.target = std::string(target);
    return {};
}

// The number of tab-separated columns every line of `text` has, or 0 when lines differ.
size_t common_column_count(std::string_view text) {
    size_t common = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        const size_t columns = size_t(std::count(line.begin(), line.end(), '\t')) + 1;
        if (common != 0 && columns != common) return 0;
        common = columns;
    }
    return common;
}

// What to do about a bad line when bad lines are errors.
std::string way_past(std::string_view text, size_t expected_columns) {
    const size_t common = common_column_count(text);
    if (common > expected_columns)
        return "every line has " + std::to_string(common) +
               " tab-separated columns: if the extra ones are metadata, set data.columns to " +
               std::to_string(common);
    return "to leave bad lines out, set data.bad_lines to \"skip\" (or \"warn\" to print each "
           "one); they are listed in the run directory, in skipped_lines.tsv";
}

}  // namespace

OnBadLine on_bad_line_from_string(std::string_view name) {
    if (name == "error" || name == "fail") return OnBadLine::error;
    if (name == "warn") return OnBadLine::warn;
    if (name == "skip") return OnBadLine::skip;
    throw std::invalid_argument("unknown on_bad_line \"" + std::string(name) +
                                "\" (expected \"error\", \"warn\" or \"skip\")");
}

CorpusReadResult parse_parallel_corpus(std::string_view text, const std::string& name,
                                       const CorpusOptions& options) {
    if (options.source_column != 0 && options.source_column != 1) {
        throw std::invalid_argument("source_column must be 0 or 1, got " +
                                    std::to_string(options.source_column));
    }
    if (options.columns < 2) {
        throw std::invalid_argument("columns must be at least 2, got " +
                                    std::to_string(options.columns));
    }
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());

    CorpusReadResult result;
    size_t line_number = 0;
    size_t pos = 0;
    while (pos < text.size()) {  // a final line end does not start another (empty) line
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF

        SentencePair pair;
        const std::string problem = parse_line(line, options.source_column, options.columns, pair);
        if (problem.empty()) {
            pair.line = line_number;
            result.pairs.push_back(std::move(pair));
            continue;
        }
        const std::string message = name + ":" + std::to_string(line_number) + ": " + problem;
        if (options.on_bad_line == OnBadLine::error)
            throw std::runtime_error(message + "; " + way_past(text, options.columns));
        ++result.skipped;
        result.bad_lines.push_back({line_number, problem});
        if (result.messages.size() < options.max_messages) result.messages.push_back(message);
    }
    if (result.pairs.empty()) {
        std::string why = " (the file is empty)";
        if (result.skipped != 0) {
            why = " (all " + std::to_string(result.skipped) + " lines are bad";
            why += result.messages.empty() ? ")" : "; first: " + result.messages.front() + ")";
        }
        throw std::runtime_error(name + ": no sentence pairs" + why);
    }
    return result;
}

CorpusReadResult read_parallel_corpus(const std::string& path, const CorpusOptions& options) {
    return parse_parallel_corpus(read_file(path), path, options);
}

}  // namespace seqgrad
