// The BPE text pipeline of a run (models/run/task.h, tokenizer "bpe"): codes learned from the
// training split and saved in the run directory, real text back out, no <unk> for characters
// seen in training, the data.* keys, and the eval score lines (apps/cli/commands.h).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "apps/attention/attention_report.h"
#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/data/reversible_tokenizer.h"
#include "seqgrad/models/run/config.h"
#include "seqgrad/models/run/task.h"
#include "temp_dir.h"

using namespace seqgrad;
using nlohmann::json;

namespace {

// A small German -> English corpus (column 0 English, 1 German, as datasets/deu-eng).
const char* kTrain =
    "I'm hungry.\tIch habe Hunger.\n"
    "He is very tired.\tEr ist sehr müde.\n"
    "We are tired, but happy.\tWir sind müde, aber glücklich.\n"
    "She is reading a book.\tSie liest ein Buch.\n"
    "They are reading books.\tSie lesen Bücher.\n"
    "I'm reading.\tIch lese.\n"
    "He is hungry!\tEr hat Hunger!\n";
const char* kValid = "We are hungry.\tWir haben Hunger.\n";

// A fresh folder of its own in this process's temporary folder, which goes when the process
// ends (the pid in its name: several checkouts' suites may run at once, and ctest runs this
// file's cases side by side).
std::string temp_dir(const std::string& name) {
    static const testing::TempDir suite("task_bpe");
    const std::string dir = suite.file(name);
    std::filesystem::remove_all(dir);
    return dir;
}

Config bpe_config(const std::string& dir, json data_overrides = json::object()) {
    std::filesystem::create_directories(dir);
    write_file_atomically(dir + "/train.tsv", kTrain);
    write_file_atomically(dir + "/valid.tsv", kValid);
    json data = {{"task", "tsv"},      {"train", "train.tsv"}, {"valid", "valid.tsv"},
                 {"tokenizer", "bpe"}, {"bpe_merges", 40},     {"source_column", 1}};
    for (auto it = data_overrides.begin(); it != data_overrides.end(); ++it)
        data[it.key()] = it.value();
    if (data["tokenizer"] != "bpe") data.erase("bpe_merges");  // an error with char / word
    Config c = Config::from_json({{"data", data}}, dir + "/config.json");
    c.base_dir = dir;
    return c;
}

bool has_unknown(const Vocab& vocab, const std::vector<std::string>& tokens) {
    for (const std::string& t : tokens)
        if (!vocab.contains(t)) return true;
    return false;
}

}  // namespace

TEST_CASE("config: tokenizer bpe is cased by default, and bad bpe keys name the key") {
    Config c = Config::from_json({{"data", {{"tokenizer", "bpe"}}}});
    CHECK_FALSE(c.data.lowercase);
    CHECK(c.data.bpe_merges == 8000);
    CHECK(c.data.bpe_joint);
    CHECK(Config::from_json(json::object()).data.lowercase);  // char / word: unchanged default
    CHECK(
        Config::from_json({{"data", {{"tokenizer", "bpe"}, {"lowercase", true}}}}).data.lowercase);
    auto error_of = [](const json& j) {
        try {
            Config::from_json(j, "c.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of({{"data", {{"tokenizer", "bpe"}, {"bpe_merges", 0}}}}) ==
          "c.json: data.bpe_merges: expected a positive integer, got 0");
    CHECK(error_of({{"data", {{"tokenizer", "bpe"}, {"bpe_merges", -5}}}}) ==
          "c.json: data.bpe_merges: expected a positive integer, got -5");
    CHECK(error_of({{"data", {{"tokenizer", "bpe"}, {"separate_punctuation", true}}}})
              .find("data.separate_punctuation: must be false") != std::string::npos);
    Config again = Config::from_json(c.to_json());
    CHECK(again.to_json() == c.to_json());
}

TEST_CASE("bpe pipeline: real text in, the same text out, subword tokens in between") {
    Task task = prepare_task(bpe_config(temp_dir("task_bpe_roundtrip")), /*quiet=*/true);
    REQUIRE(task.pipeline.reversible());
    for (const char* text : {"Ich habe Hunger.", "Wir sind müde, aber glücklich.",
                             "Sie liest Bücher!", "Er ist (sehr) müde..."}) {
        std::vector<std::string> tokens = task.pipeline.source_tokens(text);
        CHECK(task.pipeline.join(tokens) == text);
        CHECK(task.pipeline.join(task.pipeline.tokens(text)) == text);
    }
    // Codes were learned: frequent words are single tokens, punctuation carries the joiner.
    std::vector<std::string> tokens = task.pipeline.source_tokens("Ich habe Hunger.");
    CHECK(tokens.back() == std::string(kJoiner) + ".");
}

TEST_CASE("bpe pipeline: a word made of characters seen in training is never <unk>") {
    Task task = prepare_task(bpe_config(temp_dir("task_bpe_unk")), /*quiet=*/true);
    // Unseen words, every character of which occurs in the training text of their side.
    for (const char* text : {"Büchersucher lasen müheless.", "Hungrig, glücklich!"}) {
        INFO(text);
        CHECK_FALSE(has_unknown(task.source_vocab, task.pipeline.source_tokens(text)));
    }
    for (const char* text : {"Tired readers, happy books!", "Hungriest."}) {
        INFO(text);
        CHECK_FALSE(has_unknown(task.target_vocab, task.pipeline.tokens(text)));
    }
    // A character never seen on that side is <unk>, as it must be.
    CHECK(has_unknown(task.source_vocab, task.pipeline.source_tokens("Zoë")));
    CHECK(has_unknown(task.target_vocab, task.pipeline.tokens("müde")));
}

TEST_CASE("bpe codes are saved in the run directory and give the same tokens when loaded") {
    for (bool joint : {true, false}) {
        INFO("joint " << joint);
        const std::string dir = temp_dir(joint ? "saved_joint" : "saved_separate");
        Config config = bpe_config(dir, {{"bpe_joint", joint}});
        Task task = prepare_task(config, /*quiet=*/true);
        task.source_vocab.save(dir + "/vocab.source.json");
        task.target_vocab.save(dir + "/vocab.target.json");
        save_bpe_codes(task.pipeline, dir);
        CHECK(std::filesystem::exists(dir + (joint ? "/bpe.codes" : "/bpe.source.codes")));
        CHECK(BpeCodes::load(dir + (joint ? "/bpe.codes" : "/bpe.target.codes")).size() > 0);
        CHECK(read_file(dir + (joint ? "/bpe.codes" : "/bpe.source.codes"))
                  .rfind("#version: 0.2\n", 0) == 0);
        Task loaded = prepare_task_with_vocabs(config, dir, /*load_data=*/false);
        for (const char* text : {"Ich habe Hunger.", "Büchersucher lasen müheless."}) {
            CHECK(loaded.pipeline.source_tokens(text) == task.pipeline.source_tokens(text));
            CHECK(loaded.pipeline.tokens(text) == task.pipeline.tokens(text));
        }
        CHECK(loaded.source_vocab == task.source_vocab);
    }
}

TEST_CASE("bpe: a missing or broken codes file in the run directory is an error naming it") {
    const std::string dir = temp_dir("broken");
    Config config = bpe_config(dir);
    Task task = prepare_task(config, /*quiet=*/true);
    task.source_vocab.save(dir + "/vocab.source.json");
    task.target_vocab.save(dir + "/vocab.target.json");
    std::filesystem::remove(dir + "/bpe.codes");
    CHECK_THROWS_WITH(prepare_task_with_vocabs(config, dir, false), doctest::Contains("bpe.codes"));
    write_file_atomically(dir + "/bpe.codes", "#version: 0.2\nlonely\n");
    CHECK_THROWS_WITH(prepare_task_with_vocabs(config, dir, false),
                      doctest::Contains("bpe.codes:2:"));
}

TEST_CASE("old char and word pipelines are unchanged: normalised text, no codes needed") {
    Config config =
        bpe_config(temp_dir("task_word"),
                   {{"tokenizer", "word"}, {"lowercase", true}, {"separate_punctuation", true}});
    Task task = prepare_task(config, true);
    CHECK_FALSE(task.pipeline.reversible());
    CHECK(task.pipeline.join(task.pipeline.tokens("Ich habe Hunger.")) == "ich habe hunger .");
    CHECK(task.pipeline.source_tokens("Ich habe Hunger.") ==
          std::vector<std::string>{"ich", "habe", "hunger", "."});
}

TEST_CASE("eval scores: raw references first, normalised scores only for normalising pipelines") {
    Task bpe = prepare_task(bpe_config(temp_dir("task_eval_bpe")), true);
    const std::string sentence = "We are tired, but happy: she is reading a book.";
    std::string out = eval_scores_text(bpe, "BPE", {sentence}, {sentence});
    CHECK(out.rfind("sacreBLEU on the detokenised, cased output against the raw references:\n"
                    "BLEU = 100.00",
                    0) == 0);
    CHECK(out.find("case:mixed|eff:no|tok:13a") != std::string::npos);
    CHECK(out.find("chrF2 = 100.00") != std::string::npos);
    CHECK(out.find("normalised text") == std::string::npos);

    Task word = prepare_task(
        bpe_config(temp_dir("task_eval_word"),
                   {{"tokenizer", "word"}, {"lowercase", true}, {"separate_punctuation", true}}),
        true);
    out = eval_scores_text(word, "lower-cased",
                           {"we are tired , but happy : she is reading a book ."}, {sentence});
    const size_t raw = out.find("against the raw references");
    const size_t normalised = out.find("on normalised text");
    REQUIRE(raw != std::string::npos);
    REQUIRE(normalised != std::string::npos);
    CHECK(raw < normalised);
    // Against the raw reference the case differs; normalised alike, the output is perfect.
    CHECK(out.substr(raw, normalised - raw).find("BLEU = 100.00") == std::string::npos);
    CHECK(out.substr(normalised).find("BLEU = 100.00") != std::string::npos);
}

TEST_CASE("eval --metrics all: each definition on its own labelled line, in both sections") {
    Task word = prepare_task(
        bpe_config(temp_dir("task_eval_metrics"),
                   {{"tokenizer", "word"}, {"lowercase", true}, {"separate_punctuation", true}}),
        true);
    const std::string out = eval_scores_text(word, "lower-cased", {"we are tired , but happy ."},
                                             {"We are tired, but happy."}, "all");
    const size_t normalised = out.find("on normalised text");
    REQUIRE(normalised != std::string::npos);
    for (const char* line :
         {"\nBLEU cased 13a          BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|",
          "\nBLEU lower-cased        BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|",
          "\nBLEU intl               BLEU|nrefs:1|case:mixed|eff:no|tok:intl|smooth:exp|",
          "\nBLEU tutorial protocol  BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:none|",
          "\nchrF2                   chrF2|nrefs:1|",
          "\nchrF++                  chrF2++|nrefs:1|"}) {
        CAPTURE(line);
        CHECK(out.find(line) < normalised);
        CHECK(out.find(line, normalised) != std::string::npos);
    }
    // Lower-cased, the output matches the raw reference: case:lc scores 100, cased 13a does not.
    CHECK(out.find("case:lc|eff:no|tok:13a|smooth:exp|version:2.x-seqgrad = 100.00") < normalised);
    CHECK(out.find("case:mixed|eff:no|tok:13a|smooth:exp|version:2.x-seqgrad = 100.00") >
          normalised);
    CHECK_THROWS_WITH_AS(eval_scores_text(word, "", {"a"}, {"a"}, "bleu,ter"),
                         doctest::Contains("--metrics: unknown metric \"ter\""), Error);
}

TEST_CASE("the share of sentences with <unk>, before (word) and after (BPE)") {
    std::vector<SentencePair> test{{"Ich lese Bücher.", "I'm reading books."},
                                   {"Büchersucher lasen.", "Tired readers read."}};
    Task bpe = prepare_task(bpe_config(temp_dir("task_unk_bpe")), true);
    CHECK(unknown_share_text(bpe, test).find("0 of 2 sources (0.0%), 0 of 2 references") !=
          std::string::npos);
    Task word = prepare_task(
        bpe_config(temp_dir("task_unk_word"),
                   {{"tokenizer", "word"}, {"lowercase", true}, {"separate_punctuation", true}}),
        true);
    CHECK(unknown_share_text(word, test).find("1 of 2 sources (50.0%), 1 of 2 references") !=
          std::string::npos);
}

TEST_CASE("attention over subwords merges into words: columns summed, rows averaged") {
    const std::string J(kJoiner);
    std::vector<std::string> source{"Hun@@", "ger", J + ".", "<eos>"};
    std::vector<std::string> output{"hun@@", "gry", "<eos>"};
    std::vector<std::vector<double>> w{
        {0.5, 0.3, 0.1, 0.1}, {0.1, 0.7, 0.1, 0.1}, {0.0, 0.0, 0.2, 0.8}};
    WordAttention m = merge_subword_attention(source, output, w);
    CHECK(m.source_words == std::vector<std::string>{"Hunger", ".", "<eos>"});
    CHECK(m.output_words == std::vector<std::string>{"hungry", "<eos>"});
    REQUIRE(m.weights.size() == 2);
    CHECK(m.weights[0][0] == doctest::Approx(0.8));  // (0.8 + 0.8) / 2
    CHECK(m.weights[0][1] == doctest::Approx(0.1));
    CHECK(m.weights[0][2] == doctest::Approx(0.1));
    CHECK(m.weights[1][2] == doctest::Approx(0.8));
    for (const auto& row : m.weights) {
        double sum = 0;
        for (double x : row) sum += x;
        CHECK(sum == doctest::Approx(1.0));
    }
    CHECK_THROWS_AS(merge_subword_attention(source, {"a"}, w), std::invalid_argument);
}

TEST_CASE("the shipped BPE configs parse, and point at files that exist") {
    for (const char* name : {"deu-eng.json", "deu-eng-word.json", "eng-fra-bpe.json"}) {
        INFO(name);
        Config c = Config::load(std::string(SEQGRAD_SOURCE_DIR) + "/configs/" + name);
        for (const std::string& path : {c.data.train, c.data.valid, c.data.test})
            CHECK(std::filesystem::exists(c.resolve(path)));
        CHECK(c.data.source_column == 1);
    }
    Config bpe = Config::load(std::string(SEQGRAD_SOURCE_DIR) + "/configs/deu-eng.json");
    CHECK(bpe.data.tokenizer == "bpe");
    CHECK_FALSE(bpe.data.lowercase);
    CHECK(bpe.model.bidirectional);
}

TEST_CASE("bpe pipeline round trip over every line of the shipped corpora") {
    // Codes learned from the small corpus above split most of these words into short pieces
    // and many characters are unknown: the text must come back all the same.
    Task task = prepare_task(bpe_config(temp_dir("task_bpe_corpora")), /*quiet=*/true);
    size_t checked = 0;
    for (const char* name : {"deu-eng/train.tsv", "deu-eng/test.tsv", "eng-fra/test.tsv"}) {
        const std::string path = std::string(SEQGRAD_SOURCE_DIR) + "/datasets/" + name;
        CorpusReadResult corpus = read_parallel_corpus(path);
        for (const SentencePair& p : corpus.pairs) {
            for (const std::string& text : {p.source, p.target}) {
                const std::string back = task.pipeline.join(task.pipeline.source_tokens(text));
                if (back != reversible_normal_form(text)) {
                    FAIL_CHECK(path << ":" << p.line << ": \"" << text << "\" -> \"" << back
                                    << "\"");
                    return;
                }
                ++checked;
            }
        }
    }
    CHECK(checked > 18000);
}

TEST_CASE("data.bad_lines skip: every skipped line, split by split, goes into skipped_lines.tsv") {
    const std::string dir = temp_dir("skipped_lines");
    Config c = bpe_config(dir, {{"bad_lines", "skip"}, {"test", "test.tsv"}});
    write_file_atomically(dir + "/train.tsv",
                          std::string(kTrain) + "A \"quoted\ttab\".\tEin Satz.\n");
    write_file_atomically(dir + "/valid.tsv", std::string(kValid) + "\tLeer.\n");
    write_file_atomically(dir + "/test.tsv",
                          "I'm tired.\tIch bin m\xC3\xBC"
                          "de.\nbad\xFF\tx\n");
    const Task task = prepare_task(c, /*quiet=*/true);
    CHECK(task.train.size() == 7);
    CHECK(task.valid.size() == 1);
    CHECK(task.test.size() == 1);
    REQUIRE(task.skipped.size() == 3);
    CHECK(task.skipped[0].split == "train");
    CHECK(task.skipped[0].bad.line == 8);
    CHECK(task.skipped[1].split == "valid");
    CHECK(task.skipped[2].split == "test");
    save_skipped_lines(task, dir);
    CHECK(read_file(dir + "/skipped_lines.tsv") ==
          "split\tfile\tline\treason\n"
          "train\t" +
              dir +
              "/train.tsv\t8\t3 tab-separated columns, expected 2 (a tab inside a "
              "sentence?)\n"
              "valid\t" +
              dir +
              "/valid.tsv\t2\tempty target side (column 1)\n"
              "test\t" +
              dir + "/test.tsv\t2\tinvalid UTF-8 at byte 4 of the line\n");

    // A later run that skips nothing removes the list of an earlier one.
    Config clean = bpe_config(dir);
    const Task clean_task = prepare_task(clean, /*quiet=*/true);
    CHECK(clean_task.skipped.empty());
    save_skipped_lines(clean_task, dir);
    CHECK_FALSE(std::filesystem::exists(dir + "/skipped_lines.tsv"));

    // By default a bad line is an error that names data.bad_lines; "fail" is an older name.
    const Config strict = bpe_config(dir, {{"valid", "bad_valid.tsv"}});
    write_file_atomically(dir + "/bad_valid.tsv", std::string(kValid) + "\tLeer.\n");
    CHECK_THROWS_WITH(
        prepare_task(strict, true),
        doctest::Contains("bad_valid.tsv:2: empty target side (column 1); to leave bad "
                          "lines out, set data.bad_lines to \"skip\""));
    CHECK(bpe_config(dir, {{"bad_lines", "fail"}}).data.bad_lines == "error");
    std::filesystem::remove_all(dir);
}
