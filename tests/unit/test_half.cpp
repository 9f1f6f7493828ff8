// Tests for IEEE half precision in models/formats/safetensors.h: the rounding to nearest, ties to
// even, checked on every half (round trips, midpoints and their neighbours), the edge values
// (subnormals, the largest half, overflow, NaN, signed zero), and F16 files and checkpoints:
// what they hold, and the values they refuse, by tensor and index.
#include <doctest/doctest.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "seqgrad/autograd/rng.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/models/formats/checkpoint.h"
#include "seqgrad/models/formats/safetensors.h"
#include "temp_dir.h"

using namespace seqgrad;
using seqgrad::testing::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr uint16_t kInf = 0x7c00, kLargest = 0x7bff, kSmallestNormal = 0x0400;
const double kSmallestSubnormal = std::ldexp(1.0, -24);

}  // namespace

TEST_CASE("every finite half survives a round trip through double, and its bits are kept") {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const uint16_t bits = uint16_t(h);
        if ((bits & 0x7c00) == 0x7c00) continue;  // inf and NaN: below
        CAPTURE(bits);
        const double value = from_half_bits(bits);
        REQUIRE(to_half_bits(value) == bits);
        REQUIRE(to_half_bits(double(float(value))) == bits);  // exact as a float too
    }
    CHECK(to_half_bits(-0.0) == 0x8000);
    CHECK(std::signbit(from_half_bits(0x8000)));
    CHECK(from_half_bits(kLargest) == 65504);
    CHECK(from_half_bits(1) == kSmallestSubnormal);
    CHECK(from_half_bits(kSmallestNormal) == std::ldexp(1.0, -14));
}

TEST_CASE("a value between two halves goes to the nearer one, a tie to the even one") {
    // Every pair of neighbouring positive halves, subnormal and normal, and their negatives.
    for (uint16_t low = 0; low < kLargest; ++low) {
        CAPTURE(low);
        const double a = from_half_bits(low), b = from_half_bits(uint16_t(low + 1));
        const double middle = (a + b) / 2;  // exact in double
        const uint16_t even = (low & 1) ? uint16_t(low + 1) : low;
        REQUIRE(to_half_bits(middle) == even);
        REQUIRE(to_half_bits(-middle) == (even | 0x8000));
        REQUIRE(to_half_bits(std::nextafter(middle, 0.0)) == low);
        REQUIRE(to_half_bits(std::nextafter(middle, 1e9)) == uint16_t(low + 1));
        // the float next to the middle (what a float weight may hold)
        REQUIRE(to_half_bits(double(std::nextafter(float(middle), 0.0f))) == low);
        REQUIRE(to_half_bits(double(std::nextafter(float(middle), 1e9f))) == uint16_t(low + 1));
    }
}

TEST_CASE("the edges: the smallest subnormal, underflow to zero, the largest half, overflow") {
    CHECK(to_half_bits(kSmallestSubnormal) == 1);
    CHECK(to_half_bits(kSmallestSubnormal / 2) == 0);  // a tie: to even, zero
    CHECK(to_half_bits(-kSmallestSubnormal / 2) == 0x8000);
    CHECK(to_half_bits(std::nextafter(kSmallestSubnormal / 2, 1.0)) == 1);
    CHECK(to_half_bits(1.5 * kSmallestSubnormal) == 2);  // a tie between 1 and 2: to 2
    CHECK(to_half_bits(1e-10) == 0);
    CHECK(to_half_bits(double(std::numeric_limits<float>::denorm_min())) == 0);
    // the largest subnormal plus half a step: a tie between 0x3ff and 0x400, to the normal one
    CHECK(to_half_bits(1023.5 * kSmallestSubnormal) == kSmallestNormal);
    CHECK(to_half_bits(65504) == kLargest);
    CHECK(to_half_bits(65519.99) == kLargest);
    CHECK(to_half_bits(65520) == kInf);  // a tie between 65504 and 65536 (inf): to even, inf
    CHECK(to_half_bits(-1e6) == (kInf | 0x8000));
    CHECK(to_half_bits(std::numeric_limits<double>::infinity()) == kInf);
    CHECK(to_half_bits(1.0) == 0x3c00);
    CHECK(to_half_bits(-2.0) == 0xc000);
    CHECK(to_half_bits(0.1) == 0x2e66);  // 0.0999755859375, the nearer of 0x2e66 and 0x2e67
    const uint16_t nan = to_half_bits(std::numeric_limits<double>::quiet_NaN());
    CHECK((nan & 0x7c00) == 0x7c00);
    CHECK((nan & 0x3ff) != 0);
    CHECK(std::isnan(from_half_bits(nan)));
    CHECK(std::isinf(from_half_bits(kInf)));
    CHECK(round_to_half(0.1) == 0.0999755859375);
}

TEST_CASE("an F16 file holds each value rounded to the nearest half, two bytes each") {
    TempDir dir("half_file");
    const std::string path = dir.file("half.safetensors");
    const std::vector<real> values = {
        real(0.1),  real(-3.0e-6), real(65504),  real(-65519),
        real(1e-9), real(-0.0),    real(3.5e-8), std::numeric_limits<real>::infinity()};
    const Tensor t = Tensor::from_vector({2, 4}, values);
    save_safetensors(path, {{"t", t}}, {{"k", "v"}}, Dtype::F16);
    const SafetensorsFile file = load_safetensors(path);
    CHECK(file.tensors[0].stored_dtype == Dtype::F16);
    CHECK(file.at("t").shape() == Shape{2, 4});
    for (size_t i = 0; i < values.size(); ++i) {
        CAPTURE(i);
        CHECK(file.at("t").data()[i] == real(round_to_half(double(values[i]))));
    }
    CHECK(std::signbit(file.at("t").data()[5]));
    CHECK(file.at("t").data()[6] ==
          real(kSmallestSubnormal));  // 3.5e-8 (past 2^-25) rounds up to 2^-24
    CHECK(file.metadata.at("k") == "v");
    // 8 values of 2 bytes after the 8-byte length and the header
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    uint64_t header_length = 0;
    in.seekg(0);
    for (int i = 0; i < 8; ++i) header_length |= uint64_t(uint8_t(in.get())) << (8 * i);
    CHECK(uint64_t(fs::file_size(path)) == 8 + header_length + 16);
}

TEST_CASE("F16 refuses NaN and values beyond the largest half, naming the tensor and index") {
    TempDir dir("half_refused");
    const std::string path = dir.file("half.safetensors");
    save_safetensors(path, {{"old", Tensor::scalar(1)}}, {});
    const Tensor fine = Tensor::from_vector({2}, {1, 2});
    const Tensor big = Tensor::from_vector({3}, {1, -70000, 2});
    const Tensor nan = Tensor::from_vector({2}, {0, std::numeric_limits<real>::quiet_NaN()});
    CHECK_THROWS_WITH_AS(save_safetensors(path, {{"fine", fine}, {"w.big", big}}, {}, Dtype::F16),
                         doctest::Contains("tensor 'w.big' holds -70000 at index 1, beyond the "
                                           "largest half (65504)"),
                         Error);
    CHECK_THROWS_WITH_AS(save_safetensors(path, {{"w.nan", nan}}, {}, Dtype::F16),
                         doctest::Contains("tensor 'w.nan' holds NaN at index 1"), Error);
    CHECK_THROWS_WITH_AS(save_safetensors(path, {{"w.nan", nan}}, {}, Dtype::F16),
                         doctest::Contains("half.safetensors' as F16"), Error);
    // 65519 rounds to 65504: no error; the file left as it was by the refused saves
    CHECK(load_safetensors(path).find("old") != nullptr);
    save_safetensors(path, {{"edge", Tensor::scalar(65519)}}, {}, Dtype::F16);
    CHECK(load_safetensors(path).at("edge").item() == 65504);
    CHECK_THROWS_WITH_AS(save_safetensors(path, {{"t", fine}}, {}, Dtype::BF16),
                         doctest::Contains("F16, F32 or F64, not BF16"), Error);
}

TEST_CASE("an F16 checkpoint loads into its model with the weights rounded to halves") {
    TempDir dir("half_checkpoint");
    const std::string path = dir.file("ckpt.safetensors");
    Rng rng(1);
    Linear saved(5, 3, true, rng);
    for (auto& [name, p] : saved.named_parameters())
        for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = real(std::sin(double(i) + 0.3));
    save_checkpoint(path, saved, {}, {{"step", 3}}, Dtype::F16);
    const SafetensorsFile file = load_checkpoint(path);
    CHECK(checkpoint_metadata(file)["step"] == 3);
    Linear loaded(5, 3, true, rng);
    load_parameters(file, loaded);
    const auto a = saved.named_parameters(), b = loaded.named_parameters();
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k)
        for (int64_t i = 0; i < a[k].second.numel(); ++i) {
            CAPTURE(a[k].first);
            CHECK(b[k].second.data()[i] == real(round_to_half(double(a[k].second.data()[i]))));
            CHECK(b[k].second.data()[i] != a[k].second.data()[i]);  // sin values need > 11 bits
        }
}
