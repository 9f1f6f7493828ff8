#include "seqgrad/autograd/shape.h"

#include <fmt/format.h>

#include "seqgrad/autograd/error.h"

namespace seqgrad {

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
    int64_t product;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &product))
        throw Error(fmt::format("{}: {} x {} does not fit in a 64-bit size", what, a, b));
    return product;
}

Shape::Shape(std::initializer_list<int64_t> dims) {
    for (int64_t d : dims) push_back(d);
}

int64_t Shape::numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
}

int Shape::normalize_dim(int dim) const {
    int d = dim < 0 ? dim + rank_ : dim;
    if (d < 0 || d >= rank_)
        throw Error(fmt::format("dim {} out of range for shape {}", dim, str()));
    return d;
}

void Shape::push_back(int64_t size) {
    if (rank_ == kMaxRank) throw Error(fmt::format("shape {}: at most {} dims", str(), kMaxRank));
    if (size < 0) throw Error(fmt::format("shape {}: negative size {}", str(), size));
    // The invariant held before this dim, so only the last product can overflow.
    int64_t product = 1;
    for (int i = 0; i < rank_; ++i)
        if (dims_[i] != 0) product *= dims_[i];
    if (size != 0 && __builtin_mul_overflow(product, size, &product))
        throw Error(fmt::format("shape {} + dim {}: the sizes multiply past 2^63", str(), size));
    dims_[rank_++] = size;
}

Shape Shape::without_dim(int dim) const {
    int d = normalize_dim(dim);
    Shape s;
    for (int i = 0; i < rank_; ++i)
        if (i != d) s.push_back(dims_[i]);
    return s;
}

Shape Shape::with_dim(int dim, int64_t size) const {
    const int d = normalize_dim(dim);
    Shape s;  // rebuilt through push_back, which keeps the invariant
    for (int i = 0; i < rank_; ++i) s.push_back(i == d ? size : dims_[i]);
    return s;
}

std::string Shape::str() const {
    std::string out = "[";
    for (int i = 0; i < rank_; ++i) out += (i ? "," : "") + std::to_string(dims_[i]);
    return out + "]";
}

bool Shape::operator==(const Shape& other) const {
    if (rank_ != other.rank_) return false;
    for (int i = 0; i < rank_; ++i)
        if (dims_[i] != other.dims_[i]) return false;
    return true;
}

}  // namespace seqgrad
