// libFuzzer harness: the BPE codes reader (data/bpe.h, subword-nmt's "#version: 0.2" format),
// then segmenting and undoing text with the codes it read, with and without the vocabulary filter.
#include "seqgrad/data/bpe.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace seqgrad;
    const std::string path = fuzz::input_file(data, size, ".codes");
    fuzz::expect_clean_error(path, [&] {
        const BpeCodes codes = BpeCodes::load(path);
        const std::string line = " the lowest newer wider café, naïve 東京 ￭. \r\n";
        for (bool filtered : {false, true}) {
            BpeApplyOptions options;
            if (filtered) options.vocabulary = {"t@@", "he", "lo@@", "w", "e", "st"};
            const Bpe bpe(codes, options);
            const std::string segmented = bpe.apply_line(line);
            // Merges only join neighbours, so a segmentation undoes to its line. The vocabulary
            // filter un-merges by the codes' own pairs, which a malformed file can make
            // inconsistent ("t< /w>" also spells "t</w>"): there, as in subword-nmt, only the
            // absence of a crash is required.
            if (!filtered && undo_bpe(segmented) != line)
                fuzz::broken("undo(apply(line)) == line", segmented);
        }
        if (BpeCodes::parse(codes.to_string(), path).merges().size() != codes.size())
            fuzz::broken("codes survive to_string and parse", path);
    });
    return 0;
}
