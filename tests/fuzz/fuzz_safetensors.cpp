// libFuzzer harness: the safetensors reader and the checkpoint metadata on top of it
// (models/formats/safetensors.h, models/formats/checkpoint.h).
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/formats/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace seqgrad;
    const std::string path = fuzz::input_file(data, size, ".safetensors");
    fuzz::expect_clean_error(path, [&] {
        SafetensorsFile file = load_safetensors(path);
        checkpoint_metadata(file);
        checkpoint_extra_tensor_names(file);
        for (const SafetensorsTensor& t : file.tensors) (void)t.value.shape().numel();
    });
    return 0;
}
