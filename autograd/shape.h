// Shape: the sizes of a tensor's dimensions, at most 4, row-major. Rank 0 is a scalar.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace seqgrad {

// a × b for sizes (a, b >= 0); throws Error naming `what` when the product does not fit in
// int64. Every size computed from input (a file, a config) goes through this.
int64_t checked_mul(int64_t a, int64_t b, const char* what = "size");

// Invariant: the product of the non-zero dims fits in int64, so numel() and every product of
// some of the dims (a stride, a row count) are computed without overflow.
class Shape {
  public:
    static constexpr int kMaxRank = 4;

    Shape() = default;
    Shape(std::initializer_list<int64_t> dims);

    int rank() const { return rank_; }
    int64_t numel() const;
    // dims may be indexed from the end: shape[-1] is the last dimension.
    int64_t operator[](int dim) const { return dims_[normalize_dim(dim)]; }
    int64_t& at(int dim) { return dims_[normalize_dim(dim)]; }
    int normalize_dim(int dim) const;  // throws on out-of-range dims
    void push_back(int64_t size);      // throws on a negative size or when the invariant breaks
    Shape without_dim(int dim) const;
    Shape with_dim(int dim, int64_t size) const;  // replaces the size of `dim`
    std::string str() const;                      // "[32,256]"

    const int64_t* begin() const { return dims_.data(); }
    const int64_t* end() const { return dims_.data() + rank_; }
    bool operator==(const Shape& other) const;
    bool operator!=(const Shape& other) const { return !(*this == other); }

  private:
    std::array<int64_t, kMaxRank> dims_{};
    int rank_ = 0;
};

}  // namespace seqgrad
