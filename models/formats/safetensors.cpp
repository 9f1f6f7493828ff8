#include "seqgrad/models/formats/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "seqgrad/data/file_io.h"

namespace seqgrad {

// ---- dtypes ----------------------------------------------------------------------------------

namespace {

struct DtypeInfo {
    Dtype dtype;
    const char* name;
    int size;
};

constexpr DtypeInfo kDtypes[] = {
    {Dtype::BOOL, "BOOL", 1}, {Dtype::U8, "U8", 1},     {Dtype::I8, "I8", 1},
    {Dtype::U16, "U16", 2},   {Dtype::I16, "I16", 2},   {Dtype::U32, "U32", 4},
    {Dtype::I32, "I32", 4},   {Dtype::U64, "U64", 8},   {Dtype::I64, "I64", 8},
    {Dtype::F16, "F16", 2},   {Dtype::BF16, "BF16", 2}, {Dtype::F32, "F32", 4},
    {Dtype::F64, "F64", 8},
};

const DtypeInfo& info(Dtype dtype) {
    for (const DtypeInfo& d : kDtypes)
        if (d.dtype == dtype) return d;
    throw Error("unknown Dtype value");
}

std::string supported_dtype_names() {
    std::string names;
    for (const DtypeInfo& d : kDtypes) names += (names.empty() ? "" : ", ") + std::string(d.name);
    return names;
}

}  // namespace

const char* dtype_name(Dtype dtype) {
    return info(dtype).name;
}

int dtype_size(Dtype dtype) {
    return info(dtype).size;
}

std::optional<Dtype> dtype_from_name(const std::string& name) {
    for (const DtypeInfo& d : kDtypes)
        if (name == d.name) return d.dtype;
    return std::nullopt;
}

// ---- IEEE half precision ---------------------------------------------------------------------
//
// Both directions work on the bits of a double (a float converts to a double exactly, so one
// rounding serves both builds): sign, 11 exponent bits of bias 1023, 52 mantissa bits.

uint16_t to_half_bits(double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const uint16_t sign = uint16_t((bits >> 48) & 0x8000);
    const uint64_t magnitude = bits & 0x7fffffffffffffffull;
    if (magnitude > 0x7ff0000000000000ull) return sign | 0x7e00;   // NaN: a quiet NaN
    if (magnitude >= 0x40effe0000000000ull) return sign | 0x7c00;  // >= 65520 (or inf): inf
    const int exponent = int(magnitude >> 52);                     // biased by 1023
    // Keeps the top bits of `mantissa` above `shift`, rounding the rest to nearest, ties to even.
    auto round_shift = [](uint64_t mantissa, int shift) {
        const uint64_t kept = mantissa >> shift, rest = mantissa & ((uint64_t(1) << shift) - 1),
                       halfway = uint64_t(1) << (shift - 1);
        return kept + (rest > halfway || (rest == halfway && (kept & 1)) ? 1 : 0);
    };
    if (exponent < 1023 - 14) {  // below 2^-14, the smallest normal half: a subnormal, or 0
        if (exponent < 1023 - 25) return sign;  // below 2^-25, half the smallest subnormal: 0
        // value = m × 2^(exponent-1075) = (m × 2^(exponent-1051)) × 2^-24, and 2^-24 is the
        // subnormals' step; a carry into bit 10 gives the smallest normal, correctly encoded
        const uint64_t m = (magnitude & 0xfffffffffffffull) | (uint64_t(1) << 52);
        return sign | uint16_t(round_shift(m, 1051 - exponent));
    }
    // normal: drop 42 mantissa bits and rebias the exponent from 1023 to 15; a carry out of the
    // mantissa moves to the next exponent, as it should (65520 and up were caught above)
    return sign | uint16_t(round_shift(magnitude, 42) - (uint64_t(1023 - 15) << 10));
}

double from_half_bits(uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    double magnitude;
    if (exponent == 0)  // zero or subnormal: mantissa × 2^-24
        magnitude = std::ldexp(double(mantissa), -24);
    else if (exponent == 31)  // infinity or NaN
        magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                             : std::numeric_limits<double>::infinity();
    else  // normal: (1 + mantissa/1024) × 2^(exponent-15)
        magnitude = std::ldexp(double(mantissa | 0x400), exponent - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

// ---- little-endian bytes <-> values -----------------------------------------------------------
//
// Values are assembled byte by byte with shifts, so the code is correct whatever the byte
// order of the machine it runs on.

namespace {

using Byte = unsigned char;

// The unsigned integer stored in `count` little-endian bytes at p.
uint64_t load_little_endian(const Byte* p, int count) {
    uint64_t value = 0;
    for (int i = 0; i < count; ++i) value |= uint64_t(p[i]) << (8 * i);
    return value;
}

void append_little_endian(std::vector<Byte>& out, uint64_t value, int count) {
    for (int i = 0; i < count; ++i) out.push_back(Byte(value >> (8 * i)));
}

// Reinterprets the bits of an integer as a value of type T of the same size (float from
// uint32_t, int16_t from uint16_t...).
template <class T, class Bits>
T from_bits(Bits bits) {
    static_assert(sizeof(T) == sizeof(Bits));
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

template <class Bits, class T>
Bits to_bits(T value) {
    static_assert(sizeof(T) == sizeof(Bits));
    Bits bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

// bfloat16 is the upper half of a float.
float bfloat16_to_float(uint16_t b) {
    return from_bits<float>(uint32_t(b) << 16);
}

// One element of type `dtype` stored at p, as a real.
real decode_element(const Byte* p, Dtype dtype) {
    switch (dtype) {
        case Dtype::BOOL:
            return p[0] != 0 ? 1 : 0;
        case Dtype::U8:
            return real(p[0]);
        case Dtype::I8:
            return real(from_bits<int8_t>(uint8_t(p[0])));
        case Dtype::U16:
            return real(uint16_t(load_little_endian(p, 2)));
        case Dtype::I16:
            return real(from_bits<int16_t>(uint16_t(load_little_endian(p, 2))));
        case Dtype::U32:
            return real(uint32_t(load_little_endian(p, 4)));
        case Dtype::I32:
            return real(from_bits<int32_t>(uint32_t(load_little_endian(p, 4))));
        case Dtype::U64:
            return real(load_little_endian(p, 8));
        case Dtype::I64:
            return real(from_bits<int64_t>(load_little_endian(p, 8)));
        case Dtype::F16:
            return real(from_half_bits(uint16_t(load_little_endian(p, 2))));
        case Dtype::BF16:
            return real(bfloat16_to_float(uint16_t(load_little_endian(p, 2))));
        case Dtype::F32:
            return real(from_bits<float>(uint32_t(load_little_endian(p, 4))));
        case Dtype::F64:
            return real(from_bits<double>(load_little_endian(p, 8)));
    }
    throw Error("unknown Dtype value");
}

// Appends the bytes of `count` values stored as F16, F32 or F64.
void encode_values(const real* values, int64_t count, Dtype dtype, std::vector<Byte>& out) {
    for (int64_t i = 0; i < count; ++i) {
        if (dtype == Dtype::F16)
            append_little_endian(out, to_half_bits(double(values[i])), 2);
        else if (dtype == Dtype::F32)
            append_little_endian(out, to_bits<uint32_t>(float(values[i])), 4);
        else
            append_little_endian(out, to_bits<uint64_t>(double(values[i])), 8);
    }
}

// F16 holds neither NaN's payload nor a magnitude of 65520 or more (it would round to inf):
// refuse both before anything is written, naming the tensor, the index and the value.
void check_fits_half(const std::string& path,
                     const std::vector<std::pair<std::string, Tensor>>& tensors) {
    for (const auto& [name, tensor] : tensors) {
        if (!tensor.defined()) continue;  // make_header names it
        for (int64_t i = 0; i < tensor.numel(); ++i) {
            const double value = double(tensor.data()[i]);
            if (std::isnan(value))
                throw Error(fmt::format(
                    "cannot save '{}' as F16: tensor '{}' holds NaN at index {}", path, name, i));
            if (std::isfinite(value) && std::isinf(round_to_half(value)))
                throw Error(fmt::format(
                    "cannot save '{}' as F16: tensor '{}' holds {} at index {}, beyond the "
                    "largest half (65504)",
                    path, name, value, i));
        }
    }
}

// The header JSON, padded with spaces to a multiple of 8 bytes. Tensors are laid out in the
// data section in the order given, without gaps.
std::string make_header(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& tensors,
                        const std::map<std::string, std::string>& metadata, Dtype dtype) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) header["__metadata__"][key] = value;

    uint64_t offset = 0;
    for (const auto& [name, tensor] : tensors) {
        if (name == "__metadata__")
            throw Error(
                fmt::format("cannot save '{}': '__metadata__' is reserved and cannot "
                            "name a tensor",
                            path));
        if (header.contains(name))
            throw Error(fmt::format("cannot save '{}': two tensors are named '{}'", path, name));
        if (!tensor.defined())
            throw Error(fmt::format("cannot save '{}': tensor '{}' is undefined", path, name));
        uint64_t bytes = uint64_t(tensor.numel()) * dtype_size(dtype);
        header[name] = {
            {"dtype", dtype_name(dtype)},
            {"shape", std::vector<int64_t>(tensor.shape().begin(), tensor.shape().end())},
            {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }

    std::string text;
    try {
        text = header.dump();  // compact, UTF-8; throws on names that are not valid UTF-8
    } catch (const nlohmann::json::exception& e) {
        throw Error(
            fmt::format("cannot save '{}': a name or metadata string is not valid "
                        "UTF-8 ({})",
                        path, e.what()));
    }
    while (text.size() % 8 != 0) text += ' ';
    return text;
}

// Writes the 8-byte header length, the header and the data section through an AtomicFile.
void write_data(const std::string& path, const std::string& header,
                const std::vector<std::pair<std::string, Tensor>>& tensors, Dtype dtype) {
    AtomicFile file(path);
    std::vector<Byte> bytes;
    append_little_endian(bytes, header.size(), 8);
    file.write(bytes.data(), bytes.size());
    file.write(header.data(), header.size());

    // The data section, converted in chunks so that a big tensor needs no second full copy.
    constexpr int64_t kChunk = 1 << 16;
    for (const auto& [name, tensor] : tensors) {
        for (int64_t start = 0; start < tensor.numel(); start += kChunk) {
            bytes.clear();
            encode_values(tensor.data() + start, std::min(kChunk, tensor.numel() - start), dtype,
                          bytes);
            file.write(bytes.data(), bytes.size());
        }
    }
    file.commit();
}

}  // namespace

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata, Dtype dtype) {
    if (dtype != Dtype::F16 && dtype != Dtype::F32 && dtype != Dtype::F64)
        throw Error(
            fmt::format("cannot save '{}': tensors can be written as F16, F32 or F64, not {}", path,
                        dtype_name(dtype)));
    if (dtype == Dtype::F16) check_fits_half(path, tensors);
    std::string header = make_header(path, tensors, metadata, dtype);

    try {
        write_data(path, header, tensors, dtype);
    } catch (const FileError& e) {  // the file could not be written (data/file_io.h)
        throw Error(e.what(), file_error_kind(e.error_number));
    }
}

// ---- loading ---------------------------------------------------------------------------------

const Tensor* SafetensorsFile::find(const std::string& name) const {
    for (const SafetensorsTensor& t : tensors)
        if (t.name == name) return &t.value;
    return nullptr;
}

const Tensor& SafetensorsFile::at(const std::string& name) const {
    if (const Tensor* t = find(name)) return *t;
    throw Error(fmt::format("{}: no tensor named '{}'", path, name), ErrorKind::key);
}

namespace {

// A tensor's header entry, checked on its own (not yet against the other tensors).
struct HeaderEntry {
    std::string name;
    Dtype dtype;
    Shape shape;
    uint64_t begin, end;  // byte range in the data section
};

// Builds the errors of one file: "FILE: not a valid safetensors file: WHAT".
struct Invalid {
    const std::string& path;
    template <class... Args>
    Error operator()(fmt::format_string<Args...> format, Args&&... args) const {
        return Error(fmt::format("{}: not a valid safetensors file: {}", path,
                                 fmt::format(format, std::forward<Args>(args)...)));
    }
};

// A JSON value for an error message, cut short if it is long (a corrupt header can be big).
std::string excerpt(const nlohmann::ordered_json& value) {
    std::string text = value.dump();
    return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

// numel × element size, or nothing when that does not fit in 64 bits.
std::optional<uint64_t> byte_count(const std::vector<uint64_t>& dims, int element_size) {
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;
    uint64_t bytes = uint64_t(element_size);
    for (uint64_t d : dims) {
        if (bytes > std::numeric_limits<uint64_t>::max() / d) return std::nullopt;
        bytes *= d;
    }
    return bytes;
}

bool is_array_of_unsigned(const nlohmann::ordered_json& value) {
    return value.is_array() &&
           std::all_of(value.begin(), value.end(), [](auto& v) { return v.is_number_unsigned(); });
}

HeaderEntry parse_entry(const std::string& name, const nlohmann::ordered_json& value,
                        uint64_t data_size, const Invalid& invalid) {
    if (!value.is_object())
        throw invalid("tensor '{}': expected an object with dtype, shape and data_offsets, got {}",
                      name, excerpt(value));
    for (const char* key : {"dtype", "shape", "data_offsets"})
        if (!value.contains(key)) throw invalid("tensor '{}' has no '{}'", name, key);

    HeaderEntry entry;
    entry.name = name;
    const auto& dtype = value.at("dtype");
    std::optional<Dtype> known =
        dtype.is_string() ? dtype_from_name(dtype.get<std::string>()) : std::nullopt;
    if (!known)
        throw invalid("tensor '{}': unknown dtype {} (known: {})", name, excerpt(dtype),
                      supported_dtype_names());
    entry.dtype = *known;

    const auto& shape = value.at("shape");
    if (!is_array_of_unsigned(shape))
        throw invalid("tensor '{}': shape must be a list of non-negative integers, got {}", name,
                      excerpt(shape));
    if (shape.size() > size_t(Shape::kMaxRank))
        throw invalid("tensor '{}' has {} dimensions, seqgrad tensors have at most {}", name,
                      shape.size(), Shape::kMaxRank);
    std::vector<uint64_t> dims = shape.get<std::vector<uint64_t>>();

    const auto& offsets = value.at("data_offsets");
    if (!is_array_of_unsigned(offsets) || offsets.size() != 2)
        throw invalid("tensor '{}': data_offsets must be [begin, end], got {}", name,
                      excerpt(offsets));
    entry.begin = offsets[0].get<uint64_t>();
    entry.end = offsets[1].get<uint64_t>();
    if (entry.begin > entry.end || entry.end > data_size)
        throw invalid("tensor '{}': data_offsets [{}, {}] are outside the data section of {} bytes",
                      name, entry.begin, entry.end, data_size);

    std::optional<uint64_t> bytes = byte_count(dims, dtype_size(entry.dtype));
    if (bytes != entry.end - entry.begin)
        throw invalid("tensor '{}': shape {} of {} needs {} bytes, data_offsets [{}, {}] hold {}",
                      name, excerpt(shape), dtype_name(entry.dtype),
                      bytes ? std::to_string(*bytes) : "more than 2^64", entry.begin, entry.end,
                      entry.end - entry.begin);
    // Every dim now fits in int64: a non-empty tensor fits in the file, and an empty one is
    // only given a shape if its dims are representable.
    for (uint64_t d : dims) {
        if (d > uint64_t(std::numeric_limits<int64_t>::max()))
            throw invalid("tensor '{}': dimension {} is too large", name, d);
        try {  // an empty tensor's other dims can still multiply past 2^63
            entry.shape.push_back(int64_t(d));
        } catch (const Error&) {
            throw invalid("tensor '{}': shape {} is too large (its sizes multiply past 2^63)", name,
                          excerpt(shape));
        }
    }
    return entry;
}

std::map<std::string, std::string> parse_metadata(const nlohmann::ordered_json& value,
                                                  const Invalid& invalid) {
    std::map<std::string, std::string> metadata;
    if (value.is_null()) return metadata;
    if (!value.is_object())
        throw invalid("__metadata__ must be an object of strings, got {}", excerpt(value));
    for (const auto& [key, v] : value.items()) {
        if (!v.is_string())
            throw invalid("__metadata__ value of '{}' must be a string, got {}", key, excerpt(v));
        metadata[key] = v.get<std::string>();
    }
    return metadata;
}

// The data section must be covered exactly: tensors one after another from byte 0 to the end,
// no overlap, no gap (as Python's safetensors requires).
void check_layout(std::vector<HeaderEntry>& entries, uint64_t data_size, const Invalid& invalid) {
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t position = 0;
    const HeaderEntry* previous = nullptr;
    for (const HeaderEntry& e : entries) {
        if (e.begin < position)
            throw invalid("tensors '{}' [{}, {}] and '{}' [{}, {}] overlap", previous->name,
                          previous->begin, previous->end, e.name, e.begin, e.end);
        if (e.begin > position)
            throw invalid("bytes [{}, {}) of the data section belong to no tensor", position,
                          e.begin);
        position = e.end;
        previous = &e;
    }
    if (position != data_size)
        throw invalid("the data section has {} bytes but its tensors end at byte {}", data_size,
                      position);
}

}  // namespace

SafetensorsFile load_safetensors(const std::string& path) {
    const Invalid invalid{path};
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileError& e) {
        throw Error(e.what(), file_error_kind(e.error_number));
    }
    const Byte* bytes = reinterpret_cast<const Byte*>(text.data());
    if (text.size() < 8)
        throw invalid("the file has {} bytes, too short for the 8-byte header length", text.size());
    uint64_t header_length = load_little_endian(bytes, 8);
    if (header_length > text.size() - 8)
        throw invalid("header length {} is larger than the {} bytes that follow it", header_length,
                      text.size() - 8);

    const char* header_begin = text.data() + 8;
    nlohmann::ordered_json header;
    try {
        header = nlohmann::ordered_json::parse(header_begin, header_begin + header_length);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
        throw invalid("the header is not valid JSON ({})", without_exception_id(e.what()));
    }
    if (!header.is_object()) throw invalid("the header is not a JSON object");

    const Byte* data = bytes + 8 + header_length;
    const uint64_t data_size = text.size() - 8 - header_length;
    SafetensorsFile file;
    file.path = path;
    std::vector<HeaderEntry> entries;
    try {  // every JSON access below is checked first; this catches what a check missed
        for (const auto& [name, value] : header.items()) {
            if (name == "__metadata__")
                file.metadata = parse_metadata(value, invalid);
            else
                entries.push_back(parse_entry(name, value, data_size, invalid));
        }
    } catch (const nlohmann::json::exception& e) {
        throw invalid("unexpected header content ({})", without_exception_id(e.what()));
    }
    check_layout(entries, data_size, invalid);

    for (const HeaderEntry& e : entries) {
        Tensor value = Tensor::empty(e.shape);
        const int size = dtype_size(e.dtype);
        for (int64_t i = 0; i < value.numel(); ++i)
            value.data()[i] = decode_element(data + e.begin + i * size, e.dtype);
        file.tensors.push_back({e.name, e.dtype, value});
    }
    return file;
}

std::string without_exception_id(const std::string& message) {
    size_t end = message.find("] ");
    return message.rfind("[json.exception", 0) == 0 && end != std::string::npos
               ? message.substr(end + 2)
               : message;
}

}  // namespace seqgrad
