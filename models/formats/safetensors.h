// Safetensors: the file format checkpoints are stored in, readable by Python's `safetensors`,
// PyTorch, NumPy and anything else that speaks it (https://github.com/huggingface/safetensors).
//
// A file is three parts, back to back:
//
//   [8 bytes]  N, the header length, an unsigned 64-bit little-endian integer
//   [N bytes]  the header: UTF-8 JSON, padded with spaces to a multiple of 8 bytes
//                {"__metadata__": {"key": "value", ...},
//                 "encoder.embedding.weight": {"dtype": "F32", "shape": [5000, 256],
//                                              "data_offsets": [0, 5120000]}, ...}
//   [rest]     the data section: every tensor's values, row-major and little-endian, one
//              after another without gaps. data_offsets = [begin, end) counts bytes from the
//              start of the data section (the byte right after the header).
//
// Saving writes to a temporary file and renames it over the destination, so a crash or a full
// disk never leaves a half-written file behind. Loading validates everything it reads and
// reports a corrupt file as a seqgrad::Error naming the file, never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

// Element types of the format. Any of them can be loaded (values are converted to `real`);
// F16, F32 and F64 can be written.
enum class Dtype { BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F16, BF16, F32, F64 };

const char* dtype_name(Dtype dtype);  // "F32"
int dtype_size(Dtype dtype);          // bytes per element: 4 for F32
std::optional<Dtype> dtype_from_name(const std::string& name);

// An nlohmann::json error message without its "[json.exception.parse_error.101] " prefix: the
// rest is for people.
std::string without_exception_id(const std::string& message);

// IEEE half precision (F16: 1 sign bit, 5 exponent bits of bias 15, 10 mantissa bits).
// to_half_bits rounds to the nearest half, ties to even, subnormals included; a magnitude of
// 65520 or more (past the largest half, 65504, by half a step) becomes ±inf, NaN a quiet NaN.
// from_half_bits is exact.
uint16_t to_half_bits(double value);
double from_half_bits(uint16_t bits);
// `value` rounded to the nearest half and back (what an F16 round trip gives).
inline double round_to_half(double value) {
    return from_half_bits(to_half_bits(value));
}

// The dtype that holds a `real` exactly: F32 in the float build, F64 in the double build.
constexpr Dtype kNativeDtype = sizeof(real) == 4 ? Dtype::F32 : Dtype::F64;

// Writes `tensors` (in the given order) and `metadata` to `path`, atomically: the bytes go to
// "PATH.tmp-<pid>", are flushed to disk, and that file is renamed over PATH. Values are stored
// as `dtype` (F16, F32 or F64; the default makes a round trip bit-exact; F16 rounds each value
// to the nearest half). Throws Error on duplicate or reserved names, when the file cannot be
// written (the message names the path and says why), and for F16 when a value is NaN or too
// large for a half (the message names the tensor, the index and the value); PATH is then left
// as it was.
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata,
                      Dtype dtype = kNativeDtype);

// One tensor of a loaded file: its name, the dtype it was stored as, and its values as `real`.
struct SafetensorsTensor {
    std::string name;
    Dtype stored_dtype;
    Tensor value;
};

struct SafetensorsFile {
    std::string path;
    std::vector<SafetensorsTensor> tensors;  // in the order of their data in the file
    std::map<std::string, std::string> metadata;

    // The tensor called `name`, or nullptr.
    const Tensor* find(const std::string& name) const;
    // The tensor called `name`; throws Error naming the file when there is none.
    const Tensor& at(const std::string& name) const;
};

// Reads and validates a safetensors file. Throws Error naming the file and what is wrong with
// it: cannot be opened, too short, header length beyond the end of the file, header not a JSON
// object, a tensor entry without dtype/shape/data_offsets, an unknown dtype, offsets out of
// bounds, overlapping, leaving gaps, or not matching shape × dtype size.
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace seqgrad
