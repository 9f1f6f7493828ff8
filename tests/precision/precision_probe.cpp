// Built by the precision tests (tests/CMakeLists.txt) with SEQGRAD_REAL set by the test and
// linked against one of the two libraries: it must link only against the library of its own
// precision (autograd/real.h).
#include <cstdio>

#include "seqgrad/autograd/tensor.h"

int main() {
    seqgrad::Tensor t = seqgrad::Tensor::full({2, 3}, 1.5);
    std::printf("real has %zu bytes, sum %g\n", sizeof(seqgrad::real), double(t.data()[5]) * 6);
    return t.numel() == 6 ? 0 : 1;
}
