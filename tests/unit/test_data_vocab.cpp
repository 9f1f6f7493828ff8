// Vocab: building, lookup, encode / decode, JSON files (data/vocab.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/data/vocab.h"

using namespace seqgrad;

namespace {

// A fresh path in the temporary directory (test cases may run in parallel processes).
std::string temp_path(const std::string& stem) {
    return (std::filesystem::temp_directory_path() /
            ("seqgrad_test_" + stem + "_" + std::to_string(std::random_device{}()) + ".json"))
        .string();
}

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

const std::vector<std::vector<std::string>> kData = {
    {"the", "cat", "sat"}, {"the", "dog", "sat"}, {"a", "cat", "ran"}, {"the", "end"}};
// counts: the 3, cat 2, sat 2, a 1, dog 1, end 1, ran 1

}  // namespace

TEST_CASE("reserved ids come first, with their fixed spellings") {
    const Vocab v;
    CHECK(v.size() == 4);
    CHECK(Vocab::PAD == 0);
    CHECK(Vocab::SOS == 1);
    CHECK(Vocab::EOS == 2);
    CHECK(Vocab::UNK == 3);
    CHECK(v.token(Vocab::PAD) == "<pad>");
    CHECK(v.token(Vocab::SOS) == "<sos>");
    CHECK(v.token(Vocab::EOS) == "<eos>");
    CHECK(v.token(Vocab::UNK) == "<unk>");
    CHECK(v.id("<eos>") == Vocab::EOS);
}

TEST_CASE("build orders by frequency, then token, and applies min_freq and max_size") {
    const Vocab all = Vocab::build(kData);
    REQUIRE(all.size() == 11);
    // "cat" and "sat" both occur twice: byte order decides. Then the singletons, sorted.
    const std::vector<std::string> expected = {"the", "cat", "sat", "a", "dog", "end", "ran"};
    for (size_t i = 0; i < expected.size(); ++i) {
        CHECK(all.token(static_cast<int32_t>(4 + i)) == expected[i]);
    }

    VocabOptions frequent;
    frequent.min_freq = 2;
    const Vocab common = Vocab::build(kData, frequent);
    CHECK(common.size() == 7);
    CHECK(common.contains("sat"));
    CHECK_FALSE(common.contains("dog"));

    VocabOptions small;
    small.max_size = 6;  // 4 reserved + 2
    const Vocab tiny = Vocab::build(kData, small);
    CHECK(tiny.size() == 6);
    CHECK(tiny.token(5) == "cat");
    CHECK_FALSE(tiny.contains("sat"));

    small.max_size = 3;
    CHECK_THROWS_AS(Vocab::build(kData, small), std::invalid_argument);
}

TEST_CASE("build does not depend on the order of the data, and skips reserved spellings") {
    auto reversed = kData;
    std::reverse(reversed.begin(), reversed.end());
    CHECK(Vocab::build(reversed) == Vocab::build(kData));
    const Vocab v = Vocab::build({{"<unk>", "x", "<eos>"}});
    CHECK(v.size() == 5);
    CHECK(v.id("<unk>") == Vocab::UNK);
}

TEST_CASE("out-of-vocabulary tokens map to UNK, bad ids throw") {
    const Vocab v = Vocab::build(kData);
    CHECK(v.id("zebra") == Vocab::UNK);
    CHECK_FALSE(v.contains("zebra"));
    CHECK(v.id("the") == 4);
    CHECK_THROWS_WITH_AS(v.token(11), "vocab: id 11 out of range [0, 11)", std::out_of_range);
    CHECK_THROWS_AS(v.token(-1), std::out_of_range);
}

TEST_CASE("encode appends EOS on request, decode strips specials and stops at EOS") {
    const Vocab v = Vocab::build(kData);
    const auto ids = v.encode({"the", "zebra", "sat"}, true);
    CHECK(ids == std::vector<int32_t>{4, Vocab::UNK, 6, Vocab::EOS});
    CHECK(v.encode({"the"}, false) == std::vector<int32_t>{4});

    const std::vector<int32_t> decoded = {Vocab::SOS, 4, Vocab::UNK, 6, Vocab::EOS, 5, Vocab::PAD};
    CHECK(v.decode(decoded, true) == std::vector<std::string>{"the", "<unk>", "sat"});
    CHECK(v.decode(decoded, false) ==
          std::vector<std::string>{"<sos>", "the", "<unk>", "sat", "<eos>", "cat", "<pad>"});
}

TEST_CASE("save and load round-trip a vocabulary through a JSON file") {
    const Vocab v = Vocab::build({{"été", "ça", "\"quoted\"", "back\\slash", "the"}});
    const std::string path = temp_path("vocab_roundtrip");
    v.save(path);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));  // the temporary was renamed away
    const Vocab loaded = Vocab::load(path);
    CHECK(loaded == v);
    CHECK(loaded.id("été") == v.id("été"));
    std::filesystem::remove(path);
}

TEST_CASE("load errors name the file and say what is wrong") {
    const std::string path = temp_path("vocab_bad");
    CHECK(message_of([&] { Vocab::load(path); }) == path + ": no such file");

    write(path, "{\"format\": \"seqgrad-vocab\", \"version\": 1, \"tokens\": [");
    CHECK(message_of([&] { Vocab::load(path); }).rfind(path + ": not valid JSON", 0) == 0);

    write(path, R"({"format": "seqgrad-vocab", "version": 1, "tokens": "abc"})");
    CHECK(message_of([&] { Vocab::load(path); }) ==
          path + ": \"tokens\" must be an array of strings");

    write(path, R"({"format": "seqgrad-vocab", "version": 1,
                    "tokens": ["<pad>", "<sos>", "<unk>", "<eos>", "a"]})");
    CHECK(message_of([&] { Vocab::load(path); }) ==
          path + ": tokens[2] must be \"<eos>\", got \"<unk>\"");

    write(path, R"({"format": "seqgrad-vocab", "version": 1,
                    "tokens": ["<pad>", "<sos>", "<eos>", "<unk>", "a", 7]})");
    CHECK(message_of([&] { Vocab::load(path); }) == path + ": tokens[5] is not a string: 7");

    write(path, R"({"format": "seqgrad-vocab", "version": 1,
                    "tokens": ["<pad>", "<sos>", "<eos>", "<unk>", "a", "a"]})");
    CHECK(message_of([&] { Vocab::load(path); }) == path + ": vocab: duplicate token \"a\"");

    write(path, R"({"format": "something-else", "version": 1, "tokens": []})");
    CHECK(message_of([&] { Vocab::load(path); }) ==
          path + ": \"format\" must be \"seqgrad-vocab\"");
    std::filesystem::remove(path);
}
