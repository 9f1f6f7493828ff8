// A Transformer on input longer than it reads: `seqgrad translate`, `eval` and `explore` handle
// one over-long line on its own (truncated by default, or refused with --long-input refuse, the
// exit status 1), the other lines are translated; sinusoidal positions read past the trained
// length with a note; a learned table shorter than data.max_source_len is a config error.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "apps/cli/commands.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"
#include "temp_dir.h"

using namespace seqgrad;

namespace {

nlohmann::json tiny_config(const std::string& run_dir, const std::string& positional) {
    return {{"data",
             {{"task", "dates"},
              {"dates_train", 200},
              {"dates_valid", 20},
              {"dates_test", 20},
              {"max_source_len", 40},
              {"max_target_len", 12}}},
            {"model",
             {{"kind", "transformer"},
              {"layers", 1},
              {"d_model", 8},
              {"heads", 2},
              {"ff_size", 16},
              {"positional", positional},
              {"max_positions", 40}}},
            {"train",
             {{"batch_size", 16}, {"max_steps", 3}, {"log_every", 5}, {"max_valid_decode", 5}}},
            {"decode", {{"max_length", 12}}},
            {"output", {{"run_dir", run_dir}, {"explore", 0}}}};
}

std::string tiny_run(const std::string& run_dir, const std::string& positional) {
    TrainOptions quiet;
    quiet.quiet = true;
    train(Config::from_json(tiny_config(run_dir, positional)), quiet);
    return run_dir;
}

// Runs a command with stdout and stderr captured; returns its exit status.
struct Captured {
    int status = -1;
    std::string out, err;
};
Captured run_command(int (*command)(const Argv&), const Argv& args) {
    std::ostringstream out, err;
    std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
    std::fflush(stderr);
    testing::TempDir tmp("long_inputs_stderr");
    const std::string err_path = tmp.file("stderr.txt");
    FILE* saved = fdopen(dup(fileno(stderr)), "w");
    REQUIRE(std::freopen(err_path.c_str(), "w", stderr) != nullptr);
    Captured c;
    try {
        c.status = command(args);
    } catch (...) {
        std::cout.rdbuf(old_out);
        std::fflush(stderr);
        dup2(fileno(saved), fileno(stderr));
        std::fclose(saved);
        throw;
    }
    std::cout.rdbuf(old_out);
    std::fflush(stderr);
    dup2(fileno(saved), fileno(stderr));
    std::fclose(saved);
    c.out = out.str();
    c.err = read_file(err_path);
    return c;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

TEST_CASE("a learned-position Transformer: one over-long line is truncated or refused on its own") {
    testing::TempDir dir("long_inputs");
    const std::string run = tiny_run(dir.file("learned"), "learned");
    const std::string long_line(100, '7');  // 100 characters: 101 ids with <eos>, the table has 40
    const std::string input = dir.file("lines.txt");
    write_file_atomically(input, "march 3 2001\n" + long_line + "\n5/6/1999\n");

    // translate() itself: the others translated, the long one cut or refused, with a note.
    LoadedRun loaded = load_run(run);
    const DecodeOptions greedy = decode_options_from(loaded.config.decode);
    const std::vector<std::string> sources = {"march 3 2001", long_line, "5/6/1999"};
    TranslateExtras truncate;
    const auto cut = translate(*loaded.model, loaded.task, sources, greedy, truncate);
    CHECK(!cut[1].refused);
    CHECK(cut[1].source_tokens.size() == 40);
    CHECK(cut[1].source_tokens.back() == "<eos>");
    CHECK(cut[1].length_note.find("101 tokens") != std::string::npos);
    CHECK(cut[1].length_note.find("truncated") != std::string::npos);
    CHECK(!cut[1].nbest.empty());
    TranslateExtras refuse;
    refuse.long_input = LongInput::refuse;
    const auto refused = translate(*loaded.model, loaded.task, sources, greedy, refuse);
    CHECK(refused[1].refused);
    CHECK(refused[1].nbest.empty());
    CHECK(refused[1].text.empty());
    CHECK(refused[1].length_note.find("model.max_positions") != std::string::npos);
    for (size_t i : {size_t(0), size_t(2)}) {
        CHECK(refused[i].text == cut[i].text);
        CHECK(refused[i].length_note.empty());
        CHECK(!refused[i].nbest.empty());
    }

    SUBCASE("translate: truncated by default, exit status 0, every line printed") {
        const Captured c = run_command(cmd_translate, {run, "--input", input});
        CHECK(c.status == 0);
        const auto out = lines_of(c.out);
        REQUIRE(out.size() == 3);
        CHECK(out[0] == cut[0].text);
        CHECK(out[1] == cut[1].text);
        CHECK(out[2] == cut[2].text);
        CHECK(c.err.find(input + ":2: truncated: 101 tokens") != std::string::npos);
    }
    SUBCASE("translate --long-input refuse: an empty line in its place, exit status 1") {
        const Captured c = run_command(
            cmd_translate, {run, "--input", input, "--long-input", "refuse", "--beam", "2"});
        CHECK(c.status == 1);
        const auto out = lines_of(c.out);
        REQUIRE(out.size() == 3);
        CHECK(!out[0].empty());
        CHECK(out[1].empty());
        CHECK(!out[2].empty());
        CHECK(c.err.find(input + ":2: refused: 101 tokens") != std::string::npos);
        CHECK(c.err.find("1 line refused") != std::string::npos);
    }
    SUBCASE("a bad --long-input value is an error naming the option") {
        CHECK_THROWS_WITH_AS(
            run_command(cmd_translate, {run, "--input", input, "--long-input", "drop"}),
            doctest::Contains("--long-input: expected truncate or refuse"), Error);
    }
    SUBCASE("eval: the long test pair is scored, refused or truncated") {
        const std::string test = dir.file("test.tsv");
        write_file_atomically(test, "march 3 2001\t2001-03-03\n" + long_line +
                                        "\t2001-03-03\n5/6/1999\t1999-05-06\n");
        const std::string hyps = dir.file("hyps.txt");
        Captured c = run_command(cmd_eval, {run, "--test", test, "--out", hyps});
        CHECK(c.status == 0);
        CHECK(c.err.find("test pair 2: truncated") != std::string::npos);
        CHECK(lines_of(read_file(hyps)) ==
              std::vector<std::string>{cut[0].text, cut[1].text, cut[2].text});
        c = run_command(cmd_eval, {run, "--test", test, "--long-input", "refuse", "--out", hyps});
        CHECK(c.status == 1);
        CHECK(c.err.find("test pair 2: refused: 101 tokens") != std::string::npos);
        CHECK(lines_of(read_file(hyps)) == std::vector<std::string>{cut[0].text, "", cut[2].text});
    }
    SUBCASE("eval --test A B: each set scored, then one table naming both") {
        const std::string a = dir.file("first.tsv"), b = dir.file("second.tsv");
        write_file_atomically(a, "march 3 2001\t2001-03-03\n");
        write_file_atomically(b, "5/6/1999\t1999-05-06\n" + long_line + "\t2001-03-03\n");
        std::fflush(stdout);
        const std::string table_path = dir.file("stdout.txt");
        FILE* saved = fdopen(dup(fileno(stdout)), "w");
        REQUIRE(std::freopen(table_path.c_str(), "w", stdout) != nullptr);
        const Captured c = run_command(cmd_eval, {run, "--test", a, b, "--long-input", "refuse"});
        std::fflush(stdout);
        dup2(fileno(saved), fileno(stdout));
        std::fclose(saved);
        CHECK(c.status == 1);  // one pair of the second set refused
        const std::string printed = read_file(table_path);
        const size_t table = printed.find("test set");
        REQUIRE(table != std::string::npos);
        CHECK(printed.find(a + "  ", table) != std::string::npos);
        CHECK(printed.find(b + "  ", table) != std::string::npos);
        CHECK(lines_of(read_file(run + "/hyps.last.beam1.first.txt")).size() == 1);
        CHECK(lines_of(read_file(run + "/hyps.last.beam1.second.txt")) ==
              std::vector<std::string>{cut[2].text, ""});
        CHECK_THROWS_WITH_AS(run_command(cmd_eval, {run, "--test", a, b, "--out", "x.txt"}),
                             doctest::Contains("--out: one file for 2 test sets"), Error);
    }
    SUBCASE("eval --tune-alpha: the validation BLEU's best alpha written into config.json") {
        std::fflush(stdout);
        const std::string printed_path = dir.file("tune.txt");
        FILE* saved = fdopen(dup(fileno(stdout)), "w");
        REQUIRE(std::freopen(printed_path.c_str(), "w", stdout) != nullptr);
        const Captured c = run_command(cmd_eval, {run, "--tune-alpha", "--beam", "2", "--limit",
                                                  "5", "--out", dir.file("h.txt")});
        std::fflush(stdout);
        dup2(fileno(saved), fileno(stdout));
        std::fclose(saved);
        CHECK(c.status == 0);
        const std::string printed = read_file(printed_path);
        CHECK(printed.find("tuning alpha on 5 validation pairs, beam 2") != std::string::npos);
        CHECK(printed.find("alpha 2.0: BLEU") != std::string::npos);
        const double alpha = load_run(run).config.decode.alpha;
        CHECK(printed.find(fmt::format("alpha {:.1f} (validation BLEU", alpha)) !=
              std::string::npos);
        CHECK(printed.find("written to " + run + "/config.json as decode.alpha (was 0.6)") !=
              std::string::npos);
        CHECK_THROWS_WITH_AS(run_command(cmd_eval, {run, "--tune-alpha", "--beam", "1"}),
                             doctest::Contains("--tune-alpha: greedy decoding (beam 1)"), Error);
    }
    SUBCASE("explore: the long sentence truncated into the page, or left out") {
        ExploreRequest request;
        request.run_dir = run;
        request.input = input;
        request.gradients = false;
        request.progress = false;
        request.out = dir.file("page.html");
        ExploreReport report = run_explore(request);
        CHECK(report.sentences == 3);
        CHECK(report.refused == 0);
        request.long_input = "refuse";
        report = run_explore(request);
        CHECK(report.sentences == 2);
        CHECK(report.refused == 1);
    }
}

TEST_CASE("a sinusoidal Transformer reads past its trained length and says so") {
    testing::TempDir dir("long_inputs_sinusoidal");
    const std::string run = tiny_run(dir.file("sinusoidal"), "sinusoidal");
    const std::string input = dir.file("lines.txt");
    write_file_atomically(input, "march 3 2001\n" + std::string(100, '7') + "\n");
    const Captured c = run_command(cmd_translate, {run, "--input", input});
    CHECK(c.status == 0);
    CHECK(lines_of(c.out).size() == 2);
    CHECK(c.err.find(input + ":2: 101 tokens with <eos>, longer than any in training "
                             "(data.max_source_len 40): the sinusoidal positions go past") !=
          std::string::npos);
}

TEST_CASE("config: a learned position table shorter than the training lengths is an error") {
    nlohmann::json j = tiny_config("runs/x", "learned");
    j["data"]["max_source_len"] = 41;
    CHECK_THROWS_WITH_AS(Config::from_json(j, "c.json"),
                         "c.json: model.max_positions 40 is shorter than data.max_source_len 41: "
                         "the learned position table would not reach the longest training "
                         "sentences; raise model.max_positions or lower data.max_source_len",
                         Error);
    j["data"]["max_source_len"] = 40;
    j["data"]["max_target_len"] = 50;
    CHECK_THROWS_WITH_AS(Config::from_json(j, "c.json"),
                         doctest::Contains("model.max_positions 40 is shorter than "
                                           "data.max_target_len 50"),
                         Error);
    j["model"]["positional"] = "sinusoidal";  // no table: any length
    CHECK_NOTHROW(Config::from_json(j, "c.json"));
}
