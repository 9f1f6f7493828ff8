// Codes files and applying BPE (data/bpe.h).
#include "seqgrad/data/bpe.h"

#include <fmt/format.h>

#include <stdexcept>

#include "seqgrad/data/file_io.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

namespace {

bool is_line_end(char c) {
    return c == '\r' || c == '\n' || c == ' ';
}

constexpr std::string_view kVersionLine = "#version: 0.2";
constexpr std::string_view kEndOfWord = "</w>";

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string_view strip_line_ends(std::string_view s) {
    while (!s.empty() && is_line_end(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_line_end(s.back())) s.remove_suffix(1);
    return s;
}

// ---- codes files ----------------------------------------------------------------------------

BpeCodes::BpeCodes(std::vector<BpeMerge> merges) : merges_(std::move(merges)) {}

BpeCodes BpeCodes::parse(std::string_view text, const std::string& name) {
    // Trailing line ends are not lines (apply_bpe.py: codes.read().rstrip('\n')).
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    std::vector<BpeMerge> merges;
    size_t number = 0;
    while (true) {
        ++number;
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (size_t at = find_invalid_utf8(line); at != std::string::npos)
            throw std::runtime_error(
                fmt::format("{}:{}: not valid UTF-8 (bad byte 0x{:02x} at byte {})", name, number,
                            static_cast<unsigned char>(line[at]), at + 1));
        std::string_view stripped = strip_line_ends(line);
        if (number == 1) {
            if (stripped != kVersionLine)
                throw std::runtime_error(fmt::format(
                    "{}:1: not a BPE codes file of subword-nmt's format: expected the first line "
                    "\"{}\", got \"{}\"",
                    name, kVersionLine, std::string(line.substr(0, 60))));
        } else {
            size_t space = stripped.find(' ');
            if (space == std::string_view::npos || space == 0 ||
                stripped.find(' ', space + 1) != std::string_view::npos)
                throw std::runtime_error(fmt::format(
                    "{}:{}: expected two symbols separated by one space (\"left right\"), got "
                    "\"{}\"",
                    name, number, std::string(line.substr(0, 60))));
            merges.push_back(
                {std::string(stripped.substr(0, space)), std::string(stripped.substr(space + 1))});
        }
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return BpeCodes(std::move(merges));
}

BpeCodes BpeCodes::load(const std::string& path) {
    return parse(read_file(path), path);
}

std::string BpeCodes::to_string() const {
    std::string out(kVersionLine);
    out += '\n';
    for (const BpeMerge& m : merges_) out += m.left + ' ' + m.right + '\n';
    return out;
}

void BpeCodes::save(const std::string& path) const {
    write_file_atomically(path, to_string());
}

// ---- applying -------------------------------------------------------------------------------

Bpe::Bpe(const BpeCodes& codes, BpeApplyOptions options)
    : codes_(codes), options_(std::move(options)) {
    const auto& merges = codes_.merges();
    for (size_t r = 0; r < merges.size(); ++r) {
        const BpeMerge& m = merges[r];
        rank_.emplace(m.left + ' ' + m.right, int32_t(r));  // a duplicate keeps its first rank
        unmerge_.emplace(m.left + m.right, m);              // the earliest merge that makes it
    }
}

void Bpe::set_vocabulary(std::unordered_set<std::string> vocabulary) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    options_.vocabulary = std::move(vocabulary);
    cache_.clear();
}

// Merges the lowest-ranked pair present at every position (left to right, so overlapping
// occurrences "x x x" give "xx x"), until no pair of the word is in the codes.
std::vector<std::string> Bpe::merge_symbols(const std::u32string& chars) const {
    std::vector<std::string> word;
    for (size_t i = 0; i < chars.size(); ++i) {
        word.emplace_back();
        append_utf8(word.back(), chars[i]);
    }
    word.back() += kEndOfWord;
    std::string key;
    while (word.size() > 1) {
        int32_t best = INT32_MAX;
        for (size_t i = 0; i + 1 < word.size(); ++i) {
            key.assign(word[i]).append(1, ' ').append(word[i + 1]);
            auto it = rank_.find(key);
            if (it != rank_.end() && it->second < best) best = it->second;
        }
        if (best == INT32_MAX) break;
        const BpeMerge& m = codes_.merges()[size_t(best)];
        std::vector<std::string> merged;
        merged.reserve(word.size());
        for (size_t i = 0; i < word.size(); ++i) {
            if (i + 1 < word.size() && word[i] == m.left && word[i + 1] == m.right) {
                merged.push_back(m.left + m.right);
                ++i;
            } else {
                merged.push_back(std::move(word[i]));
            }
        }
        word = std::move(merged);
    }
    std::string& last = word.back();
    if (last == kEndOfWord)
        word.pop_back();
    else if (ends_with(last, kEndOfWord))
        last.resize(last.size() - kEndOfWord.size());
    return word;
}

// subword-nmt's recursive_split: `segment` is unknown, so replace it by the two symbols it was
// made from (looking it up with "</w>" when it ends the word), keeping each that is known and
// splitting further each that is not.
//
// Each split makes the segments strictly shorter, with one exception: the empty final segment
// that cutting four characters off a right symbol of at most four leaves. With a merge
// "< /w>" in the codes it would be looked up as "</w>" and split into "" again, forever
// (subword-nmt itself dies of recursion there), so an empty segment is never split.
void Bpe::split_for_vocabulary(const std::string& segment, bool final,
                               std::vector<std::string>& out) const {
    auto it = segment.empty() ? unmerge_.end()
                              : unmerge_.find(final ? segment + std::string(kEndOfWord) : segment);
    if (it == unmerge_.end()) {
        out.push_back(segment);  // cannot be split further
        return;
    }
    const std::string& left = it->second.left;
    std::string right = it->second.right;
    // subword-nmt drops the last four characters (right[:-4]) whatever they are: a codes file
    // may hold a merge whose right symbol is shorter than "</w>" ("t< /w>" also makes "t</w>").
    if (final)
        right.resize(right.size() > kEndOfWord.size() ? right.size() - kEndOfWord.size() : 0);
    const auto& vocab = options_.vocabulary;
    if (vocab.count(left + options_.separator))
        out.push_back(left);
    else
        split_for_vocabulary(left, false, out);
    if ((final && vocab.count(right)) || (!final && vocab.count(right + options_.separator)))
        out.push_back(right);
    else
        split_for_vocabulary(right, final, out);
}

std::vector<std::string> Bpe::encode_piece(const std::string& piece) const {
    for (const std::string& g : options_.glossary)
        if (piece == g) return {piece};
    std::u32string chars = decode_utf8(piece);
    if (chars.size() <= 1) return {piece};  // apply_bpe.py returns one character as it is
    std::vector<std::string> segments = merge_symbols(chars);
    if (options_.vocabulary.empty()) return segments;
    std::vector<std::string> checked;
    const auto& vocab = options_.vocabulary;
    for (size_t i = 0; i < segments.size(); ++i) {
        const bool final = i + 1 == segments.size();
        if (vocab.count(final ? segments[i] : segments[i] + options_.separator))
            checked.push_back(segments[i]);
        else
            split_for_vocabulary(segments[i], final, checked);
    }
    return checked;
}

std::vector<std::string> Bpe::segment_word(const std::string& word) const {
    {
        std::lock_guard<std::mutex> lock(cache_mutex_);
        auto it = cache_.find(word);
        if (it != cache_.end()) return it->second;
    }
    // Glossary strings inside the word are cut out first (subword-nmt's isolate_glossary).
    std::vector<std::string> pieces{word};
    for (const std::string& g : options_.glossary) {
        if (g.empty()) continue;
        std::vector<std::string> next;
        for (const std::string& p : pieces) {
            size_t from = 0, at;
            while ((at = p.find(g, from)) != std::string::npos) {
                if (at > from) next.push_back(p.substr(from, at - from));
                next.push_back(g);
                from = at + g.size();
            }
            if (from < p.size()) next.push_back(p.substr(from));
        }
        pieces = std::move(next);
    }
    std::vector<std::string> segments;
    for (const std::string& p : pieces)
        for (std::string& s : encode_piece(p)) segments.push_back(std::move(s));
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cache_.emplace(word, segments);
    return segments;
}

std::vector<std::string> Bpe::segment_words(const std::vector<std::string>& words) const {
    std::vector<std::string> out;
    for (const std::string& w : words) {
        if (w.empty()) continue;
        std::vector<std::string> segments = segment_word(w);
        for (size_t i = 0; i + 1 < segments.size(); ++i)
            out.push_back(segments[i] + options_.separator);
        out.push_back(segments.back());
    }
    return out;
}

std::string Bpe::apply_line(std::string_view line) const {
    if (size_t at = find_invalid_utf8(line); at != std::string::npos)
        throw std::invalid_argument(fmt::format("not valid UTF-8 (bad byte 0x{:02x} at byte {})",
                                                static_cast<unsigned char>(line[at]), at + 1));
    size_t lead = 0;
    while (lead < line.size() && is_line_end(line[lead])) ++lead;
    if (lead == line.size()) return std::string(line);  // only white space: kept as it is
    size_t end = line.size();
    while (end > lead && is_line_end(line[end - 1])) --end;
    std::vector<std::string> words;
    std::string_view middle = line.substr(lead, end - lead);
    while (true) {
        size_t space = middle.find(' ');
        words.emplace_back(middle.substr(0, space));
        if (space == std::string_view::npos) break;
        middle.remove_prefix(space + 1);
    }
    std::string out(line.substr(0, lead));
    std::vector<std::string> tokens = segment_words(words);
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (i > 0) out += ' ';
        out += tokens[i];
    }
    out += line.substr(end);
    return out;
}

std::string undo_bpe(std::string_view line, std::string_view separator) {
    std::string out;
    out.reserve(line.size());
    const size_t n = separator.size();
    for (size_t i = 0; i < line.size();) {
        if (line.substr(i, n) == separator) {
            const bool space_after = i + n < line.size() && line[i + n] == ' ';
            if (space_after) {  // "@@ "
                i += n + 1;
                continue;
            }
            if (i + n == line.size()) break;  // "@@" at the end
        }
        out += line[i++];
    }
    return out;
}

std::unordered_set<std::string> read_bpe_vocabulary(const std::string& path, int64_t threshold) {
    std::string text = read_file(path);
    std::unordered_set<std::string> vocabulary;
    size_t number = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
        ++number;
        size_t end = rest.find('\n');
        std::string_view line = strip_line_ends(rest.substr(0, end));
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
        size_t space = line.find(' ');
        auto bad = [&](const std::string& what) {
            return std::runtime_error(
                fmt::format("{}:{}: {} (expected \"token count\")", path, number, what));
        };
        if (find_invalid_utf8(line) != std::string::npos) throw bad("not valid UTF-8");
        if (space == std::string_view::npos || space == 0 ||
            line.find(' ', space + 1) != std::string_view::npos)
            throw bad(fmt::format("\"{}\" is not two fields", std::string(line.substr(0, 60))));
        std::string count_text(line.substr(space + 1));
        size_t used = 0;
        int64_t count = 0;
        try {
            count = std::stoll(count_text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != count_text.size() || used == 0)
            throw bad(fmt::format("the count \"{}\" is not an integer", count_text));
        if (count >= threshold) vocabulary.emplace(line.substr(0, space));
    }
    return vocabulary;
}

}  // namespace seqgrad
