// Reading a parallel corpus: one sentence pair per line, the two sides separated by a tab.
//
// The format, line by line (UTF-8, LF or CRLF line ends, an optional UTF-8 byte-order mark):
//     column 1 <TAB> column 2 [<TAB> more columns: metadata, ignored]
// Every line has exactly CorpusOptions::columns tab-separated columns (2 unless the file carries
// metadata, like the attribution column of the Tatoeba / manythings.org files: then 3). A line
// with more is bad rather than cut: a tab inside a sentence would otherwise turn one pair into
// a wrong one. A line is also bad if a side is empty (or only white space), or if it is not
// valid UTF-8; an empty line is bad too (it has no tab). Each side is trimmed of surrounding
// white space.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace seqgrad {

/// One aligned pair of sentences, and where it came from.
struct SentencePair {
    std::string source;
    std::string target;
    size_t line = 0;  ///< 1-based line in the file; 0 when the pair was not read from a file
};

/// What to do with a bad line, as pandas' read_csv(on_bad_lines=...) names it.
enum class OnBadLine {
    error,  ///< throw std::runtime_error "FILE:LINE: what is wrong; ..." saying the way past
    warn,   ///< leave it out and list it (the caller prints every one)
    skip,   ///< leave it out and list it (the caller prints how many)
};

/// A line left out: its 1-based number and what is wrong with it.
struct BadLine {
    size_t line = 0;
    std::string reason;  ///< "no tab (expected source<TAB>target)"
};

struct CorpusOptions {
    /// Which column holds the source sentence: 0 (the first) or 1 (the second). The other
    /// column is the target.
    int source_column = 0;
    /// How many tab-separated columns every line has (at least 2); the columns after the second
    /// are ignored. (Config: data.columns.)
    size_t columns = 2;
    OnBadLine on_bad_line = OnBadLine::error;
    /// With OnBadLine::warn or skip, how many messages to keep (every bad line is listed in
    /// CorpusReadResult::bad_lines).
    size_t max_messages = 5;
};

struct CorpusReadResult {
    std::vector<SentencePair> pairs;
    size_t skipped = 0;                 ///< number of bad lines left out
    std::vector<BadLine> bad_lines;     ///< every line left out, in file order
    std::vector<std::string> messages;  ///< "FILE:LINE: what is wrong", the first few
};

/// Reads the corpus file at `path`. Throws std::runtime_error if the file cannot be read, on
/// the first bad line with OnBadLine::error, and if no good pair is left. The error on a bad
/// line says the way past it: data.bad_lines "skip" or "warn", or, when every line of the file
/// has the same number of columns and that is more than expected, data.columns.
CorpusReadResult read_parallel_corpus(const std::string& path, const CorpusOptions& options = {});

/// The same, on text already in memory; `name` stands for the file name in messages.
CorpusReadResult parse_parallel_corpus(std::string_view text, const std::string& name,
                                       const CorpusOptions& options = {});

/// data.bad_lines as written in configs: "error", "warn" or "skip" ("fail", the name of
/// "error" in older configs, is read as "error").
OnBadLine on_bad_line_from_string(std::string_view name);

}  // namespace seqgrad
