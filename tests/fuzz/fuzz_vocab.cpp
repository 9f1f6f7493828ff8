// libFuzzer harness: the vocabulary reader (data/vocab.h), then encoding and decoding with it.
#include "seqgrad/data/vocab.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace seqgrad;
    const std::string path = fuzz::input_file(data, size, ".vocab.json");
    fuzz::expect_clean_error(path, [&] {
        const Vocab vocab = Vocab::load(path);
        const std::vector<std::string> tokens = {"a", "<unk>", "é", ""};
        const std::vector<int32_t> ids = vocab.encode(tokens, true);
        vocab.decode(ids, true);
        vocab.decode({0, 1, 2, 3, int32_t(vocab.size()) - 1}, false);
    });
    return 0;
}
