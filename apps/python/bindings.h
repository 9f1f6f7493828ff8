// The Python module's parts (apps/python/*.cpp), compiled once per precision: `seqgrad._core`
// (real = float) and `seqgrad._core_f64` (real = double). Each part adds its classes and
// functions to the module; module.cpp calls them in order. Every class is py::module_local():
// both modules bind the same C++ names (seqgrad::Tensor...), which pybind11 would otherwise take
// for one type registered twice.
#pragma once

#include <pybind11/eval.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad::python {

namespace py = pybind11;

void bind_tensor(py::module_& m);  // tensor.cpp: Tensor, numpy, no_grad, gradcheck, the ops
void bind_layers(py::module_& m);  // layers.cpp: the layers, losses and optimizers
void bind_runs(py::module_& m);    // runs.cpp: train, load_run, translate, saliency, explore...

// A numpy array (any real dtype, any strides), a list or a number as a new leaf tensor: always
// a copy.
Tensor tensor_from_numpy(const py::object& values, bool requires_grad = false);
// The values of `t` as a numpy array sharing its memory: the array holds a reference to the
// tensor's node, so the memory lives as long as the array does. No copy.
py::array tensor_view(const Tensor& t);
// A numpy array (or a Python list) of integers as token ids, with its shape.
std::vector<int32_t> ids_from_numpy(const py::array& array, Shape* shape = nullptr);
// The seed of the next layer built without one: drawn from the module's generator
// (seqgrad.manual_seed sets it).
uint64_t next_seed();

}  // namespace seqgrad::python
