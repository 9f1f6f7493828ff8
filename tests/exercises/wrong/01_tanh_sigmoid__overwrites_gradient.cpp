// expect: gradient was overwritten \(=\), not accumulated \(\+=\): an input may feed several ops
// A wrong answer to 01_tanh_sigmoid for the grader's tests:
// tanh's backward assigns dx (=) instead of adding (+=).
// Exercise 01: the backward of a unary op.
//
// An op computes its result at once and records how to push the result's gradient back to its
// input (autograd/tensor.h: make_result, record, parent_grad). A worked example, relu:
//
//   Tensor relu(const Tensor& x) {
//       Tensor y = make_result(x.shape());                       // uninitialised [same shape]
//       for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = x.data()[i] > 0 ? x.data()[i] : 0;
//       record(y, "relu", {x}, [](Node& out) {                   // runs during backward()
//           real* dx = parent_grad(out, 0);                      // nullptr: x needs no grad
//           if (!dx) return;
//           const real *dy = out.grad.data(), *x = out.parent(0).data;
//           for (int64_t i = 0; i < out.numel(); ++i) dx[i] += x[i] > 0 ? dy[i] : 0;  // ADD
//       });
//       return y;
//   }
//
// Gradients accumulate (+=): x may feed several ops.
#include <cmath>

#include "apps/exercises/exercise.h"

namespace seqgrad::exercises {

// y = tanh(x)                 x, y: any shape
// dx += dy ⊙ (1 − y²)         (use the saved output y: out.data)
Tensor tanh(const Tensor& x) {
    Tensor y = make_result(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = std::tanh(x.data()[i]);
    record(y, "exercise_tanh", {x}, [](Node& out) {
        real* dx = parent_grad(out, 0);
        if (!dx) return;
        const real *dy = out.grad.data(), *y = out.data;
        for (int64_t i = 0; i < out.numel(); ++i) dx[i] = dy[i] * (1 - y[i] * y[i]);
    });
    return y;
}

// y = σ(x) = 1 / (1 + e^(−x))  x, y: any shape
// dx += dy ⊙ y ⊙ (1 − y)
Tensor sigmoid(const Tensor& x) {
    Tensor y = make_result(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = 1 / (1 + std::exp(-x.data()[i]));
    record(y, "exercise_sigmoid", {x}, [](Node& out) {
        real* dx = parent_grad(out, 0);
        if (!dx) return;
        const real *dy = out.grad.data(), *y = out.data;
        for (int64_t i = 0; i < out.numel(); ++i) dx[i] += dy[i] * y[i] * (1 - y[i]);
    });
    return y;
}

}  // namespace seqgrad::exercises
