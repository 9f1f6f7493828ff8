// Tensor from Python: numpy in (a copy) and out (a view that keeps the tensor's node alive),
// autograd (requires_grad, backward, .grad, no_grad), gradcheck, and the ops under their C++
// names (autograd/ops.h and the fused ops).
#include <fmt/format.h>

#include <optional>
#include <sstream>

#include "apps/python/bindings.h"
#include "seqgrad/autograd/fused_dot_product_attention.h"
#include "seqgrad/autograd/fused_layer_norm.h"
#include "seqgrad/autograd/gradcheck.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/layers/loss.h"

namespace seqgrad::python {

namespace {

using release_gil = py::call_guard<py::gil_scoped_release>;

Rng& module_rng() {
    static Rng rng(0x5eed);
    return rng;
}

Shape shape_of(const py::array& array) {
    if (array.ndim() > Shape::kMaxRank)
        throw Error(fmt::format("tensor: at most {} dims, got a numpy array of {}", Shape::kMaxRank,
                                array.ndim()));
    Shape shape;
    for (py::ssize_t d = 0; d < array.ndim(); ++d) shape.push_back(int64_t(array.shape(d)));
    return shape;
}

// sizes as a Shape; one size may be -1 when `numel` (the element count to keep) is given: it is
// inferred (a count that does not divide is left to reshape's error, which names both shapes).
Shape shape_from_sizes(const std::vector<int64_t>& sizes, int64_t numel = -1) {
    if (sizes.size() > size_t(Shape::kMaxRank))
        throw Error(fmt::format("shape: at most {} dims, got {}", Shape::kMaxRank, sizes.size()));
    int inferred = -1;
    int64_t known = 1;
    for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] != -1) {
            known = checked_mul(known, sizes[d]);
        } else if (inferred >= 0 || numel < 0) {
            throw Error(numel < 0 ? "shape: -1 is only allowed in reshape"
                                  : "reshape: only one size may be -1");
        } else {
            inferred = int(d);
        }
    }
    Shape shape;
    for (size_t d = 0; d < sizes.size(); ++d)
        shape.push_back(int(d) == inferred ? (known > 0 ? numel / known : 0) : sizes[d]);
    return shape;
}

py::tuple shape_tuple(const Shape& shape) {
    py::tuple t(shape.rank());
    for (int d = 0; d < shape.rank(); ++d) t[size_t(d)] = shape[d];
    return t;
}

// The tensor's gradient as a new tensor (a copy), or None when backward has not reached it.
py::object grad_or_none(const Tensor& t) {
    if (!t.has_grad()) return py::none();
    return py::cast(t.grad());
}

Reduction parse_reduction(const std::string& name) {
    if (name == "mean") return Reduction::mean;
    if (name == "sum") return Reduction::sum;
    if (name == "none") return Reduction::none;
    throw Error(fmt::format("cross_entropy: reduction '{}' is not one of mean, sum, none", name));
}

std::string describe(const Tensor& t) {
    if (!t.defined()) return "Tensor(undefined)";
    std::ostringstream out;
    out << "Tensor(" << py::str(py::repr(tensor_view(t))).cast<std::string>();
    if (t.op_name()) out << ", op=" << t.op_name();
    if (t.requires_grad()) out << ", requires_grad=True";
    out << ")";
    return out.str();
}

// `with seqgrad.no_grad():` — ops record nothing inside (NoGradGuard on this thread).
struct NoGrad {
    std::optional<NoGradGuard> guard;
};

}  // namespace

uint64_t next_seed() {
    return module_rng().next_u64();
}

Tensor tensor_from_numpy(const py::object& array, bool requires_grad) {
    auto values = py::array_t<real, py::array::c_style | py::array::forcecast>::ensure(array);
    if (!values) throw Error("tensor: expected numbers (a numpy array, a list or a scalar)");
    const Shape shape = shape_of(values);
    Tensor t = Tensor::empty(shape);
    std::copy(values.data(), values.data() + shape.numel(), t.data());
    if (requires_grad) t.set_requires_grad(true);
    return t;
}

py::array tensor_view(const Tensor& t) {
    // The capsule owns a copy of the node pointer: the node (and the data it points to, its own
    // or that of the node it is a view of) lives while numpy holds the array.
    auto* owner = new NodePtr(t.node_ptr());
    py::capsule base(owner, [](void* p) { delete static_cast<NodePtr*>(p); });
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
    return py::array_t<real>(shape, const_cast<real*>(t.data()), base);
}

std::vector<int32_t> ids_from_numpy(const py::array& array, Shape* shape) {
    auto ids = py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(array);
    if (!ids) throw Error("expected token ids: integers in a numpy array or a list");
    if (shape) *shape = shape_of(ids);
    return std::vector<int32_t>(ids.data(), ids.data() + ids.size());
}

namespace {

// The class Tensor: a leaf from numpy, its shape, its values as numpy, its gradient.
void bind_tensor_class(py::class_<Tensor>& tensor) {
    tensor
        .def(py::init([](const py::object& values, bool requires_grad) {
                 return tensor_from_numpy(values, requires_grad);
             }),
             py::arg("values"), py::arg("requires_grad") = false,
             "A new leaf holding a copy of `values` (a numpy array, a list or a number).")
        .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
        .def_property_readonly("ndim", &Tensor::rank)
        .def("numel", &Tensor::numel)
        .def("__len__", [](const Tensor& t) { return t.rank() == 0 ? 0 : t.size(0); })
        .def_property("requires_grad", &Tensor::requires_grad,
                      [](Tensor& t, bool on) { t.set_requires_grad(on); })
        .def(
            "requires_grad_", [](Tensor& t, bool on) -> Tensor& { return t.set_requires_grad(on); },
            py::arg("requires_grad") = true, py::return_value_policy::reference_internal)
        .def_property_readonly("is_leaf", &Tensor::is_leaf)
        .def_property_readonly("grad", &grad_or_none,
                               "A copy of the gradient, or None before backward reached it.")
        .def_property_readonly("op",
                               [](const Tensor& t) -> py::object {
                                   if (!t.op_name()) return py::none();
                                   return py::str(t.op_name());
                               })
        .def("item", &Tensor::item)
        .def("numpy", &tensor_view,
             "The values as a numpy array sharing the tensor's memory (no copy); the array keeps "
             "the memory alive.")
        .def(
            "__array__",
            [](const Tensor& t, py::object dtype) -> py::object {
                py::array view = tensor_view(t);
                if (dtype.is_none()) return std::move(view);
                return view.attr("astype")(dtype);
            },
            py::arg("dtype") = py::none())
        .def("tolist", [](const Tensor& t) { return tensor_view(t).attr("tolist")(); })
        .def(
            "backward",
            [](Tensor& t, std::optional<Tensor> grad) {
                py::gil_scoped_release release;
                if (grad)
                    t.backward(*grad);
                else
                    t.backward();
            },
            py::arg("gradient") = py::none(),
            "Reverse-mode differentiation; a tensor of more than one element needs `gradient`.")
        .def("retain_grad", &Tensor::retain_grad)
        .def("zero_grad", &Tensor::zero_grad)
        .def("detach", &Tensor::detach)
        .def("__repr__", &describe);
}

// Python's arithmetic operators on tensors, and on a tensor and a number.
void bind_tensor_operators(py::class_<Tensor>& tensor) {
    tensor.def("__add__", [](const Tensor& a, const Tensor& b) { return add(a, b); })
        .def("__add__", [](const Tensor& a, real b) { return add(a, b); })
        .def("__radd__", [](const Tensor& a, real b) { return add(a, b); })
        .def("__sub__", [](const Tensor& a, const Tensor& b) { return sub(a, b); })
        .def("__sub__", [](const Tensor& a, real b) { return add(a, -b); })
        .def("__rsub__", [](const Tensor& a, real b) { return add(neg(a), b); })
        .def("__mul__", [](const Tensor& a, const Tensor& b) { return mul(a, b); })
        .def("__mul__", [](const Tensor& a, real b) { return mul(a, b); })
        .def("__rmul__", [](const Tensor& a, real b) { return mul(a, b); })
        .def("__truediv__", [](const Tensor& a, const Tensor& b) { return div(a, b); })
        .def("__truediv__", [](const Tensor& a, real b) { return mul(a, real(1) / b); })
        .def("__rtruediv__",
             [](const Tensor& a, real b) { return div(Tensor::full(Shape{}, b), a); })
        .def("__neg__", [](const Tensor& a) { return neg(a); })
        .def(
            "__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
            release_gil())
        .def_property_readonly("T", [](const Tensor& t) { return transpose(t); });
}

// tensor, zeros, full, randn and the module's generator.
void bind_tensor_creation(py::module_& m) {
    m.def("tensor", &tensor_from_numpy, py::arg("values"), py::arg("requires_grad") = false,
          "A new leaf holding a copy of `values`.");
    m.def(
        "zeros",
        [](const std::vector<int64_t>& sizes, bool requires_grad) {
            return Tensor::zeros(shape_from_sizes(sizes), requires_grad);
        },
        py::arg("shape"), py::arg("requires_grad") = false);
    m.def(
        "full",
        [](const std::vector<int64_t>& sizes, real value, bool requires_grad) {
            return Tensor::full(shape_from_sizes(sizes), value, requires_grad);
        },
        py::arg("shape"), py::arg("value"), py::arg("requires_grad") = false);
    m.def(
        "manual_seed", [](uint64_t seed) { module_rng().seed_with(seed); }, py::arg("seed"),
        "Seeds the generator that layers built without a seed, randn and dropout draw from.");
    m.def(
        "randn",
        [](const std::vector<int64_t>& sizes, bool requires_grad) {
            Tensor t = Tensor::empty(shape_from_sizes(sizes));
            for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(module_rng().normal());
            if (requires_grad) t.set_requires_grad(true);
            return t;
        },
        py::arg("shape"), py::arg("requires_grad") = false);
    m.attr("dtype") = py::dtype::of<real>();
}

// no_grad, is_grad_enabled and gradcheck.
void bind_autograd(py::module_& m) {
    py::class_<NoGrad>(m, "no_grad", py::module_local(),
                       "with seqgrad.no_grad(): ops inside record no graph.")
        .def(py::init<>())
        .def("__enter__", [](NoGrad& g) { g.guard.emplace(); })
        .def("__exit__", [](NoGrad& g, py::args) { g.guard.reset(); });
    m.def("is_grad_enabled", &grad_enabled);

    py::class_<GradcheckResult>(m, "GradcheckResult", py::module_local())
        .def_readonly("passed", &GradcheckResult::passed)
        .def_readonly("inputs_checked", &GradcheckResult::inputs_checked)
        .def_readonly("elements_checked", &GradcheckResult::elements_checked)
        .def_readonly("max_abs_error", &GradcheckResult::max_abs_error)
        .def_readonly("max_rel_error", &GradcheckResult::max_rel_error)
        .def_readonly("worst", &GradcheckResult::worst)
        .def("__bool__", [](const GradcheckResult& r) { return r.passed; })
        .def("__repr__", [](const GradcheckResult& r) {
            return fmt::format(
                "GradcheckResult(passed={}, elements_checked={}, "
                "max_abs_error={:.3g}, max_rel_error={:.3g}{}{})",
                r.passed ? "True" : "False", r.elements_checked, r.max_abs_error, r.max_rel_error,
                r.worst.empty() ? "" : ", worst=", r.worst);
        });
    m.def(
        "gradcheck",
        [](py::function f, const std::vector<Tensor>& inputs, double eps, double atol, double rtol,
           uint64_t seed) {
            GradcheckOptions options{eps, atol, rtol, seed};
            GradcheckFn fn = [&f](const std::vector<Tensor>& xs) {
                py::tuple args(xs.size());
                for (size_t i = 0; i < xs.size(); ++i) args[i] = py::cast(xs[i]);
                return f(*args).cast<Tensor>();
            };
            return gradcheck(fn, inputs, options);
        },
        py::arg("f"), py::arg("inputs"), py::arg("eps") = 1e-6, py::arg("atol") = 1e-7,
        py::arg("rtol") = 1e-6, py::arg("seed") = 1234,
        "Compares f's backward with central finite differences on the inputs that require "
        "grad (use seqgrad.f64: in float the differences are noise).");
}

// ---- the ops (autograd/ops.h) ------------------------------------------------------------------

// The element-wise ops.
void bind_elementwise_ops(py::module_& m) {
    m.def("add", py::overload_cast<const Tensor&, const Tensor&>(&add));
    m.def("add", py::overload_cast<const Tensor&, real>(&add));
    m.def("sub", &sub);
    m.def("mul", py::overload_cast<const Tensor&, const Tensor&>(&mul));
    m.def("mul", py::overload_cast<const Tensor&, real>(&mul));
    m.def("div", &div);
    m.def("neg", &neg);
    m.def("tanh", &seqgrad::tanh);
    m.def("sigmoid", &sigmoid);
    m.def("relu", &relu);
    m.def("gelu", &gelu);
    m.def("sqrt", &seqgrad::sqrt);
    m.def("exp", &seqgrad::exp);
    m.def("log", &seqgrad::log);
    m.def("clamp", &clamp, py::arg("x"), py::arg("lo"), py::arg("hi"));
    m.def("masked_fill", &masked_fill, py::arg("x"), py::arg("mask"), py::arg("value"));
    m.def("matmul", &matmul, py::arg("a"), py::arg("b"), py::arg("transpose_a") = false,
          py::arg("transpose_b") = false, release_gil());
}

// The products, reductions, softmaxes and the ops that move values (reshape, concat, slice).
void bind_shape_ops(py::module_& m) {
    m.def(
        "linear",
        [](const Tensor& x, const Tensor& weight, std::optional<Tensor> bias) {
            py::gil_scoped_release release;
            return linear(x, weight, bias ? *bias : Tensor());
        },
        py::arg("x"), py::arg("weight"), py::arg("bias") = py::none());
    m.def(
        "sum",
        [](const Tensor& x, std::optional<int> dim, bool keepdim) {
            return dim ? sum(x, *dim, keepdim) : sum(x);
        },
        py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    m.def(
        "mean",
        [](const Tensor& x, std::optional<int> dim, bool keepdim) {
            return dim ? mean(x, *dim, keepdim) : mean(x);
        },
        py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    m.def("softmax", &softmax);
    m.def("log_softmax", &log_softmax);
    m.def(
        "reshape",
        [](const Tensor& x, const std::vector<int64_t>& sizes) {
            return reshape(x, shape_from_sizes(sizes, x.numel()));
        },
        py::arg("x"), py::arg("shape"));
    m.def("transpose", py::overload_cast<const Tensor&>(&transpose), py::arg("x"));
    m.def("transpose", py::overload_cast<const Tensor&, int, int>(&transpose), py::arg("x"),
          py::arg("dim0"), py::arg("dim1"));
    m.def("concat", &concat, py::arg("tensors"), py::arg("dim"));
    m.def("stack", &stack, py::arg("tensors"), py::arg("dim"));
    m.def("slice", &slice, py::arg("x"), py::arg("dim"), py::arg("start"), py::arg("end"));
}

// The ops of the layers: embedding, dropout, layer norm, attention, the losses.
void bind_nn_ops(py::module_& m) {
    m.def(
        "embedding",
        [](const Tensor& weight, const py::array& ids, int32_t padding_idx) {
            Shape shape;
            std::vector<int32_t> values = ids_from_numpy(ids, &shape);
            return embedding(weight, values, shape, padding_idx);
        },
        py::arg("weight"), py::arg("ids"), py::arg("padding_idx") = -1);
    m.def("gather_rows", &gather_rows, py::arg("x"), py::arg("rows"));
    m.def(
        "dropout",
        [](const Tensor& x, real p, bool training) {
            return dropout(x, p, training, module_rng());
        },
        py::arg("x"), py::arg("p"), py::arg("training") = true);
    m.def("layer_norm", &layer_norm, py::arg("x"), py::arg("weight"), py::arg("bias"),
          py::arg("eps") = 1e-5, release_gil());
    m.def(
        "scaled_dot_product_attention",
        [](const Tensor& q, const Tensor& k, const Tensor& v,
           std::optional<Tensor> key_padding_mask, bool causal) {
            py::gil_scoped_release release;
            KeyMask mask = key_padding_mask ? KeyMask(*key_padding_mask) : KeyMask();
            DotProductAttention r = scaled_dot_product_attention(q, k, v, mask, causal, true);
            return std::make_pair(r.output, r.weights);
        },
        py::arg("q"), py::arg("k"), py::arg("v"), py::arg("key_padding_mask") = py::none(),
        py::arg("causal") = false,
        "q [B,h,T,d], k and v [B,h,S,d] -> (output [B,h,T,d], weights [B,h,T,S]).");
    m.def(
        "cross_entropy",
        [](const Tensor& logits, const py::array& targets, int32_t ignore_index,
           const std::string& reduction, real label_smoothing) {
            std::vector<int32_t> ids = ids_from_numpy(targets);
            const Reduction r = parse_reduction(reduction);
            py::gil_scoped_release release;
            return cross_entropy(logits, ids, ignore_index, r, label_smoothing);
        },
        py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
        py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0,
        "logits [N,V], targets [N] class ids -> the loss (PyTorch's F.cross_entropy).");
    m.def(
        "cross_entropy_composed",
        [](const Tensor& logits, const py::array& targets, int32_t ignore_index,
           const std::string& reduction, real label_smoothing) {
            return cross_entropy_composed(logits, ids_from_numpy(targets), ignore_index,
                                          parse_reduction(reduction), label_smoothing);
        },
        py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
        py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0);
}

}  // namespace

void bind_tensor(py::module_& m) {
    py::class_<Tensor> tensor(m, "Tensor", py::module_local(),
                              "A node of the computation graph: values, an optional gradient, and "
                              "the op that made it.");
    bind_tensor_class(tensor);
    bind_tensor_operators(tensor);
    py::implicitly_convertible<py::array, Tensor>();
    bind_tensor_creation(m);
    bind_autograd(m);
    bind_elementwise_ops(m);
    bind_shape_ops(m);
    bind_nn_ops(m);
}

}  // namespace seqgrad::python
