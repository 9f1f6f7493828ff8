// `seqgrad explore` in a real browser: tiny models are trained, their explore files written, and
// headless Chromium opens each file (--dump-dom after the page's scripts ran). The page records
// what it drew and every error into <pre id="selftest">, which the test reads and compares with
// the data block of the same file (the trace's node count, the attention weights).
//
// Without Chromium the test prints "[seqgrad-skip] ..." and ctest reports it as skipped
// (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt); CI installs Debian's chromium.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli/commands.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/training/trainer.h"

using namespace seqgrad;
namespace fs = std::filesystem;

namespace {

const std::string kHostile = "</script><script>alert(1)</script> <b>&amp; \"quoted\" 'too' & <";

std::string temp_dir(const std::string& name) {
    const fs::path dir =
        fs::temp_directory_path() / ("seqgrad_explore_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// The Chromium binary, or "" when there is none. SEQGRAD_CHROMIUM names another one (or, set to
// a path that does not exist, shows what the test does without a browser).
std::string find_chromium() {
    if (const char* path = std::getenv("SEQGRAD_CHROMIUM")) return fs::exists(path) ? path : "";
    for (const char* name : {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                             "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"})
        if (fs::exists(name)) return name;
    return "";
}

// The DOM of `url` after its scripts ran, from headless Chromium.
std::string dump_dom(const std::string& chromium, const std::string& url, const std::string& work) {
    const std::string profile = work + "/chromium-profile", out = work + "/dom.html";
    fs::remove_all(profile);
    // The flags headless Chromium needs as root on a closed network (no sandbox, no GPU, no
    // background connections that the network would refuse).
    const std::string command = fmt::format(
        "timeout 120 '{}' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
        "--disable-background-networking --disable-component-update --disable-sync "
        "--enable-logging=stderr --v=0 --user-data-dir='{}' --virtual-time-budget=5000 --dump-dom "
        "'{}' > '{}' 2> '{}.log'",
        chromium, profile, url, out, out);
    const int status = std::system(command.c_str());
    INFO("command: " << command << "\nstderr: " << read_file(out + ".log").substr(0, 2000));
    REQUIRE(status == 0);
    return read_file(out);
}

// The text between `begin` and the next `end` after it.
std::string between(const std::string& text, const std::string& begin, const std::string& end) {
    const size_t a = text.find(begin);
    REQUIRE_MESSAGE(a != std::string::npos, "no " << begin);
    const size_t b = text.find(end, a + begin.size());
    REQUIRE(b != std::string::npos);
    return text.substr(a + begin.size(), b - a - begin.size());
}

// Opens `html` at sentence `sentence` and checks what the page drew against its data. `more`: more
// of the URL fragment ("&layer=0&head=1"), which draws another heatmap than beam #1's default.
nlohmann::json check_in_browser(const std::string& chromium, const std::string& html, int sentence,
                                const std::string& view, const std::string& work,
                                const std::string& more = "") {
    const std::string file = read_file(html);
    // Nothing to fetch: no URL of any kind in the file.
    CHECK(file.find("http://") == std::string::npos);
    CHECK(file.find("https://") == std::string::npos);
    const nlohmann::json data = nlohmann::json::parse(
        between(file, "<script id=\"seqgrad-data\" type=\"application/json\">", "</script>"));

    const std::string dom = dump_dom(chromium,
                                     fmt::format("file://{}#sentence={}&view={}{}",
                                                 fs::absolute(html).string(), sentence, view, more),
                                     work);
    std::string console;  // the page's console messages, shown when a check fails
    std::istringstream log(read_file(work + "/dom.html.log"));
    for (std::string line; std::getline(log, line);)
        if (line.find("CONSOLE") != std::string::npos) console += line + "\n";
    INFO("console: " << console);
    const std::string selftest = between(dom, "<pre id=\"selftest\">", "</pre>");
    INFO("selftest: " << selftest);
    const nlohmann::json t = nlohmann::json::parse(selftest);
    CHECK(t["problems"].empty());   // no JavaScript error, no console.error, no CSP violation
    CHECK(t["resources"].empty());  // no request of any kind
    CHECK(t["alerts"] == 0);
    CHECK(t["sentences"] == data["sentences"].size());
    CHECK(t["rows"] == data["sentences"].size());  // one corpus row per sentence
    CHECK(t["sentence"] == sentence);
    CHECK(t["view"] == view);
    const nlohmann::json& s = data["sentences"][size_t(sentence)];
    if (!s.contains("empty")) {
        // the tree has the node count the trace says, the heatmap one cell per weight
        CHECK(t["tree_nodes"] == s["trace"]["nodes"]["parent"].size());
        size_t weights = 0;
        for (const auto& row : s["nbest"][0]["attention"]) weights += row.size();
        // a coverage model's attention view adds the coverage under the heatmap, cell for cell
        const bool coverage = data["meta"].value("coverage", "none") != "none";
        if (more.empty()) {
            CHECK(t["heat_cells"] == weights);
            CHECK(t["coverage_cells"] == (coverage ? weights : 0));
        }
        CHECK(t["charts"] == 5);
        // the saliency view: one cell per (output step, source position) of beam #1, the
        // attention beside it on the same axes, one agreement row per step; the gradient-flow
        // view: one row per source position
        if (view == "saliency" && s.contains("saliency")) {
            const size_t steps = s["nbest"][0]["tokens"].size();
            CHECK(t["saliency_cells"] == steps * s["source_tokens"].size());
            CHECK(t["saliency_attention_cells"] == weights);
            CHECK(t["agreement_rows"] == (weights ? steps : 0));
        }
        // the tape view: every group listed and collapsed (no node row built until one is
        // opened: a long sentence opens at once), a maths line for every op it shows
        if (view == "tape" && s.contains("tape")) {
            CHECK(t["tape_nodes"] == s["tape"]["nodes"]["op"].size());
            CHECK(t["tape_groups"] == s["tape"]["groups"].size());
            if (more.empty()) {  // (&path= or &node= open groups)
                CHECK(t["tape_open_groups"] == 0);
                CHECK(t["tape_rows"] == 0);
            }
            CHECK(t["tape_ops_without_maths"].empty());
            MESSAGE("tape of sentence " << sentence << ": " << t["tape_nodes"] << " nodes, "
                                        << t["tape_groups"] << " groups, drawn in "
                                        << t["render_ms"]["renderTape"] << " ms");
        }
        if (view == "gradients" && s.contains("gradflow")) {
            CHECK(t["gradflow_rows"] == s["source_tokens"].size());
            CHECK(t["gradflow_charts"] == 1);
        }
    }
    // Exactly the page's own two script elements: no string from the data became markup.
    size_t scripts = 0;
    for (size_t at = dom.find("<script"); at != std::string::npos; at = dom.find("<script", at + 1))
        ++scripts;
    CHECK(scripts == 2);
    return nlohmann::json{{"dom", dom}, {"data", data}, {"selftest", t}};
}

// Opens `html` at `#fragment` and returns the page's self-test record, after the checks every
// file passes: no error, no request, no alert, only the page's own two script elements.
nlohmann::json open_in_browser(const std::string& chromium, const std::string& html,
                               const std::string& fragment, const std::string& work,
                               std::string& dom) {
    dom = dump_dom(chromium, fmt::format("file://{}#{}", fs::absolute(html).string(), fragment),
                   work);
    const std::string selftest = between(dom, "<pre id=\"selftest\">", "</pre>");
    INFO("selftest: " << selftest);
    const nlohmann::json t = nlohmann::json::parse(selftest);
    CHECK(t["problems"].empty());
    CHECK(t["resources"].empty());
    CHECK(t["alerts"] == 0);
    size_t scripts = 0;
    for (size_t at = dom.find("<script"); at != std::string::npos; at = dom.find("<script", at + 1))
        ++scripts;
    CHECK(scripts == 2);
    return t;
}

nlohmann::json tiny_config_json(const std::string& run_dir, const std::string& task,
                                const std::string& attention,
                                const std::string& coverage = "none") {
    nlohmann::json j = {
        {"model",
         {{"embedding_size", 16},
          {"hidden_size", 32},
          {"attention_size", 16},
          {"attention", attention},
          {"coverage", coverage}}},
        {"train", {{"batch_size", 32}, {"epochs", 1}, {"log_every", 5}, {"max_valid_decode", 50}}},
        {"decode", {{"max_length", 14}}},
        {"output", {{"run_dir", run_dir}, {"explore", 0}}}};
    if (task == "dates") {
        j["data"] = {{"task", "dates"},   {"dates_train", 1500},  {"dates_valid", 100},
                     {"dates_test", 100}, {"max_source_len", 40}, {"max_target_len", 12}};
    } else {
        const std::string corpus = std::string(SEQGRAD_SOURCE_DIR) + "/datasets/eng-fra/";
        j["data"] = {{"task", "tsv"},
                     {"train", corpus + "train.tsv"},
                     {"valid", corpus + "valid.tsv"},
                     {"test", corpus + "test.tsv"},
                     {"source_column", 1},
                     {"tokenizer", "word"},
                     {"separate_punctuation", true},
                     {"max_source_len", 10},
                     {"max_target_len", 10}};
    }
    return j;
}

Config tiny_config(const std::string& run_dir, const std::string& task,
                   const std::string& attention, const std::string& coverage = "none") {
    return Config::from_json(tiny_config_json(run_dir, task, attention, coverage));
}

// A tiny model of `task` trained into `run_dir` (1 epoch, quiet).
Config trained_run(const std::string& run_dir, const std::string& task,
                   const std::string& attention, const std::string& coverage = "none") {
    Config c = tiny_config(run_dir, task, attention, coverage);
    TrainOptions quiet;
    quiet.quiet = true;
    train(c, quiet);
    return c;
}

// An explore request without progress output.
ExploreRequest quiet_request(const std::string& run_dir, const std::string& out, int limit) {
    ExploreRequest request;
    request.run_dir = run_dir;
    request.out = out;
    request.limit = limit;
    request.progress = false;
    return request;
}

}  // namespace

TEST_CASE("explore files open in headless Chromium: views drawn, no error, hostile text inert") {
    const std::string chromium = find_chromium();
    if (chromium.empty()) {
        MESSAGE(
            "[seqgrad-skip] chromium not found (apt-get install chromium): browser test "
            "skipped");
        return;
    }
    const std::string work = temp_dir("browser");

    SUBCASE("date task, character level, Bahdanau: the test split, then hostile and odd input") {
        Config c = trained_run(work + "/dates", "dates", "bahdanau");
        ExploreRequest request = quiet_request(c.output.run_dir, work + "/dates.html", 12);
        ExploreReport report = run_explore(request);
        CHECK(report.sentences == 12);
        CHECK(report.left_out.find("left out 88 of the 100") != std::string::npos);
        {  // the same page as a string, written nowhere (what Python's seqgrad.explore shows)
            ExploreRequest in_memory = request;
            in_memory.out.clear();
            in_memory.limit = 2;
            in_memory.gradients = false;
            ExploreReport page_report;
            const std::string page = explore_html(in_memory, &page_report);
            CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
            CHECK(page_report.bytes == page.size());
            CHECK(page_report.sentences == 2);
            CHECK(page_report.path.empty());
            CHECK(!std::filesystem::exists(c.output.run_dir + "/explore.html.tmp"));
        }
        check_in_browser(chromium, request.out, 3, "tree", work);
        check_in_browser(chromium, request.out, 0, "corpus", work);
        // #sentence=i&view=saliency and view=gradients open those views at sentence i
        const nlohmann::json r = check_in_browser(chromium, request.out, 1, "saliency", work);
        CHECK(r["data"]["sentences"][1].contains("saliency"));
        CHECK(r["data"]["sentences"][1]["saliency"].contains("integrated_gradients"));
        check_in_browser(chromium, request.out, 2, "gradients", work);
        // #sentence=i&view=tape opens the recorded graph; past the first 3 sentences the page
        // says how to record more
        CHECK(check_in_browser(chromium, request.out, 0, "tape", work)["data"]["sentences"][0]
                  .contains("tape"));
        const nlohmann::json no_tape = check_in_browser(chromium, request.out, 5, "tape", work);
        CHECK(!no_tape["data"]["sentences"][5].contains("tape"));
        CHECK(no_tape["selftest"]["tape_groups"] == 0);
        CHECK(std::string(no_tape["dom"])
                  .find("The tape is in this file for the first 3 sentences") != std::string::npos);

        // --input: the hostile line, an empty line, a 200-character line, a plain date.
        write_file(work + "/input.txt",
                   kHostile + "\n\n" + std::string(200, '7') + "\nmarch 3, 2001\n");
        request.input = work + "/input.txt";
        request.out = work + "/input.html";
        run_explore(request);
        for (int sentence = 0; sentence < 4; ++sentence) {
            const nlohmann::json r = check_in_browser(
                chromium, request.out, sentence, sentence == 0 ? "saliency" : "attention", work);
            const std::string dom = r["dom"];
            // The hostile source is shown as text (escaped in the DOM), never run.
            CHECK(dom.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") !=
                  std::string::npos);
            CHECK(r["data"]["sentences"][1].contains("empty"));
            // The empty line's corpus row says so.
            CHECK(dom.find("<i>(empty line: nothing to translate)</i>") != std::string::npos);
        }
        // the tape of the hostile line (its tokens in the group labels stay text) and of the
        // 200-character line (200 encoder steps, collapsed)
        for (int sentence : {0, 2}) {
            const nlohmann::json r =
                check_in_browser(chromium, request.out, sentence, "tape", work);
            REQUIRE(r["data"]["sentences"][size_t(sentence)].contains("tape"));
            CHECK(std::string(r["dom"]).find("&lt;/script&gt;&lt;script&gt;alert(1)") !=
                  std::string::npos);
        }
    }

    SUBCASE("date task, Bahdanau with learned coverage: the coverage under the heatmap") {
        Config c = trained_run(work + "/coverage", "dates", "bahdanau", "learned");
        ExploreRequest request = quiet_request(c.output.run_dir, work + "/coverage.html", 3);
        run_explore(request);
        const nlohmann::json r = check_in_browser(chromium, request.out, 1, "attention", work);
        CHECK(r["data"]["meta"]["coverage"] == "learned");
        CHECK(std::string(r["dom"]).find("Coverage (model.coverage = \"learned\")") !=
              std::string::npos);
    }

    SUBCASE("English-French word level with references, Luong general, and no attention") {
        for (const char* attention : {"luong_general", "none"}) {
            Config c = trained_run(work + "/engfra_" + attention, "tsv", attention);
            // A test file whose source and reference are hostile.
            write_file(work + "/hostile.tsv",
                       kHostile + "\t" + kHostile + "\ni m happy .\tje suis heureux .\n");
            ExploreRequest request = quiet_request(c.output.run_dir, work + "/engfra.html", 10);
            run_explore(request);
            check_in_browser(chromium, request.out, 2, "tree", work);
            request.test = work + "/hostile.tsv";
            run_explore(request);
            const nlohmann::json r = check_in_browser(chromium, request.out, 0, "compare", work);
            CHECK(std::string(r["dom"]).find("&lt;/script&gt;&lt;script&gt;alert(1)") !=
                  std::string::npos);
            // without attention the saliency view has nothing to compare with, and says so
            const nlohmann::json sal = check_in_browser(chromium, request.out, 1, "saliency", work);
            if (std::string(attention) == "none")
                CHECK(std::string(sal["dom"]).find("saliency only, nothing to compare it with") !=
                      std::string::npos);
            check_in_browser(chromium, request.out, 0, "gradients", work);
            // without attention the tape has one route to the first embedding only
            const nlohmann::json tape = check_in_browser(chromium, request.out, 1, "tape", work);
            CHECK((tape["selftest"]["tape_path_nodes"][0] == 0) ==
                  (std::string(attention) == "none"));
            CHECK(tape["selftest"]["tape_path_nodes"][1] > 0);
        }
    }
    fs::remove_all(work);
}

// The weights of one layer and head as the page draws them (row-major, the decoder's causal rows
// without their masked future), from the file's data in thousandths; head "mean": their average.
std::vector<double> expected_weights(const nlohmann::json& layer, const nlohmann::json& head) {
    const size_t heads = layer.size();
    std::vector<double> out;
    for (size_t t = 0; t < layer[0].size(); ++t)
        for (size_t j = 0; j < layer[0][t].size(); ++j) {
            double w = 0;
            if (head == "mean") {
                for (size_t k = 0; k < heads; ++k) w += layer[k][t][j].get<double>();
                w /= double(heads);
            } else {
                w = layer[head.get<size_t>()][t][j].get<double>();
            }
            out.push_back(w / 1000);
        }
    return out;
}

TEST_CASE(
    "a Transformer's explore file: every attention, layer and head drawn, the head mean is the "
    "average of the heads, saliency, the beam tree and what-if work") {
    const std::string chromium = find_chromium();
    if (chromium.empty()) {
        MESSAGE(
            "[seqgrad-skip] chromium not found (apt-get install chromium): browser test "
            "skipped");
        return;
    }
    const std::string work = temp_dir("transformer");
    nlohmann::json j = tiny_config_json(work + "/run", "dates", "");
    j["model"] = {{"kind", "transformer"}, {"encoder_layers", 1}, {"decoder_layers", 2},
                  {"d_model", 16},         {"heads", 2},          {"ff_size", 32},
                  {"max_positions", 48}};
    j["data"]["dates_train"] = 320;  // 10 steps, then a validation
    Config c = Config::from_json(j);
    TrainOptions quiet;
    quiet.quiet = true;
    train(c, quiet);
    ExploreRequest request = quiet_request(c.output.run_dir, work + "/transformer.html", 4);
    run_explore(request);

    // #sentence=1&view=attention&attention=encoder&layer=0&head=1 opens that choice; with
    // &selftest=all the page also draws every other one and reports what it drew.
    const nlohmann::json r = check_in_browser(chromium, request.out, 1, "attention", work,
                                              "&attention=encoder&layer=0&head=1&selftest=all");
    const nlohmann::json &t = r["selftest"], &data = r["data"];
    const nlohmann::json& s = data["sentences"][1];
    const nlohmann::json& meta = data["meta"]["transformer"];
    REQUIRE(meta["encoder_layers"] == 1);
    REQUIRE(meta["decoder_layers"] == 2);
    REQUIRE(meta["heads"] == 2);
    CHECK(t["attention_part"] == "encoder");
    CHECK(t["layer"] == 0);
    CHECK(t["head"] == 1);
    CHECK(t["part_options"] == 3);
    CHECK(t["layer_options"] == 1);  // the encoder's layers
    CHECK(t["head_options"] == 3);   // mean, head 0, head 1
    const size_t S = s["source_tokens"].size(), T = s["nbest"][0]["tokens"].size();
    CHECK(t["heat_cells"] == S * S);
    // the heads' mean in the file == the head-averaged weights decoding returned (3 decimals each)
    CHECK(t["head_mean_error"].get<double>() <= 1.001e-3);

    // Every head's row of the file sums to 1 over the unmasked positions (each weight rounded to
    // 3 decimals).
    const nlohmann::json& best = s["transformer"]["best"];
    for (const nlohmann::json* part :
         {&s["transformer"]["encoder"], &best["decoder"], &best["cross"]})
        for (const auto& layer : *part)
            for (const auto& head : layer)
                for (const auto& row : head) {
                    double sum = 0;
                    for (const auto& w : row) sum += w.get<double>() / 1000;
                    CHECK(std::fabs(sum - 1) <= 5e-4 * double(row.size()) + 1e-9);
                }

    // Every choice: 3 attentions × their layers × (mean + 2 heads), each drawn with the pickers'
    // sizes of its stack and the weights of the file (the mean: their average).
    const nlohmann::json& every = t["every_choice"];
    REQUIRE(every.size() == (1 + 2 + 2) * 3);
    for (const auto& choice : every) {
        INFO("choice: " << choice["attention"] << " layer " << choice["layer"] << " head "
                        << choice["head"]);
        const std::string part = choice["attention"];
        const nlohmann::json& layers = part == "encoder" ? s["transformer"]["encoder"] : best[part];
        CHECK(choice["layer_options"] == layers.size());
        CHECK(choice["head_options"] == 3);
        const std::vector<double> expected =
            expected_weights(layers[choice["layer"].get<size_t>()], choice["head"]);
        const std::vector<double> shown = choice["shown"];
        REQUIRE(shown.size() == expected.size());
        CHECK(shown.size() == (part == "encoder" ? S * S
                               : part == "cross" ? T * S
                                                 : T * (T + 1) / 2));
        CHECK(choice["masked"] == (part == "decoder" ? T * (T - 1) / 2 : 0));
        // A head is drawn as stored; a mean to 3 decimals (the default, the top layer's cross-
        // attention, is the decoder's own head average: within the rounding of both).
        const double tolerance = choice["head"] == "mean" ? 1.5e-3 : 1e-9;
        double worst = 0;
        for (size_t i = 0; i < shown.size(); ++i)
            worst = std::max(worst, std::fabs(shown[i] - expected[i]));
        CHECK(worst <= tolerance);
    }

    // Saliency, gradient flow and the tape on a Transformer run: the RNN's views, beside the top
    // layer's cross-attention (check_in_browser counts the cells, the rows and the tape's
    // nodes, groups and maths); the tape's groups are layers, with one path to the source.
    const nlohmann::json sal = check_in_browser(chromium, request.out, 1, "saliency", work);
    CHECK(sal["data"]["sentences"][1].contains("saliency"));
    CHECK(sal["data"]["sentences"][1]["gradflow"]["kind"] == "transformer");
    CHECK(sal["selftest"]["saliency_cells"].get<int>() > 0);
    const nlohmann::json flow = check_in_browser(chromium, request.out, 1, "gradients", work);
    CHECK(std::string(flow["dom"]).find("there is no recurrence") != std::string::npos);
    const nlohmann::json tape = check_in_browser(chromium, request.out, 1, "tape", work);
    const nlohmann::json& recorded = tape["data"]["sentences"][1]["tape"];
    CHECK(recorded["kind"] == "transformer");
    CHECK(recorded["paths"]["recurrence"].empty());
    CHECK(!recorded["paths"]["attention"].empty());
    const nlohmann::json opened =
        check_in_browser(chromium, request.out, 1, "tape", work, "&path=attention");
    CHECK(opened["selftest"]["tape_open_groups"].get<int>() > 0);
    const std::string tape_dom = tape["dom"];
    CHECK(tape_dom.find("decoder layer 1: causal self-attention") != std::string::npos);
    CHECK(tape_dom.find("cross-attention of decoder layer 0") != std::string::npos);
    CHECK(tape_dom.find("the stack's final norm") != std::string::npos);

    // The beam tree and the what-if view on a Transformer run (check_in_browser compares the
    // tree's nodes with the trace).
    check_in_browser(chromium, request.out, 2, "tree", work);
    const nlohmann::json w = check_in_browser(chromium, request.out, 2, "whatif", work);
    CHECK(w["selftest"]["what_if_rows"] == w["data"]["sentences"][2]["what_if"].size());
    CHECK(!w["data"]["sentences"][2]["what_if"].empty());
    fs::remove_all(work);
}

TEST_CASE(
    "explore's greedy and n-best are translate's, and a run without a test split says what to "
    "pass") {
    const std::string work = temp_dir("data");
    Config c = trained_run(work + "/dates", "dates", "bahdanau");
    ExploreRequest request = quiet_request(c.output.run_dir, work + "/dates.html", 20);
    run_explore(request);
    const std::string file = read_file(request.out);
    const nlohmann::json data = nlohmann::json::parse(
        between(file, "<script id=\"seqgrad-data\" type=\"application/json\">", "</script>"));
    REQUIRE(data["sentences"].size() == 20);

    // The same sentences through `seqgrad translate`'s path: greedy (--beam 1) and beam 5.
    LoadedRun run = load_run(c.output.run_dir);
    std::vector<std::string> sources;
    for (const auto& s : data["sentences"]) sources.push_back(s["source"]);
    DecodeOptions options = decode_options_from(run.config.decode);
    options.beam_size = 1;
    std::vector<Translation> greedy = translate(*run.model, run.task, sources, options);
    options.beam_size = options.nbest = 5;
    std::vector<Translation> beam = translate(*run.model, run.task, sources, options);
    for (size_t i = 0; i < sources.size(); ++i) {
        const nlohmann::json& s = data["sentences"][i];
        CHECK(s["greedy"]["text"] == greedy[i].text);
        CHECK(s["greedy"]["tokens"] == nlohmann::json(greedy[i].nbest[0].tokens));
        REQUIRE(s["nbest"].size() == beam[i].nbest.size());
        for (size_t r = 0; r < beam[i].nbest.size(); ++r)
            CHECK(s["nbest"][r]["tokens"] == nlohmann::json(beam[i].nbest[r].tokens));
        CHECK(data["meta"]["beam_size"] == 5);
    }

    // `seqgrad translate --trace`: one JSON line per input, its n-best equal to the trace's;
    // `--prefix` forces the start of every output.
    write_file(work + "/lines.txt", sources[0] + "\n\n" + sources[1] + "\n");
    const std::string trace_path = work + "/trace.jsonl";
    CHECK(cmd_translate({c.output.run_dir, "--input", work + "/lines.txt", "--beam", "3", "--nbest",
                         "2", "--trace", trace_path}) == 0);
    std::istringstream lines(read_file(trace_path));
    std::vector<nlohmann::json> traced;
    for (std::string line; std::getline(lines, line);)
        traced.push_back(nlohmann::json::parse(line));
    REQUIRE(traced.size() == 3);
    CHECK(traced[1]["empty"] == true);
    for (size_t i : {size_t(0), size_t(2)}) {
        const nlohmann::json& t = traced[i]["trace"];
        CHECK(t["beam_size"] == 3);
        REQUIRE(t["nbest_nodes"].size() == traced[i]["nbest"].size());
        const int best = t["nbest_nodes"][0];
        CHECK(t["nodes"]["rank"][size_t(best)] == 1);
        CHECK(t["nodes"]["status"][size_t(best)] ==
              (traced[i]["nbest"][0]["finished"] == true ? "finished" : "unfinished"));
        CHECK(t["predicted_ids"].size() == traced[i]["nbest"][0]["tokens"].size());
    }
    std::vector<Translation> forced =
        translate(*run.model, run.task, {sources[0]}, options, TranslateExtras{{{5, 6}}, nullptr});
    CHECK(std::vector<int32_t>(forced[0].nbest[0].tokens.begin(),
                               forced[0].nbest[0].tokens.begin() + 2) ==
          std::vector<int32_t>{5, 6});

    // A TSV run whose config has no data.test, and no --test: the error says what to pass.
    Config tsv = tiny_config(work + "/tsv", "tsv", "bahdanau");
    tsv.data.test.clear();
    tsv.train.max_steps = 3;
    TrainOptions quiet;
    quiet.quiet = true;
    train(tsv, quiet);
    request.run_dir = tsv.output.run_dir;
    request.out = work + "/tsv.html";
    CHECK_THROWS_WITH(run_explore(request), doctest::Contains("--test FILE.tsv"));
    CHECK(!fs::exists(request.out));
    fs::remove_all(work);
}

TEST_CASE(
    "explore of two runs side by side: both named, every column drawn, sorted by the "
    "difference, hostile text inert") {
    const std::string chromium = find_chromium();
    if (chromium.empty()) {
        MESSAGE(
            "[seqgrad-skip] chromium not found (apt-get install chromium): browser test "
            "skipped");
        return;
    }
    const std::string work = temp_dir("runs");
    // Bahdanau for 1 epoch and Luong for 3: their outputs, and so their scores, differ.
    const Config a = trained_run(work + "/bahdanau", "dates", "bahdanau");
    Config b = tiny_config(work + "/luong", "dates", "luong_general");
    b.train.epochs = 3;
    TrainOptions quiet;
    quiet.quiet = true;
    train(b, quiet);
    ExploreRequest request = quiet_request(a.output.run_dir, work + "/two.html", 8);
    request.other_runs = {b.output.run_dir};
    CHECK(run_explore(request).sentences == 8);
    const std::string file = read_file(request.out);
    const nlohmann::json data = nlohmann::json::parse(
        between(file, "<script id=\"seqgrad-data\" type=\"application/json\">", "</script>"));
    REQUIRE(data["runs"].size() == 2);
    const std::vector<std::string> names = {a.output.run_dir, b.output.run_dir};
    for (size_t k = 0; k < 2; ++k) {
        CHECK(data["runs"][k]["meta"]["run_dir"] == names[k]);
        REQUIRE(data["runs"][k]["sentences"].size() == 8);
        CHECK(data["runs"][k]["sentences"][5]["source"] ==
              data["runs"][0]["sentences"][5]["source"]);
    }
    CHECK(between(file, "<title>", "</title>").find(names[0] + " vs " + names[1]) !=
          std::string::npos);

    // Every per-sentence view draws one column per run, each from its own run's data (all the
    // views are drawn whichever is shown).
    const int sentence = 2;
    for (const char* view : {"tree", "saliency"}) {
        std::string dom;
        const nlohmann::json t = open_in_browser(
            chromium, request.out, fmt::format("sentence={}&view={}", sentence, view), work, dom);
        CHECK(t["runs"] == names);
        CHECK(t["view"] == view);
        for (size_t k = 0; k < 2; ++k) {
            const nlohmann::json& s = data["runs"][k]["sentences"][sentence];
            size_t weights = 0;
            for (const auto& row : s["nbest"][0]["attention"]) weights += row.size();
            CHECK(t["run_tree_nodes"][k] == s["trace"]["nodes"]["parent"].size());
            CHECK(t["run_heat_cells"][k] == weights);
            CHECK(t["run_saliency_cells"][k] ==
                  s["nbest"][0]["tokens"].size() * s["source_tokens"].size());
            CHECK(t["run_gradflow_rows"][k] == s["source_tokens"].size());
        }
    }

    // The corpus sorted by the difference in sentence BLEU, B - A (column 9), descending and
    // ascending: the rows in that order, ties by index.
    std::vector<std::pair<double, int>> deltas;
    for (int i = 0; i < 8; ++i)
        deltas.push_back({data["runs"][1]["sentences"][i]["bleu"]["beam"].get<double>() -
                              data["runs"][0]["sentences"][i]["bleu"]["beam"].get<double>(),
                          i});
    REQUIRE(std::any_of(deltas.begin(), deltas.end(),
                        [&](const auto& d) { return std::abs(d.first - deltas[0].first) > 0.5; }));
    for (int direction : {-1, 1}) {
        std::vector<std::pair<double, int>> order = deltas;
        std::stable_sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
            return direction * (x.first - y.first) < -1e-9;
        });
        std::vector<int> expected;
        for (const auto& d : order) expected.push_back(d.second);
        std::string dom;
        const nlohmann::json t = open_in_browser(
            chromium, request.out, fmt::format("view=corpus&sort={}", direction * 9), work, dom);
        CHECK(t["row_order"] == nlohmann::json(expected));
        CHECK(dom.find("\u0394 BLEU B\u2212A") != std::string::npos);
    }

    // An RNN beside a Transformer: other model kinds, the same sentences.
    Config transformer = tiny_config(work + "/transformer", "dates", "bahdanau");
    transformer.model.kind = "transformer";
    transformer.model.d_model = 16;
    transformer.model.heads = 2;
    transformer.model.ff_size = 32;
    transformer.model.encoder_layers = transformer.model.decoder_layers = 1;
    train(transformer, quiet);
    ExploreRequest kinds = quiet_request(a.output.run_dir, work + "/kinds.html", 4);
    kinds.other_runs = {transformer.output.run_dir};
    run_explore(kinds);
    {
        std::string dom;
        const nlohmann::json t =
            open_in_browser(chromium, kinds.out, "sentence=1&view=tree", work, dom);
        CHECK(t["runs"][1] == transformer.output.run_dir);
        CHECK(t["run_tree_nodes"][1] > 1);
        CHECK(t["run_heat_cells"][1] > 0);
    }

    // A hostile line through both runs stays text in the corpus and in both columns.
    write_file(work + "/input.txt", kHostile + "\n2001-03-03\n");
    request.input = work + "/input.txt";
    run_explore(request);
    std::string dom;
    open_in_browser(chromium, request.out, "sentence=0&view=compare", work, dom);
    size_t shown = 0;
    const std::string escaped = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;";
    for (size_t at = dom.find(escaped); at != std::string::npos; at = dom.find(escaped, at + 1))
        ++shown;
    CHECK(shown >= 3);  // the corpus row, and the source line of each run's column
    fs::remove_all(work);
}
