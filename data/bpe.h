// Byte-pair encoding (Sennrich et al., 2016), learned and applied exactly as subword-nmt's
// learn_bpe.py / apply_bpe.py do, so that codes files are interchangeable with subword-nmt's.
//
// Learning. Lines are split into words on single ASCII spaces (the line's ends stripped of
// "\r\n "). A word is the sequence of its characters (code points), with "</w>" glued to the
// last one: "lower" -> l o w e r</w>. Every adjacent pair of symbols is counted, weighted by
// how often its word occurs. The most frequent pair is merged everywhere (left to right, so
// "a a a" -> "aa a"), which writes one line "left right" to the codes; ties go to the
// lexicographically largest pair (Python's max over (count, (left, right))). Learning stops
// after N merges, or when the best pair occurs fewer than min_frequency times.
//
// Applying. A word starts as its characters (last one + "</w>"); while some adjacent pair is in
// the codes, the pair with the lowest rank (earliest line) is merged at every position, left to
// right. "</w>" is dropped from the result, and every segment but the last gets the separator
// "@@": "lowest" -> "low@@ est". undo_bpe() removes "@@ " (and a trailing "@@").
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace seqgrad {

/// One merge: the two symbols whose concatenation becomes a new symbol.
struct BpeMerge {
    std::string left, right;
    bool operator==(const BpeMerge& o) const { return left == o.left && right == o.right; }
};

/// Word frequencies, in first-seen order (order never changes the learned codes; it keeps
/// `seqgrad bpe vocab`'s ties in subword-nmt's order).
class WordCounts {
  public:
    /// Counts the words of one line as subword-nmt does: strip "\r\n " from both ends, split on
    /// ' ', skip empty pieces. Throws std::runtime_error "NAME:LINE: not valid UTF-8 ..." if the
    /// line is not UTF-8 (`line_number` counts from 1).
    void add_line(std::string_view line, const std::string& name = "input", size_t line_number = 0);
    /// Adds `count` occurrences of `word` (which must not contain a space).
    void add(const std::string& word, int64_t count = 1);
    /// Every line of `in`.
    void add_lines(std::istream& in, const std::string& name);

    size_t size() const { return words_.size(); }
    const std::vector<std::pair<std::string, int64_t>>& words() const { return words_; }
    /// The words by decreasing count, ties in first-seen order (subword-nmt's get_vocab.py).
    std::vector<std::pair<std::string, int64_t>> by_frequency() const;

  private:
    std::vector<std::pair<std::string, int64_t>> words_;
    std::unordered_map<std::string, size_t> index_;
};

struct BpeLearnOptions {
    int num_merges = 10000;  ///< at most this many merges (must be > 0)
    int min_frequency = 2;   ///< stop when the best pair occurs fewer times (must be >= 1)
};

struct BpeLearnResult {
    std::vector<BpeMerge> merges;
    /// True when learning stopped before num_merges: no pair occurred min_frequency times.
    bool stopped_early = false;
};

/// Learns merges from word counts. Incremental: after a merge, only the words that contained
/// the pair are recounted (their old pairs subtracted, their new pairs added), so overlapping
/// pairs ("a a a") are counted exactly; the best pair is kept in a heap with lazy deletion.
BpeLearnResult learn_bpe(const WordCounts& counts, const BpeLearnOptions& options);

/// A codes file: "#version: 0.2" then one merge per line, earliest (lowest rank) first.
class BpeCodes {
  public:
    BpeCodes() = default;
    explicit BpeCodes(std::vector<BpeMerge> merges);

    /// Parses a codes file. Throws std::runtime_error "NAME:LINE: ..." when the first line is
    /// not "#version: 0.2", when a line does not hold exactly two symbols separated by one
    /// space, or is not UTF-8. A trailing empty line is allowed.
    static BpeCodes parse(std::string_view text, const std::string& name);
    static BpeCodes load(const std::string& path);
    /// "#version: 0.2\n" and one "left right\n" per merge.
    std::string to_string() const;
    /// Writes to_string() atomically.
    void save(const std::string& path) const;

    const std::vector<BpeMerge>& merges() const { return merges_; }
    size_t size() const { return merges_.size(); }

  private:
    std::vector<BpeMerge> merges_;
};

/// How Bpe segments words.
struct BpeApplyOptions {
    std::string separator = "@@";
    /// subword-nmt's vocabulary filter: when not empty, a segment that is not in it (in the
    /// form it would be written: "seg@@" inside a word, "seg" at its end) is split back into
    /// the two symbols it was merged from, recursively, until every piece is known or is a
    /// single character.
    std::unordered_set<std::string> vocabulary;
    /// Words never split: every occurrence of one of these strings inside a word is cut out
    /// and kept whole (subword-nmt's --glossaries, with literal strings), in this order.
    std::vector<std::string> glossary;
};

/// Segments text with a set of codes; caches the segmentation of every word it has seen
/// (thread-safe).
class Bpe {
  public:
    explicit Bpe(const BpeCodes& codes, BpeApplyOptions options = {});

    /// The segments of one word (no separators), e.g. {"low", "est"}.
    std::vector<std::string> segment_word(const std::string& word) const;
    /// The output tokens of `words`: the segments of each, all but each word's last followed
    /// by the separator. Empty words are skipped.
    std::vector<std::string> segment_words(const std::vector<std::string>& words) const;
    /// One line as apply_bpe.py writes it: leading and trailing "\r\n " kept, the words between
    /// split on ' ' and segmented, joined with single spaces.
    std::string apply_line(std::string_view line) const;

    const BpeCodes& codes() const { return codes_; }
    const BpeApplyOptions& options() const { return options_; }
    /// Replaces the vocabulary filter (and clears the cache). Not to be called while another
    /// thread segments with this object.
    void set_vocabulary(std::unordered_set<std::string> vocabulary);

  private:
    std::vector<std::string> merge_symbols(const std::u32string& chars) const;
    void split_for_vocabulary(const std::string& segment, bool final,
                              std::vector<std::string>& out) const;
    std::vector<std::string> encode_piece(const std::string& piece) const;

    BpeCodes codes_;
    BpeApplyOptions options_;
    std::unordered_map<std::string, int32_t> rank_;      // "left right" -> rank (first wins)
    std::unordered_map<std::string, BpeMerge> unmerge_;  // left+right -> (left, right)
    mutable std::mutex cache_mutex_;
    mutable std::unordered_map<std::string, std::vector<std::string>> cache_;
};

/// A line without the "\r", "\n" and " " at its two ends, as subword-nmt reads every line
/// (Python's line.strip('\r\n ')).
std::string_view strip_line_ends(std::string_view line);

/// Undoes the separator: removes every "@@ " and a "@@" at the end of the line, as
/// subword-nmt's `sed -r 's/(@@ )|(@@ ?$)//g'` does.
std::string undo_bpe(std::string_view line, std::string_view separator = "@@");

/// Reads a vocabulary file ("token count" per line, as `seqgrad bpe vocab` and subword-nmt's
/// get_vocab.py write it) and keeps the tokens seen at least `threshold` times. Throws naming
/// the file and line of a malformed line.
std::unordered_set<std::string> read_bpe_vocabulary(const std::string& path, int64_t threshold);

}  // namespace seqgrad
