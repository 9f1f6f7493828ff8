// libFuzzer harness: the TSV reader, then the normaliser and both tokenizers on every pair read
// (data/corpus.h, data/text.h). The first byte picks the options.
#include <string_view>

#include "seqgrad/data/corpus.h"
#include "seqgrad/data/text.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace seqgrad;
    if (size == 0) return 0;
    const uint8_t flags = data[0];
    CorpusOptions options;
    options.source_column = flags & 1;
    options.columns = (flags & 2) ? 3 : 2;
    options.on_bad_line = (flags & 4) ? OnBadLine::skip : OnBadLine::error;
    NormalizeOptions normalize_options;
    normalize_options.lowercase = flags & 8;
    normalize_options.strip_accents = flags & 16;
    normalize_options.separate_punctuation = flags & 32;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    fuzz::expect_clean_error("fuzz.tsv", [&] {
        CorpusReadResult r = parse_parallel_corpus(text, "fuzz.tsv", options);
        for (const SentencePair& pair : r.pairs) {
            for (const std::string& side : {pair.source, pair.target}) {
                const std::string normal = normalize(side, normalize_options);
                for (TokenizerKind kind : {TokenizerKind::character, TokenizerKind::word})
                    detokenize(tokenize(normal, kind), kind);
            }
        }
    });
    return 0;
}
