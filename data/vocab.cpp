#include "seqgrad/data/vocab.h"

#include <algorithm>
#include <stdexcept>

#include "seqgrad/data/file_io.h"

namespace seqgrad {

namespace {

constexpr const char* kFormat = "seqgrad-vocab";
constexpr int kVersion = 1;

bool is_special(std::string_view token) {
    return token == Vocab::pad_token || token == Vocab::sos_token || token == Vocab::eos_token ||
           token == Vocab::unk_token;
}

}  // namespace

Vocab::Vocab() {
    for (std::string_view special : {pad_token, sos_token, eos_token, unk_token}) {
        add(std::string(special));
    }
}

void Vocab::add(const std::string& token) {
    ids_.emplace(token, static_cast<int32_t>(tokens_.size()));
    tokens_.push_back(token);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sequences,
                   const VocabOptions& options) {
    if (options.max_size != 0 && options.max_size < static_cast<size_t>(num_special)) {
        throw std::invalid_argument("vocab max_size must be 0 (no limit) or at least 4, got " +
                                    std::to_string(options.max_size));
    }
    std::unordered_map<std::string, size_t> counts;
    for (const auto& sequence : sequences) {
        for (const auto& token : sequence) ++counts[token];
    }
    std::vector<std::pair<std::string, size_t>> ranked;
    for (auto& [token, count] : counts) {
        if (count >= options.min_freq && !is_special(token)) ranked.emplace_back(token, count);
    }
    // Frequency descending, then token ascending: a total order, so the result is unique.
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    Vocab vocab;
    for (const auto& entry : ranked) {
        if (options.max_size != 0 && vocab.size() >= options.max_size) break;
        vocab.add(entry.first);
    }
    return vocab;
}

Vocab Vocab::from_tokens(const std::vector<std::string>& tokens) {
    Vocab vocab;
    for (const auto& token : tokens) {
        if (token.empty()) throw std::invalid_argument("vocab: empty token");
        if (vocab.ids_.count(token) != 0) {
            throw std::invalid_argument("vocab: duplicate token \"" + token + "\"");
        }
        vocab.add(token);
    }
    return vocab;
}

int32_t Vocab::id(std::string_view token) const {
    auto it = ids_.find(std::string(token));
    return it == ids_.end() ? UNK : it->second;
}

bool Vocab::contains(std::string_view token) const {
    return ids_.count(std::string(token)) != 0;
}

const std::string& Vocab::token(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= tokens_.size()) {
        throw std::out_of_range("vocab: id " + std::to_string(id) + " out of range [0, " +
                                std::to_string(tokens_.size()) + ")");
    }
    return tokens_[static_cast<size_t>(id)];
}

std::vector<int32_t> Vocab::encode(const std::vector<std::string>& tokens, bool add_eos) const {
    std::vector<int32_t> ids;
    ids.reserve(tokens.size() + (add_eos ? 1 : 0));
    for (const auto& t : tokens) ids.push_back(id(t));
    if (add_eos) ids.push_back(EOS);
    return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int32_t>& ids, bool strip_special) const {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t i : ids) {
        if (strip_special) {
            if (i == EOS) break;
            if (i == PAD || i == SOS) continue;
        }
        tokens.push_back(token(i));
    }
    return tokens;
}

nlohmann::json Vocab::to_json() const {
    return {{"format", kFormat}, {"version", kVersion}, {"tokens", tokens_}};
}

Vocab Vocab::from_json(const nlohmann::json& json, const std::string& origin) {
    auto fail = [&](const std::string& what) { throw std::runtime_error(origin + ": " + what); };
    if (!json.is_object()) fail("expected a JSON object with \"format\" and \"tokens\"");
    if (!json.contains("format") || json["format"] != kFormat) {
        fail(std::string("\"format\" must be \"") + kFormat + "\"");
    }
    if (!json.contains("version") || json["version"] != kVersion) {
        fail("unsupported \"version\" (this program reads version " + std::to_string(kVersion) +
             ")");
    }
    if (!json.contains("tokens") || !json["tokens"].is_array()) {
        fail("\"tokens\" must be an array of strings");
    }
    const auto& array = json["tokens"];
    if (array.size() < static_cast<size_t>(num_special)) {
        fail("\"tokens\" must start with the 4 reserved tokens, it has only " +
             std::to_string(array.size()) + " entries");
    }
    std::vector<std::string> tokens;
    for (size_t i = 0; i < array.size(); ++i) {
        if (!array[i].is_string()) {
            fail("tokens[" + std::to_string(i) + "] is not a string: " + array[i].dump());
        }
        tokens.push_back(array[i].get<std::string>());
    }
    const Vocab reserved;
    for (int32_t i = 0; i < num_special; ++i) {
        if (tokens[static_cast<size_t>(i)] != reserved.tokens_[static_cast<size_t>(i)]) {
            fail("tokens[" + std::to_string(i) + "] must be \"" +
                 reserved.tokens_[static_cast<size_t>(i)] + "\", got \"" +
                 tokens[static_cast<size_t>(i)] + "\"");
        }
    }
    try {
        return from_tokens(std::vector<std::string>(tokens.begin() + num_special, tokens.end()));
    } catch (const std::invalid_argument& e) {
        fail(e.what());
    }
    return {};  // not reached: fail() throws
}

void Vocab::save(const std::string& path) const {
    write_file_atomically(path, to_json().dump(1) + "\n");
}

Vocab Vocab::load(const std::string& path) {
    const std::string text = read_file(path);
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
        throw std::runtime_error(path + ": not valid JSON: " + e.what());
    }
    try {
        return from_json(json, path);
    } catch (const nlohmann::json::exception& e) {  // a check missed: still name the file
        throw std::runtime_error(path + ": not a vocabulary file: " + e.what());
    }
}

}  // namespace seqgrad
