// Learning BPE merges (data/bpe.h): word counts, then merge the most frequent pair N times.
#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <stdexcept>

#include "seqgrad/data/bpe.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

void WordCounts::add(const std::string& word, int64_t count) {
    auto [it, inserted] = index_.emplace(word, words_.size());
    if (inserted) words_.emplace_back(word, 0);
    words_[it->second].second += count;
}

void WordCounts::add_line(std::string_view line, const std::string& name, size_t line_number) {
    if (size_t at = find_invalid_utf8(line); at != std::string::npos)
        throw std::runtime_error(
            fmt::format("{}:{}: not valid UTF-8 (bad byte 0x{:02x} at byte {})", name, line_number,
                        static_cast<unsigned char>(line[at]), at + 1));
    std::string_view rest = strip_line_ends(line);
    while (!rest.empty()) {
        size_t space = rest.find(' ');
        std::string_view word = rest.substr(0, space);
        if (!word.empty()) add(std::string(word));
        if (space == std::string_view::npos) break;
        rest.remove_prefix(space + 1);
    }
}

void WordCounts::add_lines(std::istream& in, const std::string& name) {
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) add_line(line, name, number);
}

std::vector<std::pair<std::string, int64_t>> WordCounts::by_frequency() const {
    std::vector<std::pair<std::string, int64_t>> sorted = words_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return sorted;
}

namespace {

// The learner's state. Symbols are interned strings (id = index into `symbols`); a pair of ids
// packs into one 64-bit key.
class Learner {
  public:
    explicit Learner(const WordCounts& counts) {
        for (const auto& [word, count] : counts.words()) {
            std::u32string chars = decode_utf8(word);
            std::vector<int32_t> ids;
            for (size_t i = 0; i < chars.size(); ++i) {
                std::string s;
                append_utf8(s, chars[i]);
                if (i + 1 == chars.size()) s += "</w>";
                ids.push_back(intern(s));
            }
            words_.push_back(std::move(ids));
            freqs_.push_back(count);
        }
        stamp_.assign(words_.size(), -1);
        for (size_t w = 0; w < words_.size(); ++w) add_pairs(int32_t(w), +1, /*index_all=*/true);
        for (const auto& [key, count] : pair_count_) push(key);
    }

    BpeLearnResult run(const BpeLearnOptions& options) {
        BpeLearnResult result;
        for (int m = 0; m < options.num_merges; ++m) {
            uint64_t best = 0;
            int64_t count = pop_best(best);
            if (count < options.min_frequency) {
                result.stopped_early = true;
                break;
            }
            result.merges.push_back({symbols_[left(best)], symbols_[right(best)]});
            merge(best, m);
        }
        return result;
    }

  private:
    static uint64_t key(int32_t a, int32_t b) {
        return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
    }
    static int32_t left(uint64_t k) { return int32_t(k >> 32); }
    static int32_t right(uint64_t k) { return int32_t(k & 0xffffffffu); }

    int32_t intern(const std::string& s) {
        auto [it, inserted] = symbol_id_.emplace(s, int32_t(symbols_.size()));
        if (inserted) symbols_.push_back(s);
        return it->second;
    }

    // Adds (sign +1) or removes (-1) the pairs of word w, weighted by its frequency, and notes
    // which counts changed. New pairs that contain `only_with` (or all, with index_all) get w
    // in their list of words.
    void add_pairs(int32_t w, int sign, bool index_all, int32_t only_with = -1) {
        const std::vector<int32_t>& s = words_[size_t(w)];
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            uint64_t k = key(s[i], s[i + 1]);
            pair_count_[k] += sign * freqs_[size_t(w)];
            if (sign > 0 && (index_all || s[i] == only_with || s[i + 1] == only_with))
                words_with_[k].push_back(w);
            if (!index_all) changed_.push_back(k);
        }
    }

    // Heap entries are (count, pair) snapshots; an entry whose count is no longer the pair's
    // count is stale and skipped when it reaches the top (lazy deletion).
    struct Entry {
        int64_t count;
        uint64_t pair;
    };
    struct Lower {
        const Learner* self;
        // a < b: lower count, or equal count and lexicographically smaller (left, right).
        bool operator()(const Entry& a, const Entry& b) const {
            if (a.count != b.count) return a.count < b.count;
            const std::string& al = self->symbols_[size_t(left(a.pair))];
            const std::string& bl = self->symbols_[size_t(left(b.pair))];
            if (int c = al.compare(bl); c != 0) return c < 0;
            return self->symbols_[size_t(right(a.pair))] < self->symbols_[size_t(right(b.pair))];
        }
    };

    void push(uint64_t k) {
        int64_t c = pair_count_[k];
        if (c > 0) heap_.push({c, k});
    }

    // The count of the best pair (0 when there is none), and the pair in `best`.
    int64_t pop_best(uint64_t& best) {
        while (!heap_.empty()) {
            Entry e = heap_.top();
            heap_.pop();
            auto it = pair_count_.find(e.pair);
            if (it == pair_count_.end() || it->second != e.count) continue;  // stale
            best = e.pair;
            return e.count;
        }
        return 0;
    }

    // Replaces every occurrence of `pair` by its merged symbol, left to right, in every word
    // holding it, and updates the counts of the pairs that changed.
    void merge(uint64_t pair, int merge_number) {
        const int32_t a = left(pair), b = right(pair);
        const int32_t merged = intern(symbols_[size_t(a)] + symbols_[size_t(b)]);
        std::vector<int32_t> candidates = std::move(words_with_[pair]);
        words_with_.erase(pair);
        changed_.clear();
        for (int32_t w : candidates) {
            if (stamp_[size_t(w)] == merge_number) continue;  // listed twice
            stamp_[size_t(w)] = merge_number;
            std::vector<int32_t>& s = words_[size_t(w)];
            bool found = false;
            for (size_t i = 0; i + 1 < s.size() && !found; ++i) found = s[i] == a && s[i + 1] == b;
            if (!found) continue;  // the pair was merged away in this word by an earlier merge
            add_pairs(w, -1, false);
            std::vector<int32_t> out;
            out.reserve(s.size());
            for (size_t i = 0; i < s.size(); ++i) {
                if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
                    out.push_back(merged);
                    ++i;
                } else {
                    out.push_back(s[i]);
                }
            }
            s = std::move(out);
            add_pairs(w, +1, false, merged);
        }
        std::sort(changed_.begin(), changed_.end());
        changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
        for (uint64_t k : changed_) {
            auto it = pair_count_.find(k);
            if (it != pair_count_.end() && it->second == 0) {
                pair_count_.erase(it);
                continue;
            }
            push(k);
        }
    }

    std::vector<std::string> symbols_;
    std::unordered_map<std::string, int32_t> symbol_id_;
    std::vector<std::vector<int32_t>> words_;  // each word as symbol ids
    std::vector<int64_t> freqs_;
    std::vector<int> stamp_;  // the last merge that visited each word
    std::unordered_map<uint64_t, int64_t> pair_count_;
    std::unordered_map<uint64_t, std::vector<int32_t>> words_with_;  // may hold stale words
    std::vector<uint64_t> changed_;
    std::priority_queue<Entry, std::vector<Entry>, Lower> heap_{Lower{this}};
};

}  // namespace

BpeLearnResult learn_bpe(const WordCounts& counts, const BpeLearnOptions& options) {
    if (options.num_merges <= 0)
        throw std::invalid_argument(fmt::format(
            "learn_bpe: the number of merges must be positive, got {}", options.num_merges));
    if (options.min_frequency < 1)
        throw std::invalid_argument(fmt::format(
            "learn_bpe: min_frequency must be at least 1, got {}", options.min_frequency));
    Learner learner(counts);
    return learner.run(options);
}

}  // namespace seqgrad
