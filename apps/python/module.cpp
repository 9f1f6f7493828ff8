// The module `seqgrad._core` (real = float) or `seqgrad._core_f64` (real = double): the parts of
// apps/python/, and each seqgrad::Error turned into the Python exception of its kind, the message
// unchanged (it names the op and shapes, the file and line, or the key).
#include <string>

#include "apps/python/bindings.h"
#include "seqgrad/autograd/error.h"
#include "seqgrad/data/file_io.h"

#ifndef SEQGRAD_PYTHON_MODULE
#define SEQGRAD_PYTHON_MODULE _core
#endif

namespace seqgrad::python {
namespace {

// KeyError shows its message quoted, newlines escaped (str(KeyError("a\nb")) is "'a\\nb'"):
// seqgrad.KeyError, a KeyError, shows it as it is (a state dict's differences, one a line).
PyObject* key_error = nullptr;

void define_key_error(py::module_& m) {
    py::dict scope;
    py::exec(R"(
class KeyError(KeyError):
    """A KeyError whose message is shown as seqgrad wrote it, not quoted."""
    __module__ = "seqgrad"
    def __str__(self):
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()
)",
             scope);
    py::object type = scope["KeyError"];
    key_error = type.inc_ref().ptr();  // lives as long as the interpreter
    m.attr("KeyError") = type;
}

PyObject* python_exception(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::value:
            return PyExc_ValueError;
        case ErrorKind::key:
            return key_error;
        case ErrorKind::not_found:
            return PyExc_FileNotFoundError;
        case ErrorKind::io:
            return PyExc_OSError;
        case ErrorKind::state:
            return PyExc_RuntimeError;
        case ErrorKind::interrupted:
            return PyExc_KeyboardInterrupt;
    }
    return PyExc_ValueError;
}

}  // namespace
}  // namespace seqgrad::python

PYBIND11_MODULE(SEQGRAD_PYTHON_MODULE, m) {
    using namespace seqgrad::python;
    m.doc() = "seqgrad: a reverse-mode autodiff engine and attention seq2seq models";
    m.attr("real") = sizeof(seqgrad::real) == 4 ? "float32" : "float64";
    define_key_error(m);
    // seqgrad::Error by its kind; a file that data/ could not read or write (FileError) by its
    // error number; any other C++ exception as pybind11 maps it (std::invalid_argument:
    // ValueError, std::out_of_range: IndexError, std::runtime_error: RuntimeError). Local to
    // this module: the other precision's module has a translator (and a KeyError) of its own.
    py::register_local_exception_translator([](std::exception_ptr error) {
        try {
            if (error) std::rethrow_exception(error);
        } catch (const seqgrad::Error& e) {
            PyErr_SetString(python_exception(e.kind()), e.what());
        } catch (const seqgrad::FileError& e) {
            PyErr_SetString(python_exception(seqgrad::file_error_kind(e.error_number)), e.what());
        }
    });
    bind_tensor(m);
    bind_layers(m);
    bind_runs(m);
}
