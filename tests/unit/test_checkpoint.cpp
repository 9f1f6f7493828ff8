// Tests for models/formats/safetensors.h and models/formats/checkpoint.h: bit-exact round trips,
// the exact byte layout of the format, a hand-written reference file, parameter-name/shape checks
// with their messages, corrupt files (never a crash), and atomic writes.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/layers/module.h"
#include "seqgrad/models/formats/safetensors.h"
#include "seqgrad/models/formats/checkpoint.h"

using namespace seqgrad;
namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

namespace {

// A fresh directory for one test case, removed with everything in it afterwards.
struct TempDir {
    fs::path path;
    TempDir() {
        static int counter = 0;
        path = fs::temp_directory_path() /
               fmt::format("seqgrad_test_checkpoint_{}_{}", ::getpid(), counter++);
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
    // Names of the files in the directory (to spot left-over temporary files).
    std::vector<std::string> listing() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(path))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
};

Bytes read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

uint64_t little_endian_u64(const unsigned char* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}

void append_u64(Bytes& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back((unsigned char)(v >> (8 * i)));
}

// A safetensors file from a header text (padded here) and raw data bytes.
Bytes make_file(std::string header, const Bytes& data) {
    while (header.size() % 8) header += ' ';
    Bytes out;
    append_u64(out, header.size());
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

bool same_bits(const Tensor& a, const Tensor& b) {
    if (a.shape() != b.shape()) return false;
    return a.numel() == 0 ||  // an empty tensor may have no storage at all
           std::memcmp(a.data(), b.data(), sizeof(real) * size_t(a.numel())) == 0;
}

Tensor random_tensor(const Shape& shape, uint64_t seed) {
    Rng rng(seed);
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(rng.uniform(-1, 1));
    return t;
}

// Loading `path` must throw a seqgrad::Error that names the file and contains `fragment`.
void expect_load_error(const std::string& path, const std::string& fragment) {
    CAPTURE(fragment);
    try {
        load_safetensors(path);
        FAIL("no error for a corrupt file");
    } catch (const Error& e) {
        std::string message = e.what();
        CAPTURE(message);
        CHECK(message.find(path) != std::string::npos);
        CHECK(message.find(fragment) != std::string::npos);
    }
}

// ---- a tiny model with nested sub-modules ----------------------------------------------------

struct TinyLinear : Module {
    Tensor weight, bias;
    TinyLinear(int64_t in, int64_t out, uint64_t seed) {
        weight = register_parameter("weight", random_tensor({out, in}, seed));
        bias = register_parameter("bias", random_tensor({out}, seed + 1));
    }
};

struct TinyEncoder : Module {
    TinyLinear embed, project;
    TinyEncoder(int64_t vocab, int64_t hidden, uint64_t seed)
        : embed(vocab, hidden, seed), project(hidden, hidden, seed + 10) {
        register_module("embed", embed);
        register_module("project", project);
    }
};

// Parameters: scale, encoder.embed.{weight,bias}, encoder.project.{weight,bias},
// out.{weight,bias}, and extra.{weight,bias} when `with_extra` is set.
struct TinyModel : Module {
    Tensor scale;
    TinyEncoder encoder;
    TinyLinear out;
    TinyLinear extra;
    TinyModel(int64_t vocab, int64_t hidden, uint64_t seed, bool with_extra = false)
        : encoder(vocab, hidden, seed), out(hidden, vocab, seed + 20), extra(2, 3, seed + 30) {
        scale = register_parameter("scale", Tensor::scalar(real(0.5) + real(seed)));
        register_module("encoder", encoder);
        register_module("out", out);
        if (with_extra) register_module("extra", extra);
    }
};

std::vector<std::pair<std::string, Tensor>> snapshot(const Module& model) {
    std::vector<std::pair<std::string, Tensor>> copy;
    for (const auto& [name, t] : model.named_parameters()) copy.emplace_back(name, t.detach());
    return copy;
}

bool same_parameters(const Module& a, const Module& b) {
    auto pa = a.named_parameters(), pb = b.named_parameters();
    if (pa.size() != pb.size()) return false;
    for (size_t i = 0; i < pa.size(); ++i)
        if (pa[i].first != pb[i].first || !same_bits(pa[i].second, pb[i].second)) return false;
    return true;
}

}  // namespace

// ---- safetensors -----------------------------------------------------------------------------

TEST_CASE("dtype names and sizes follow the format") {
    CHECK(std::string(dtype_name(Dtype::F32)) == "F32");
    CHECK(std::string(dtype_name(Dtype::BF16)) == "BF16");
    CHECK(dtype_size(Dtype::F64) == 8);
    CHECK(dtype_size(Dtype::F16) == 2);
    CHECK(dtype_size(Dtype::BOOL) == 1);
    for (Dtype d :
         {Dtype::BOOL, Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32,
          Dtype::U64, Dtype::I64, Dtype::F16, Dtype::BF16, Dtype::F32, Dtype::F64})
        CHECK(dtype_from_name(dtype_name(d)) == d);
    CHECK_FALSE(dtype_from_name("F8_E4M3").has_value());
    CHECK(kNativeDtype == (sizeof(real) == 4 ? Dtype::F32 : Dtype::F64));
}

TEST_CASE("a round trip is bit-exact: special values, scalars, empty tensors, file order") {
    TempDir dir;
    const real inf = std::numeric_limits<real>::infinity();
    const real denormal = std::numeric_limits<real>::denorm_min();
    std::vector<std::pair<std::string, Tensor>> tensors = {
        {"special", Tensor::from_vector(
                        {9}, {real(-0.0), real(0.0), denormal, -denormal * 7, inf, -inf,
                              std::numeric_limits<real>::max(), std::numeric_limits<real>::lowest(),
                              std::numeric_limits<real>::quiet_NaN()})},
        {"scalar", Tensor::scalar(real(-1.0) / 3)},
        {"empty", Tensor::zeros({0})},
        {"empty_matrix", Tensor::zeros({2, 0})},
        {"matrix", random_tensor({3, 5}, 1)},
        {"cube", random_tensor({2, 3, 4}, 2)},
        {"rank4", random_tensor({2, 1, 3, 2}, 3)},
        {"a.z.late_name", random_tensor({1}, 4)},  // file order is not alphabetical
        {"nom_accentué", random_tensor({2}, 5)},
    };
    std::map<std::string, std::string> metadata = {{"epoch", "3"}, {"note", "début"}};
    const std::string path = dir.file("round_trip.safetensors");
    save_safetensors(path, tensors, metadata);

    SafetensorsFile file = load_safetensors(path);
    CHECK(file.path == path);
    CHECK(file.metadata == metadata);
    REQUIRE(file.tensors.size() == tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        CAPTURE(tensors[i].first);
        CHECK(file.tensors[i].name == tensors[i].first);
        CHECK(file.tensors[i].stored_dtype == kNativeDtype);
        CHECK(same_bits(file.tensors[i].value, tensors[i].second));
        CHECK_FALSE(file.tensors[i].value.requires_grad());
    }
    CHECK(std::signbit(file.at("special").data()[0]));
    CHECK(file.at("scalar").rank() == 0);
    CHECK(file.at("empty_matrix").shape() == Shape{2, 0});
    CHECK(file.find("nothing") == nullptr);
    CHECK_THROWS_WITH_AS(file.at("nothing"), doctest::Contains("no tensor named 'nothing'"), Error);
}

TEST_CASE("saving as F32 rounds to float, and a file may hold no tensors and no metadata") {
    TempDir dir;
    const std::string path = dir.file("f32.safetensors");
    Tensor t = Tensor::from_vector({3}, {real(0.1), real(-1e-40), real(1e300)});
    save_safetensors(path, {{"t", t}}, {}, Dtype::F32);
    SafetensorsFile file = load_safetensors(path);
    CHECK(file.tensors[0].stored_dtype == Dtype::F32);
    CHECK(file.at("t").data()[0] == real(float(0.1)));
    CHECK(file.at("t").data()[1] == real(float(-1e-40)));  // a float denormal
    CHECK(file.at("t").data()[2] == std::numeric_limits<real>::infinity());
    CHECK_THROWS_WITH_AS(save_safetensors(path, {{"t", t}}, {}, Dtype::I64),
                         doctest::Contains("F16, F32 or F64, not I64"), Error);

    save_safetensors(path, {}, {});
    SafetensorsFile nothing = load_safetensors(path);
    CHECK(nothing.tensors.empty());
    CHECK(nothing.metadata.empty());
}

TEST_CASE("the header layout is exactly the format's") {
    TempDir dir;
    const std::string path = dir.file("layout.safetensors");
    std::vector<std::pair<std::string, Tensor>> tensors = {
        {"w", Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, -2.5})},
        {"s", Tensor::scalar(7)},
        {"e", Tensor::zeros({0, 4})},
        {"b", Tensor::from_vector({1}, {0.25})},
    };
    save_safetensors(path, tensors, {{"k", "v"}});
    Bytes bytes = read_bytes(path);

    REQUIRE(bytes.size() >= 8);
    const uint64_t header_length = little_endian_u64(bytes.data());
    CHECK(header_length % 8 == 0);
    REQUIRE(8 + header_length <= bytes.size());
    std::string header_text(bytes.begin() + 8, bytes.begin() + 8 + long(header_length));
    CHECK(header_text.front() == '{');
    // Padding is spaces after the JSON, nothing else.
    size_t json_end = header_text.find_last_not_of(' ');
    CHECK(header_text[json_end] == '}');
    CHECK(header_text.size() - json_end - 1 < 8);

    auto header = nlohmann::ordered_json::parse(header_text);
    std::vector<std::string> keys;
    for (const auto& [key, value] : header.items()) keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"__metadata__", "w", "s", "e", "b"});
    CHECK(header["__metadata__"] == nlohmann::ordered_json{{"k", "v"}});

    const int size = dtype_size(kNativeDtype);
    uint64_t expected_begin = 0;
    for (const auto& [name, tensor] : tensors) {
        CAPTURE(name);
        const auto& entry = header[name];
        CHECK(entry["dtype"] == dtype_name(kNativeDtype));
        CHECK(entry["shape"] == std::vector<int64_t>(tensor.shape().begin(), tensor.shape().end()));
        CHECK(entry["data_offsets"][0] == expected_begin);  // contiguous, no gap
        expected_begin += uint64_t(tensor.numel()) * size;
        CHECK(entry["data_offsets"][1] == expected_begin);
    }
    CHECK(header["s"]["shape"] == nlohmann::json::array());
    CHECK(8 + header_length + expected_begin == bytes.size());  // no trailing bytes

    // The last value of "w", -2.5, in little-endian IEEE bytes.
    const unsigned char* data = bytes.data() + 8 + header_length;
    uint64_t bits = 0;
    for (int i = 0; i < size; ++i) bits |= uint64_t(data[5 * size + i]) << (8 * i);
    if (size == 8) CHECK(bits == 0xC004000000000000ull);
    if (size == 4) CHECK(bits == 0xC0200000ull);
}

TEST_CASE("a file laid out as Python's safetensors writes it loads, in every dtype") {
    // What safetensors.torch.save_file writes: compact JSON, data ordered by the writer (here
    // not in header order), padding with spaces. Values: F16 [1, -2, 65504, 2^-24, -inf],
    // BF16 [1, -0.5], I64 [-3], BOOL [true, false], F32 [[1.5], [-0.0]], I8 [-128], U8 [255].
    std::string header =
        R"({"__metadata__":{"format":"pt"},"bf":{"dtype":"BF16","shape":[2],"data_offsets":[10,14]},)"
        R"("half":{"dtype":"F16","shape":[5],"data_offsets":[0,10]},)"
        R"("i64":{"dtype":"I64","shape":[],"data_offsets":[14,22]},)"
        R"("flags":{"dtype":"BOOL","shape":[2],"data_offsets":[22,24]},)"
        R"("f32":{"dtype":"F32","shape":[2,1],"data_offsets":[24,32]},)"
        R"("i8":{"dtype":"I8","shape":[1],"data_offsets":[32,33]},)"
        R"("u8":{"dtype":"U8","shape":[1,1],"data_offsets":[33,34]}})";
    Bytes data = {
        0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B, 0x01, 0x00, 0x00, 0xFC,  // F16
        0x80, 0x3F, 0x00, 0xBF,                                      // BF16
        0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,              // I64 -3
        0x01, 0x00,                                                  // BOOL
        0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0x80,              // F32 1.5, -0.0
        0x80, 0xFF,                                                  // I8 -128, U8 255
    };
    TempDir dir;
    const std::string path = dir.file("python.safetensors");
    write_bytes(path, make_file(header, data));

    SafetensorsFile file = load_safetensors(path);
    CHECK(file.metadata.at("format") == "pt");
    std::vector<std::string> names;
    for (const auto& t : file.tensors) names.push_back(t.name);
    // In the order of their data, not of the header.
    CHECK(names == std::vector<std::string>{"half", "bf", "i64", "flags", "f32", "i8", "u8"});
    CHECK(file.tensors[0].stored_dtype == Dtype::F16);
    CHECK(file.at("half").to_vector() == std::vector<real>{1, -2, 65504, std::ldexp(real(1), -24),
                                                           -std::numeric_limits<real>::infinity()});
    CHECK(file.at("bf").to_vector() == std::vector<real>{1, -0.5});
    CHECK(file.at("i64").rank() == 0);
    CHECK(file.at("i64").item() == -3);
    CHECK(file.at("flags").to_vector() == std::vector<real>{1, 0});
    CHECK(file.at("f32").shape() == Shape{2, 1});
    CHECK(file.at("f32").data()[0] == 1.5);
    CHECK(std::signbit(file.at("f32").data()[1]));
    CHECK(file.at("i8").item() == -128);
    CHECK(file.at("u8").item() == 255);
}

TEST_CASE("corrupt files give an Error naming the file and what is wrong") {
    TempDir dir;
    const std::string valid_path = dir.file("valid.safetensors");
    save_safetensors(valid_path, {{"a", random_tensor({2, 3}, 1)}, {"b", random_tensor({4}, 2)}},
                     {{"k", "v"}});
    const Bytes valid = read_bytes(valid_path);
    const uint64_t header_length = little_endian_u64(valid.data());
    const std::string path = dir.file("corrupt.safetensors");
    auto check_bytes = [&](const Bytes& bytes, const std::string& fragment) {
        write_bytes(path, bytes);
        expect_load_error(path, fragment);
    };
    auto check_header = [&](const std::string& header, const std::string& fragment,
                            Bytes data = Bytes(16)) {
        check_bytes(make_file(header, data), fragment);
    };

    SUBCASE("missing file") {
        expect_load_error(dir.file("absent"), "no such file");
    }
    SUBCASE("empty and too short") {
        check_bytes({}, "too short");
        check_bytes({1, 0, 0}, "too short");
    }
    SUBCASE("truncated header") {
        check_bytes(Bytes(valid.begin(), valid.begin() + 8 + long(header_length) / 2),
                    "header length");
    }
    SUBCASE("truncated data") {
        check_bytes(Bytes(valid.begin(), valid.end() - 3), "outside the data section");
    }
    SUBCASE("trailing bytes") {
        Bytes longer = valid;
        longer.push_back(0);
        check_bytes(longer, "tensors end at byte");
    }
    SUBCASE("header length larger than the file") {
        Bytes bytes = valid;
        for (int i = 0; i < 8; ++i) bytes[i] = 0xFF;
        check_bytes(bytes, "header length 18446744073709551615 is larger");
    }
    SUBCASE("header not JSON, not an object") {
        check_header("hello", "not valid JSON");
        check_header("{\"a\": ", "not valid JSON");
        check_header("[1, 2]", "not a JSON object");
        check_header("", "not valid JSON");
    }
    SUBCASE("entries without dtype, shape or data_offsets") {
        check_header(R"({"a":{"shape":[4],"data_offsets":[0,16]}})", "tensor 'a' has no 'dtype'");
        check_header(R"({"a":{"dtype":"F32","data_offsets":[0,16]}})", "has no 'shape'");
        check_header(R"({"a":{"dtype":"F32","shape":[4]}})", "has no 'data_offsets'");
        check_header(R"({"a":[1,2]})", "expected an object");
    }
    SUBCASE("bad dtype, shape or offsets") {
        check_header(R"({"a":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}})",
                     "unknown dtype \"F8_E4M3\"", Bytes(4));
        check_header(R"({"a":{"dtype":32,"shape":[4],"data_offsets":[0,16]}})", "unknown dtype");
        check_header(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})",
                     "non-negative integers");
        check_header(R"({"a":{"dtype":"F32","shape":[4.0],"data_offsets":[0,16]}})",
                     "non-negative integers");
        check_header(R"({"a":{"dtype":"F32","shape":"4","data_offsets":[0,16]}})",
                     "non-negative integers");
        check_header(R"({"a":{"dtype":"F32","shape":[1,1,1,1,4],"data_offsets":[0,16]}})",
                     "5 dimensions");
        check_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0]}})",
                     "data_offsets must be [begin, end]");
        check_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}})",
                     "outside the data section");
        check_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,1000]}})",
                     "outside the data section");
        check_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})",
                     "needs 12 bytes, data_offsets [0, 16] hold 16");
        check_header(
            R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,2],"data_offsets":[0,16]}})",
            "more than 2^64");
    }
    SUBCASE("overlapping offsets and gaps") {
        check_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                     R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                     "tensors 'a' [0, 8] and 'b' [4, 12] overlap", Bytes(12));
        check_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                     R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                     "bytes [8, 12) of the data section belong to no tensor");
    }
    SUBCASE("sizes that overflow, found by fault testing") {
        // Issue 17: a number too large for a double escaped as nlohmann's out_of_range.406,
        // naming no file; an empty tensor's other dims overflowed Shape::numel (UBSan).
        check_header(R"({"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,16]}})",
                     "the header is not valid JSON");
        check_header(R"({"__metadata__":{"k":"v"},"x":1e400})", "the header is not valid JSON");
        check_header(
            R"({"a":{"dtype":"F32","shape":[4611686018427387904,4,0],"data_offsets":[0,0]}})",
            "is too large", Bytes());
        check_header(
            R"({"a":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}})",
            "is too large", Bytes());
    }
    SUBCASE("bad metadata") {
        check_header(R"({"__metadata__":{"k":1}})", "must be a string", Bytes());
        check_header(R"({"__metadata__":[1]})", "must be an object of strings", Bytes());
    }
}

TEST_CASE("no truncation, byte flip or garbage file crashes the loader") {
    TempDir dir;
    const std::string valid_path = dir.file("valid.safetensors");
    save_safetensors(
        valid_path,
        {{"x", random_tensor({3, 4}, 1)}, {"y", Tensor::scalar(2)}, {"z", Tensor::zeros({0})}},
        {{"note", "fuzz"}});
    const Bytes valid = read_bytes(valid_path);
    const std::string path = dir.file("fuzz.safetensors");
    int errors = 0, loaded = 0;
    auto try_load = [&](const Bytes& bytes) {
        // A new file each time: ext4 flushes a file truncated and rewritten in place, slowly.
        fs::remove(path);
        write_bytes(path, bytes);
        try {
            load_safetensors(path);
            ++loaded;
        } catch (const Error& e) {
            ++errors;
            CHECK(std::string(e.what()).find(path) != std::string::npos);
        }
        // Any other exception type escapes and fails the test.
    };

    for (size_t length = 0; length < valid.size(); ++length)
        try_load(Bytes(valid.begin(), valid.begin() + long(length)));
    CHECK(loaded == 0);  // every truncation is detected

    Rng rng(7);
    for (int trial = 0; trial < 1000; ++trial) {
        Bytes bytes = valid;
        int flips = 1 + int(rng.below(3));
        for (int f = 0; f < flips; ++f)
            bytes[rng.below(bytes.size())] = (unsigned char)rng.below(256);
        try_load(bytes);
    }
    for (int trial = 0; trial < 200; ++trial) {
        Bytes garbage(rng.below(200));
        for (auto& b : garbage) b = (unsigned char)rng.below(256);
        if (garbage.size() >= 8 && trial % 2) {  // a plausible header length
            uint64_t n = rng.below(garbage.size() - 7);
            for (int i = 0; i < 8; ++i) garbage[i] = (unsigned char)(n >> (8 * i));
        }
        try_load(garbage);
    }
    CHECK(errors > 0);
}

TEST_CASE("saving is atomic: a failed save leaves the old file intact and no temporary file") {
    TempDir dir;
    const std::string path = dir.file("model.safetensors");
    save_safetensors(path, {{"old", Tensor::from_vector({2}, {1, 2})}}, {});
    const Bytes old_bytes = read_bytes(path);
    bool save_succeeds = false;

    SUBCASE("overwriting succeeds") {
        save_safetensors(path, {{"new", Tensor::from_vector({1}, {3})}}, {});
        CHECK(load_safetensors(path).at("new").item() == 3);
        save_succeeds = true;
    }
    SUBCASE("a directory that does not exist") {
        const std::string bad = dir.file("no/such/dir/model.safetensors");
        CHECK_THROWS_WITH_AS(
            save_safetensors(bad, {{"t", Tensor::scalar(1)}}, {}),
            doctest::Contains((bad + ": cannot create the temporary file").c_str()), Error);
        CHECK_THROWS_WITH_AS(save_safetensors(bad, {{"t", Tensor::scalar(1)}}, {}),
                             doctest::Contains("No such file or directory"), Error);
    }
    SUBCASE("bad names are refused before anything is written") {
        Tensor t = Tensor::scalar(1);
        CHECK_THROWS_WITH_AS(save_safetensors(path, {{"a", t}, {"a", t}}, {}),
                             doctest::Contains("two tensors are named 'a'"), Error);
        CHECK_THROWS_WITH_AS(save_safetensors(path, {{"__metadata__", t}}, {}),
                             doctest::Contains("reserved"), Error);
        CHECK_THROWS_WITH_AS(save_safetensors(path, {{"bad\xff", t}}, {}),
                             doctest::Contains("not valid UTF-8"), Error);
        CHECK_THROWS_WITH_AS(save_safetensors(path, {{"u", Tensor()}}, {}),
                             doctest::Contains("'u' is undefined"), Error);
    }
    SUBCASE("the disk fills up half-way through") {
        // A file-size limit makes writes fail with EFBIG after 4 KB, like a full disk.
        auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit old_limit{};
        REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
        rlimit small = old_limit;
        small.rlim_cur = 4096;
        REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
        std::string message;
        try {
            save_safetensors(path, {{"big", random_tensor({100, 100}, 3)}}, {});
        } catch (const Error& e) {
            message = e.what();
        }
        setrlimit(RLIMIT_FSIZE, &old_limit);
        std::signal(SIGXFSZ, old_handler);
        CAPTURE(message);
        CHECK(message.find(path) != std::string::npos);
        CHECK(message.find("too large") != std::string::npos);  // strerror(EFBIG)
    }
    SUBCASE("the destination is a directory: the rename fails") {
        const std::string directory_path = dir.file("a_directory");
        fs::create_directory(directory_path);
        fs::copy_file(path, directory_path + "/inside");
        CHECK_THROWS_WITH_AS(save_safetensors(directory_path, {{"t", Tensor::scalar(1)}}, {}),
                             doctest::Contains("cannot rename"), Error);
        CHECK(fs::is_directory(directory_path));
        fs::remove_all(directory_path);
    }
    CHECK((read_bytes(path) == old_bytes) != save_succeeds);
    CHECK(dir.listing() == std::vector<std::string>{"model.safetensors"});  // no temporary file
}

// ---- checkpoints -----------------------------------------------------------------------------

TEST_CASE("a checkpoint stores parameters under hierarchical names, then the extra tensors") {
    TempDir dir;
    const std::string path = dir.file("ckpt.safetensors");
    TinyModel model(6, 4, 1);
    std::vector<std::pair<std::string, Tensor>> extras = {
        {"optimizer.exp_avg.out.weight", random_tensor({6, 4}, 9)},
        {"optimizer.step", Tensor::scalar(12)},
    };
    Rng rng(42);
    rng.next_u64();
    nlohmann::json metadata = {{"step", 12}, {"lr", 0.001}, {"rng", rng_state_to_json(rng)}};
    save_checkpoint(path, model, extras, metadata);

    SafetensorsFile file = load_safetensors(path);
    std::vector<std::string> names;
    for (const auto& t : file.tensors) names.push_back(t.name);
    CHECK(names == std::vector<std::string>{"scale", "encoder.embed.weight", "encoder.embed.bias",
                                            "encoder.project.weight", "encoder.project.bias",
                                            "out.weight", "out.bias",
                                            "optimizer.exp_avg.out.weight", "optimizer.step"});
    CHECK(file.at("encoder.embed.weight").shape() == Shape{4, 6});
    CHECK(same_bits(file.at("optimizer.exp_avg.out.weight"), extras[0].second));
    CHECK(file.metadata.at("format") == "pt");
    CHECK(checkpoint_extra_tensor_names(file) ==
          std::vector<std::string>{"optimizer.exp_avg.out.weight", "optimizer.step"});

    nlohmann::json restored = checkpoint_metadata(file);
    CHECK(restored == metadata);
    CHECK(restored["lr"].get<double>() == 0.001);
    Rng resumed;
    resumed.set_state(rng_state_from_json(restored["rng"]));
    CHECK(resumed.next_u64() == rng.next_u64());

    // Into a differently initialised model of the same architecture: bit-exact.
    TinyModel other(6, 4, 2);
    CHECK_FALSE(same_parameters(model, other));
    load_parameters(file, other);
    CHECK(same_parameters(model, other));
    CHECK(other.scale.requires_grad());

    CHECK_THROWS_WITH_AS(save_checkpoint(path, model, {{"out.bias", Tensor::zeros({6})}}, {}),
                         doctest::Contains("two tensors are named 'out.bias'"), Error);
}

TEST_CASE("load_parameters says exactly what differs and copies nothing on a mismatch") {
    TempDir dir;
    const std::string path = dir.file("ckpt.safetensors");
    TinyModel saved(6, 4, 1);
    save_checkpoint(path, saved, {{"optimizer.exp_avg.scale", Tensor::scalar(0)}}, {});
    SafetensorsFile file = load_safetensors(path);

    auto expect_mismatch = [&](Module& model, std::vector<std::string> fragments) {
        auto before = snapshot(model);
        try {
            load_parameters(file, model);
            FAIL("no error for a mismatching model");
        } catch (const Error& e) {
            std::string message = e.what();
            CAPTURE(message);
            CHECK(message.find(path + " does not match the model") != std::string::npos);
            for (const auto& fragment : fragments)
                CHECK(message.find("\n  " + fragment) != std::string::npos);
            CHECK(message.find("optimizer") == std::string::npos);  // extras are not parameters
        }
        auto after = model.named_parameters();
        for (size_t i = 0; i < before.size(); ++i)
            CHECK(same_bits(before[i].second, after[i].second));
    };

    SUBCASE("wrong shapes") {
        TinyModel smaller_vocab(5, 4, 2);
        expect_mismatch(smaller_vocab, {"encoder.embed.weight: given [4,6], model expects [4,5]",
                                        "out.weight: given [6,4], model expects [5,4]",
                                        "out.bias: given [6], model expects [5]"});
    }
    SUBCASE("missing parameters") {
        TinyModel bigger(6, 4, 2, /*with_extra=*/true);
        expect_mismatch(bigger, {"missing: extra.weight (model expects [3,2])",
                                 "missing: extra.bias (model expects [3])"});
    }
    SUBCASE("unexpected tensors") {
        TinyModel with_extra(6, 4, 3, true);
        save_checkpoint(path, with_extra, {}, {});
        file = load_safetensors(path);
        TinyModel plain(6, 4, 4);
        expect_mismatch(plain, {"unexpected: extra.weight [3,2]", "unexpected: extra.bias [3]"});
    }
    SUBCASE("at most 10 differences are listed") {
        std::vector<std::pair<std::string, Tensor>> junk;
        for (int i = 0; i < 13; ++i)
            junk.emplace_back(fmt::format("junk{}", i), Tensor::zeros({1}));
        save_safetensors(path, junk, {});
        file = load_safetensors(path);
        TinyModel model(6, 4, 5);
        // 7 missing parameters + 13 unexpected tensors
        expect_mismatch(model, {"missing: scale (model expects [])", "... and 10 more"});
        CHECK_THROWS_WITH_AS(load_parameters(file, model), doctest::Contains("(20 differences)"),
                             Error);
    }
}

TEST_CASE("a plain safetensors state dict (no seqgrad metadata) loads into a model") {
    TempDir dir;
    const std::string path = dir.file("state_dict.safetensors");
    TinyModel source(3, 2, 1);
    save_safetensors(path, source.named_parameters(), {}, Dtype::F64);
    SafetensorsFile file = load_safetensors(path);
    CHECK(checkpoint_metadata(file) == nlohmann::json::object());
    CHECK(checkpoint_extra_tensor_names(file).empty());
    TinyModel target(3, 2, 2);
    load_parameters(file, target);
    CHECK(same_parameters(source, target));

    file.metadata["seqgrad"] = "{not json";
    CHECK_THROWS_WITH_AS(checkpoint_metadata(file), doctest::Contains("is not valid JSON"), Error);
    file.metadata["seqgrad"] = R"({"progress": 1e400})";  // out_of_range, not a parse_error
    CHECK_THROWS_WITH_AS(checkpoint_metadata(file), doctest::Contains(path.c_str()), Error);
    file.metadata["seqgrad.extra_tensors"] = "[1]";
    CHECK_THROWS_WITH_AS(checkpoint_extra_tensor_names(file),
                         doctest::Contains("must be a list of tensor names"), Error);
}

TEST_CASE("an RNG state travels as four decimal strings") {
    Rng rng;
    rng.set_state({0, 1, 0x123456789abcdef0ull, std::numeric_limits<uint64_t>::max()});
    nlohmann::json state = rng_state_to_json(rng);
    CHECK(state == nlohmann::json{"0", "1", "1311768467463790320", "18446744073709551615"});
    CHECK(rng_state_from_json(state) == rng.state());
    // Through text, as in a checkpoint's metadata.
    CHECK(rng_state_from_json(nlohmann::json::parse(state.dump())) == rng.state());

    for (const char* bad : {R"(["1","2","3"])", R"([1,2,3,4])", R"(["1","2","3","-4"])",
                            R"(["1","2","3","18446744073709551616"])", R"(["1","2","3","4x"])",
                            R"(["1","2","3",""])", R"({"a":1})"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS(rng_state_from_json(nlohmann::json::parse(bad)),
                             doctest::Contains("four decimal u64 strings"), Error);
    }
}

// ---- non-finite values -----------------------------------------------------------------------

TEST_CASE("a checkpoint holding NaN or ±Inf is refused: file, tensor, first index, count") {
    TempDir dir;
    const std::string path = dir.file("best.safetensors");
    TinyModel model(6, 4, 1);  // encoder.embed.weight [4,6], encoder.embed.bias [4]
    const std::vector<std::pair<std::string, Tensor>> moments = {
        {"optimizer.exp_avg_sq.out.weight", random_tensor({6, 4}, 9)}};
    const real bad_values[] = {std::numeric_limits<real>::quiet_NaN(),
                               std::numeric_limits<real>::infinity(),
                               -std::numeric_limits<real>::infinity()};
    const char* bad_names[] = {"NaN", "+Inf", "-Inf"};
    struct Where {
        std::string tensor;
        int64_t first, second;  // flat indices of the two bad values
        std::string index;      // the first one, per dimension
    };
    const Where places[] = {{"encoder.embed.weight", 13, 20, "index 13 ([2, 1])"},
                            {"encoder.embed.bias", 2, 3, "index 2 ([2])"},
                            {"optimizer.exp_avg_sq.out.weight", 5, 23, "index 5 ([1, 1])"}};
    for (int v = 0; v < 3; ++v) {
        for (const Where& where : places) {
            CAPTURE(bad_names[v]);
            CAPTURE(where.tensor);
            // The file is written as a damaged disk or a diverged run leaves it:
            // save_checkpoint itself refuses, so the tensors go through the format directly.
            std::vector<std::pair<std::string, Tensor>> tensors = snapshot(model);
            tensors.emplace_back(moments[0].first, moments[0].second.detach());
            for (auto& [name, t] : tensors) {
                if (name != where.tensor) continue;
                t = t.detach();
                t.data()[where.first] = bad_values[v];
                t.data()[where.second] = bad_values[2 - v];
            }
            save_safetensors(path, tensors,
                             {{"seqgrad.extra_tensors", "[\"" + moments[0].first + "\"]"}});

            std::string message;
            try {
                load_checkpoint(path);
            } catch (const Error& e) {
                message = e.what();
            }
            CAPTURE(message);
            CHECK(message.find(path + ": tensor '" + where.tensor + "'") != std::string::npos);
            CHECK(message.find("holds 2 non-finite values") != std::string::npos);
            CHECK(message.find(fmt::format("the first is {} at {}", bad_names[v], where.index)) !=
                  std::string::npos);

            // A model loaded through load_parameters (the library's load_state) refuses its
            // weights too and keeps the ones it had; the optimizer's moments are not parameters.
            TinyModel other(6, 4, 2);
            const std::vector<std::pair<std::string, Tensor>> before = snapshot(other);
            const SafetensorsFile file = load_safetensors(path);
            if (where.tensor.rfind("optimizer.", 0) == 0) {
                load_parameters(file, other);
                CHECK(same_parameters(model, other));
                continue;
            }
            CHECK_THROWS_WITH_AS(
                load_parameters(file, other),
                doctest::Contains((path + ": tensor '" + where.tensor + "'").c_str()), Error);
            for (size_t i = 0; i < before.size(); ++i)
                CHECK(same_bits(other.named_parameters()[i].second, before[i].second));
        }
    }
}

TEST_CASE("Module::load_state refuses a non-finite value and copies nothing") {
    TinyModel model(6, 4, 1), other(6, 4, 2);
    StateDict state = model.state();
    state.at("out.bias").data()[5] = std::numeric_limits<real>::infinity();
    const StateDict before = other.state();
    CHECK_THROWS_WITH_AS(
        other.load_state(state, "weights.bin"),
        doctest::Contains("weights.bin: tensor 'out.bias' [6] holds 1 non-finite value (NaN or "
                          "±Inf) of 6; the first is +Inf at index 5 ([5])"),
        Error);
    for (const auto& [name, value] : other.state()) CHECK(same_bits(value, before.at(name)));
}

TEST_CASE("a non-finite model is never saved: the old best stays as it was") {
    TempDir dir;
    const std::string path = dir.file("best.safetensors");
    TinyModel model(6, 4, 1);
    const Tensor moment = random_tensor({6, 4}, 9);
    save_checkpoint(path, model, {{"optimizer.exp_avg.out.weight", moment}}, {{"step", 1}});
    const Bytes good = read_bytes(path);

    SUBCASE("NaN in a weight") {
        model.out.weight.data()[7] = std::numeric_limits<real>::quiet_NaN();
        CHECK_THROWS_WITH_AS(
            save_checkpoint(path, model, {{"optimizer.exp_avg.out.weight", moment}}, {}),
            doctest::Contains(
                ("cannot save '" + path + "': tensor 'out.weight' [6,4] holds 1 non-finite value")
                    .c_str()),
            Error);
    }
    SUBCASE("-Inf in an optimizer moment") {
        Tensor bad = moment.detach();
        bad.data()[0] = -std::numeric_limits<real>::infinity();
        CHECK_THROWS_WITH_AS(
            save_checkpoint(path, model, {{"optimizer.exp_avg.out.weight", bad}}, {}),
            doctest::Contains("tensor 'optimizer.exp_avg.out.weight' [6,4] holds 1 non-finite "
                              "value (NaN or ±Inf) of 24; the first is -Inf at index 0"),
            Error);
    }
    CHECK(read_bytes(path) == good);
    CHECK(dir.listing() == std::vector<std::string>{"best.safetensors"});  // no temporary file
    CHECK(load_checkpoint(path).tensors.size() == 8);
}
