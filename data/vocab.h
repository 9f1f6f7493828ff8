// Vocab: the two-way mapping between tokens and integer ids.
//
// Ids 0..3 are reserved, in this order, for the special tokens every sequence model needs:
//   PAD = 0 "<pad>"  fills batches up to a common length (the loss ignores it)
//   SOS = 1 "<sos>"  the first decoder input
//   EOS = 2 "<eos>"  ends every target sequence
//   UNK = 3 "<unk>"  stands for any token not in the vocabulary
// Real tokens follow from id 4, most frequent first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace seqgrad {

/// Limits for Vocab::build().
struct VocabOptions {
    /// A token must occur at least this often in the data to get an id.
    size_t min_freq = 1;
    /// The largest vocabulary, counting the four reserved tokens (so it is the size of the
    /// embedding table and of the output layer); 0 means no limit. Must be 0 or >= 4.
    size_t max_size = 0;
};

class Vocab {
  public:
    static constexpr int32_t PAD = 0;
    static constexpr int32_t SOS = 1;
    static constexpr int32_t EOS = 2;
    static constexpr int32_t UNK = 3;
    static constexpr int32_t num_special = 4;
    static constexpr std::string_view pad_token = "<pad>";
    static constexpr std::string_view sos_token = "<sos>";
    static constexpr std::string_view eos_token = "<eos>";
    static constexpr std::string_view unk_token = "<unk>";

    /// A vocabulary holding only the four reserved tokens.
    Vocab();

    /// The vocabulary of `sequences`: tokens occurring at least options.min_freq times, most
    /// frequent first, ties broken by token (byte order) so the result never depends on hash
    /// order or input order; cut at options.max_size. A token spelled like a reserved one
    /// ("<unk>") is not added again: it already has its id.
    static Vocab build(const std::vector<std::vector<std::string>>& sequences,
                       const VocabOptions& options = {});

    /// A vocabulary with exactly these tokens after the reserved ones, in this order.
    /// Throws std::invalid_argument on a duplicate or an empty token.
    static Vocab from_tokens(const std::vector<std::string>& tokens);

    /// The id of `token`; UNK if it is not in the vocabulary.
    int32_t id(std::string_view token) const;
    /// True if `token` has its own id.
    bool contains(std::string_view token) const;
    /// The token with id `id`; throws std::out_of_range naming the id and the size.
    const std::string& token(int32_t id) const;
    /// The number of ids, reserved ones included.
    size_t size() const { return tokens_.size(); }

    /// The ids of `tokens`, with EOS appended if `add_eos`.
    std::vector<int32_t> encode(const std::vector<std::string>& tokens, bool add_eos) const;
    /// The tokens of `ids`. With `strip_special`, PAD and SOS are dropped and decoding stops
    /// at the first EOS (what a decoder produced after it is not part of the output); UNK is
    /// always kept, as "<unk>", since it stands for a real word.
    std::vector<std::string> decode(const std::vector<int32_t>& ids, bool strip_special) const;

    /// {"format": "seqgrad-vocab", "version": 1, "tokens": [...all tokens in id order...]}
    nlohmann::json to_json() const;
    /// The inverse of to_json(). Throws std::runtime_error starting with `origin` (a file name,
    /// say) and saying what is wrong.
    static Vocab from_json(const nlohmann::json& json, const std::string& origin = "vocab");

    /// Writes to_json() to `path` atomically (temporary file, then rename).
    void save(const std::string& path) const;
    /// Reads a file written by save(). Errors name the file and what is wrong with it.
    static Vocab load(const std::string& path);

    bool operator==(const Vocab& other) const { return tokens_ == other.tokens_; }
    bool operator!=(const Vocab& other) const { return !(*this == other); }

  private:
    void add(const std::string& token);

    std::vector<std::string> tokens_;
    std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace seqgrad
