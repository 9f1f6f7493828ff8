// Sizes computed from input never overflow: Shape keeps the product of its non-zero dims in
// int64, and checked_mul throws instead of wrapping (issue 17: a checkpoint header's shape
// [4611686018427387904,4,0] overflowed Shape::numel, caught by UBSan).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "seqgrad/autograd/shape.h"
#include "seqgrad/autograd/tensor.h"

using namespace seqgrad;

TEST_CASE("checked_mul multiplies, and throws naming the sizes when the product overflows") {
    CHECK(checked_mul(6, 7) == 42);
    CHECK(checked_mul(0, std::numeric_limits<int64_t>::max()) == 0);
    CHECK(checked_mul(int64_t(1) << 31, int64_t(1) << 31) == int64_t(1) << 62);
    CHECK_THROWS_WITH_AS(checked_mul(int64_t(1) << 62, 4, "tensor"),
                         "tensor: 4611686018427387904 x 4 does not fit in a 64-bit size", Error);
    CHECK_THROWS_AS(checked_mul(-1, 4), Error);
}

TEST_CASE("a shape whose non-zero dims multiply past 2^63 is refused, even with a zero dim") {
    const int64_t big = int64_t(1) << 62;
    CHECK_THROWS_AS((Shape{big, 4, 0}), Error);
    CHECK_THROWS_AS((Shape{0, big, 4}), Error);
    CHECK_THROWS_AS((Shape{big, 2, 2}), Error);
    CHECK((Shape{big, 1, 0}).numel() == 0);
    CHECK((Shape{big, 0}).numel() == 0);
    CHECK((Shape{big, 1}).numel() == big);
    Shape s{big, 1};
    CHECK_THROWS_AS(s.with_dim(1, 4), Error);  // replacing a dim keeps the invariant too
    CHECK(s.with_dim(1, 0).numel() == 0);
}
