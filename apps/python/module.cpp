// The module `seqgrad._core` (real = float) or `seqgrad._core_f64` (real = double): the parts of
// apps/python/, and seqgrad::Error turned into the Python exception that fits its message, the
// message unchanged (it names the op and shapes, the file and line, or the key).
#include <string>

#include "apps/python/bindings.h"
#include "seqgrad/autograd/error.h"

#ifndef SEQGRAD_PYTHON_MODULE
#define SEQGRAD_PYTHON_MODULE _core
#endif

namespace seqgrad::python {
namespace {

bool contains(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

// A file that cannot be read: FileNotFoundError; an unknown name: KeyError; a graph used after
// backward freed it: RuntimeError; anything else (shapes, values, options): ValueError.
PyObject* exception_for(const std::string& message) {
    if (contains(message, "cannot open") || contains(message, "no such file") ||
        contains(message, "does not exist") || contains(message, "not a run directory"))
        return PyExc_FileNotFoundError;
    if (contains(message, "unknown key") || contains(message, "missing:") ||
        contains(message, "unexpected:") || contains(message, "no parameter"))
        return PyExc_KeyError;
    if (contains(message, "freed") || contains(message, "undefined Tensor") ||
        contains(message, "backward"))
        return PyExc_RuntimeError;
    return PyExc_ValueError;
}

}  // namespace
}  // namespace seqgrad::python

PYBIND11_MODULE(SEQGRAD_PYTHON_MODULE, m) {
    using namespace seqgrad::python;
    m.doc() = "seqgrad: a reverse-mode autodiff engine and attention seq2seq models";
    m.attr("real") = sizeof(seqgrad::real) == 4 ? "float32" : "float64";
    py::register_exception_translator([](std::exception_ptr error) {
        try {
            if (error) std::rethrow_exception(error);
        } catch (const seqgrad::Error& e) {
            PyErr_SetString(exception_for(e.what()), e.what());
        }
    });
    bind_tensor(m);
    bind_layers(m);
    bind_runs(m);
}
