// seqgrad's BLEU and chrF against scores sacreBLEU 2.6.0 computed itself
// (tests/data/sacrebleu-vectors/, see its README): every entry must match, in score,
// precisions, brevity penalty, lengths and signature.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"

using namespace seqgrad;
using nlohmann::json;

namespace {

const std::string kDir = std::string(SEQGRAD_SOURCE_DIR) + "/tests/data/sacrebleu-vectors/";

// The lines of a file, without their line ends.
std::vector<std::string> lines_of(const std::string& name) {
    std::ifstream in(kDir + name, std::ios::binary);
    REQUIRE(in.good());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

struct Vectors {
    json data;
    std::vector<std::string> hyp, ref1, ref2;
    Vectors() {
        std::ifstream in(kDir + "vectors.json");
        data = json::parse(in);
        hyp = lines_of("hyp.txt");
        ref1 = lines_of("ref1.txt");
        ref2 = lines_of("ref2.txt");
    }
    std::vector<std::vector<std::string>> references(int nrefs) const {
        if (nrefs == 1) return {ref1};
        return {ref1, ref2};
    }
};

const Vectors& vectors() {
    static const Vectors v;
    return v;
}

// sacreBLEU's signature without its version field, which names the implementation.
std::string without_version(const std::string& signature) {
    return signature.substr(0, signature.rfind("|version:"));
}

// The statistics are the same integer counts and the score the same floating-point steps in
// the same order: the numbers agree to the last few bits.
doctest::Approx same(double x) {
    return doctest::Approx(x).epsilon(1e-12);
}

}  // namespace

TEST_CASE("the vectors are all there: 400 lines, 18 BLEU, 8 chrF and 40 sentence entries") {
    const Vectors& v = vectors();
    CHECK(v.hyp.size() == 400);
    CHECK(v.ref1.size() == 400);
    CHECK(v.ref2.size() == 400);
    CHECK(v.data["bleu"].size() == 18);
    CHECK(v.data["chrf"].size() == 8);
    CHECK(v.data["sentence"].size() == 40);
}

TEST_CASE("corpus BLEU equals sacreBLEU's under every option set, with one and two references") {
    const Vectors& v = vectors();
    for (const json& entry : v.data["bleu"]) {
        const json& o = entry["options"];
        BleuOptions options;
        options.tokenize = o.value("tokenize", "13a");
        options.lowercase = o.value("lowercase", false);
        options.smooth_method = o.value("smooth_method", "exp");
        if (o.contains("smooth_value")) options.smooth_value = o["smooth_value"].get<double>();
        const int nrefs = entry["nrefs"].get<int>();
        CAPTURE(entry["signature"].get<std::string>());
        const BleuScore s = corpus_bleu(v.hyp, v.references(nrefs), options);
        CHECK(s.score == same(entry["score"].get<double>()));
        CHECK(s.bp == same(entry["bp"].get<double>()));
        CHECK(s.sys_len == entry["sys_len"].get<int64_t>());
        CHECK(s.ref_len == entry["ref_len"].get<int64_t>());
        REQUIRE(s.precisions.size() == entry["precisions"].size());
        for (size_t n = 0; n < s.precisions.size(); ++n)
            CHECK(s.precisions[n] == same(entry["precisions"][n].get<double>()));
        CHECK(without_version(bleu_signature(options, nrefs)) ==
              without_version(entry["signature"].get<std::string>()));
    }
}

TEST_CASE("corpus chrF, chrF++, lower-cased and with white space equal sacreBLEU's") {
    const Vectors& v = vectors();
    for (const json& entry : v.data["chrf"]) {
        const json& o = entry["options"];
        ChrfOptions options;
        options.word_order = o.value("word_order", 0);
        options.lowercase = o.value("lowercase", false);
        options.whitespace = o.value("whitespace", false);
        const int nrefs = entry["nrefs"].get<int>();
        CAPTURE(entry["signature"].get<std::string>());
        const ChrfScore s = corpus_chrf(v.hyp, v.references(nrefs), options);
        CHECK(s.score == same(entry["score"].get<double>()));
        CHECK(without_version(chrf_signature(options, nrefs)) ==
              without_version(entry["signature"].get<std::string>()));
    }
}

TEST_CASE("sentence BLEU, chrF and chrF++ equal sacreBLEU's on the first 40 lines") {
    const Vectors& v = vectors();
    ChrfOptions chrf_plus_plus;
    chrf_plus_plus.word_order = 2;
    for (const json& entry : v.data["sentence"]) {
        const size_t i = entry["line"].get<size_t>() - 1;
        CAPTURE(i + 1);
        const std::vector<std::string> refs = {v.ref1[i]};
        CHECK(sentence_bleu(v.hyp[i], refs).score == same(entry["bleu"].get<double>()));
        CHECK(sentence_chrf(v.hyp[i], refs).score == same(entry["chrf"].get<double>()));
        CHECK(sentence_chrf(v.hyp[i], refs, chrf_plus_plus).score ==
              same(entry["chrf++"].get<double>()));
    }
}
