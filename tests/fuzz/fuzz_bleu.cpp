// libFuzzer harness: the sacreBLEU tokenizers (13a, intl, char) and BLEU statistics
// (data/sacrebleu_text.h, data/bleu.h). The input is hypothesis lines, a NUL byte, then reference
// lines.
#include <string>
#include <vector>

#include "seqgrad/data/bleu.h"
#include "seqgrad/data/sacrebleu_text.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    for (size_t begin = 0; begin < text.size();) {
        size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace seqgrad;
    const std::string text(reinterpret_cast<const char*>(data), size);
    const size_t nul = text.find('\0');
    std::vector<std::string> hypotheses = lines_of(text.substr(0, nul));
    std::vector<std::string> references =
        nul == std::string::npos ? hypotheses : lines_of(text.substr(nul + 1));
    references.resize(hypotheses.size());
    try {  // text that is not UTF-8 is refused with std::invalid_argument (data/utf8.h)
        for (const std::string& line : hypotheses) {
            tokenize_13a(line);
            tokenize_intl(line);
            tokenize_char(line);
            tokenize_for_bleu(line, "none");
            lowercase_text(line);
        }
        for (const char* tokenize : {"13a", "intl", "char"}) {
            BleuOptions options;
            options.tokenize = tokenize;
            const BleuScore score = corpus_bleu(hypotheses, {references}, options);
            if (!(score.score >= 0 && score.score <= 100.0000001))
                fuzz::broken("0 <= BLEU <= 100", std::to_string(score.score));
        }
        if (!hypotheses.empty()) sentence_bleu(hypotheses[0], {references[0]});
    } catch (const std::invalid_argument&) {
    } catch (const std::runtime_error&) {
    }
    return 0;
}
