// The layers (layers/), their losses and the optimizers (optim/) from Python, with PyTorch's
// names: the constructors take PyTorch's arguments, the parameters keep the C++ (PyTorch) names,
// and every layer has parameters(), named_parameters(), state_dict(), load_state_dict(),
// zero_grad(), train() and eval(). A layer owns the generator its initialisation and dropout
// draw from (seed: an integer, or None for one drawn from seqgrad.manual_seed's generator).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <tuple>

#include "apps/python/bindings.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/dropout.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/gru.h"
#include "seqgrad/layers/layer_norm.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/lstm.h"
#include "seqgrad/layers/multihead_attention.h"
#include "seqgrad/layers/rnn.h"
#include "seqgrad/layers/transformer.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"
#include "seqgrad/optim/sgd.h"

namespace seqgrad::python {
namespace {

// A layer and the generator it keeps a reference to (built first, destroyed last).
template <class L>
struct Owned {
    std::unique_ptr<Rng> rng;
    std::unique_ptr<L> layer;
    template <class... Args>
    static Owned* make(std::optional<uint64_t> seed, Args&&... args) {
        auto owned = new Owned;
        owned->rng = std::make_unique<Rng>(seed ? *seed : next_seed());
        owned->layer = std::make_unique<L>(std::forward<Args>(args)..., *owned->rng);
        return owned;
    }
};

py::object parameter_named(const Module& module, const std::string& name) {
    for (const auto& [key, value] : module.named_parameters())
        if (key == name) return py::cast(value);
    throw py::attribute_error(fmt::format("no parameter or attribute named '{}'", name));
}

// What every layer has, PyTorch's Module methods.
template <class L>
py::class_<Owned<L>> layer_class(py::module_& m, const char* name, const char* doc) {
    using W = Owned<L>;
    py::class_<W> cls(m, name, py::module_local(), doc);
    cls.def("parameters", [](const W& w) { return w.layer->parameters(); })
        .def("named_parameters", [](const W& w) { return w.layer->named_parameters(); })
        .def(
            "state_dict", [](const W& w) { return w.layer->state(); },
            "A copy of every parameter under its name.")
        .def("load_state_dict",
             [](W& w, const std::map<std::string, py::object>& state) {
                 StateDict values;
                 for (const auto& [key, value] : state)
                     values[key] = py::isinstance<Tensor>(value) ? value.template cast<Tensor>()
                                                                 : tensor_from_numpy(value);
                 w.layer->load_state(values, "state_dict");
             })
        .def("zero_grad", [](W& w) { w.layer->zero_grad(); })
        .def(
            "train", [](W& w, bool on) { w.layer->train(on); }, py::arg("mode") = true)
        .def("eval", [](W& w) { w.layer->eval(); })
        .def_property_readonly("training", [](const W& w) { return w.layer->training(); })
        .def("parameter_count", [](const W& w) { return w.layer->parameter_count(); })
        .def("__getattr__",
             [](const W& w, const std::string& attr) { return parameter_named(*w.layer, attr); });
    return cls;
}

std::vector<int32_t> lengths_or_full(const Tensor& inputs,
                                     std::optional<std::vector<int32_t>> lengths) {
    if (lengths) return *lengths;
    if (inputs.rank() != 3)
        throw Error(fmt::format("recurrent layer: inputs must be [B,T,in] (batch first), got {}",
                                inputs.shape().str()));
    return std::vector<int32_t>(size_t(inputs.size(0)), int32_t(inputs.size(1)));
}

template <class L>
void bind_recurrent(py::module_& m, const char* name, bool lstm) {
    layer_class<L>(m, name,
                   "A recurrent layer over a padded batch [B,T,in] (batch first), PyTorch's "
                   "parameter names (weight_ih_l0, ...).")
        .def(py::init([](int64_t input_size, int64_t hidden_size, int num_layers,
                         bool bidirectional, real dropout, std::optional<uint64_t> seed) {
                 return Owned<L>::make(seed, input_size, hidden_size, num_layers, bidirectional,
                                       dropout);
             }),
             py::arg("input_size"), py::arg("hidden_size"), py::arg("num_layers") = 1,
             py::arg("bidirectional") = false, py::arg("dropout") = 0.0,
             py::arg("seed") = py::none())
        .def(
            "__call__",
            [lstm](const Owned<L>& w, const Tensor& inputs,
                   std::optional<std::vector<int32_t>> lengths, std::optional<Tensor> h0,
                   std::optional<Tensor> c0) -> py::object {
                RecurrentOutput out;
                {
                    py::gil_scoped_release release;
                    out = w.layer->forward(inputs, lengths_or_full(inputs, lengths),
                                           h0 ? *h0 : Tensor(), c0 ? *c0 : Tensor());
                }
                if (lstm)
                    return py::make_tuple(out.outputs,
                                          py::make_tuple(out.final_hidden, out.final_cell));
                return py::make_tuple(out.outputs, out.final_hidden);
            },
            py::arg("inputs"), py::arg("lengths") = py::none(), py::arg("h0") = py::none(),
            py::arg("c0") = py::none(),
            "inputs [B,T,in], lengths [B] (default: all T), h0 [layers*dirs,B,H] -> (outputs "
            "[B,T,dirs*H], h_n) (LSTM: (outputs, (h_n, c_n))).");
}

template <class L>
void bind_cell(py::module_& m, const char* name, bool lstm) {
    layer_class<L>(m, name, "One step of a recurrent cell, PyTorch's parameter names.")
        .def(py::init([](int64_t input_size, int64_t hidden_size, std::optional<uint64_t> seed) {
                 return Owned<L>::make(seed, input_size, hidden_size);
             }),
             py::arg("input_size"), py::arg("hidden_size"), py::arg("seed") = py::none())
        .def(
            "__call__",
            [lstm](const Owned<L>& w, const Tensor& x, py::object state) -> py::object {
                RecurrentState s;
                if (state.is_none())
                    s = w.layer->zero_state(x.size(0));
                else if (lstm)
                    std::tie(s.h, s.c) = state.cast<std::pair<Tensor, Tensor>>();
                else
                    s.h = state.cast<Tensor>();
                RecurrentState next;
                {
                    py::gil_scoped_release release;
                    next = w.layer->step(x, s);
                }
                if (lstm) return py::make_tuple(next.h, next.c);
                return py::cast(next.h);
            },
            py::arg("x"), py::arg("state") = py::none(),
            "x [B,in], h [B,H] (LSTM: (h, c)) -> the next state.");
}

AttentionResult attend(const Attention& attention, const Tensor& query, const Tensor& keys,
                       std::optional<Tensor> mask) {
    py::gil_scoped_release release;
    return attention.forward(query, keys, mask ? *mask : Tensor());
}

LuongScore parse_luong(const std::string& score) {
    if (score == "dot") return LuongScore::dot;
    if (score == "general") return LuongScore::general;
    if (score == "concat") return LuongScore::concat;
    throw Error(
        fmt::format("LuongAttention: score '{}' is not one of dot, general, concat", score));
}

TransformerLayerOptions layer_options(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                      real dropout, const std::string& activation, bool norm_first,
                                      real eps) {
    TransformerLayerOptions options;
    options.d_model = d_model;
    options.heads = nhead;
    options.ff_size = dim_feedforward;
    options.dropout = dropout;
    options.activation = activation;
    options.norm_first = norm_first;
    options.eps = eps;
    return options;
}

KeyMask mask_or_none(const std::optional<Tensor>& mask) {
    return mask ? KeyMask(*mask) : KeyMask();
}

// Parameters as a list of tensors (named "0", "1", ...) or of (name, tensor) pairs.
NamedTensors named_from(const py::iterable& params) {
    NamedTensors named;
    for (py::handle item : params) {
        if (py::isinstance<Tensor>(item))
            named.emplace_back(std::to_string(named.size()), item.cast<Tensor>());
        else
            named.push_back(item.cast<std::pair<std::string, Tensor>>());
    }
    return named;
}

py::object json_to_python(const nlohmann::json& j) {
    return py::module_::import("json").attr("loads")(j.dump());
}

// Linear and Embedding.
void bind_linear_and_embedding(py::module_& m) {
    layer_class<Linear>(m, "Linear", "y = x Wᵀ + b: weight [out, in], bias [out].")
        .def(py::init([](int64_t in_features, int64_t out_features, bool bias,
                         std::optional<uint64_t> seed) {
                 return Owned<Linear>::make(seed, in_features, out_features, bias);
             }),
             py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true,
             py::arg("seed") = py::none())
        .def("__call__", [](const Owned<Linear>& w, const Tensor& x) {
            py::gil_scoped_release release;
            return w.layer->forward(x);
        });

    layer_class<Embedding>(m, "Embedding", "Rows of weight [num_embeddings, embedding_dim] by id.")
        .def(py::init([](int64_t num_embeddings, int64_t embedding_dim,
                         std::optional<int32_t> padding_idx, std::optional<uint64_t> seed) {
                 return Owned<Embedding>::make(seed, num_embeddings, embedding_dim,
                                               padding_idx ? *padding_idx : -1);
             }),
             py::arg("num_embeddings"), py::arg("embedding_dim"),
             py::arg("padding_idx") = py::none(), py::arg("seed") = py::none())
        .def("__call__", [](const Owned<Embedding>& w, const py::array& ids) {
            Shape shape;
            std::vector<int32_t> values = ids_from_numpy(ids, &shape);
            return w.layer->forward(values, shape);
        });
}

// The recurrent layers and their cells.
void bind_recurrent_layers(py::module_& m) {
    bind_recurrent<GRU>(m, "GRU", false);
    bind_recurrent<LSTM>(m, "LSTM", true);
    bind_recurrent<RNN>(m, "RNN", false);
    bind_cell<GRUCell>(m, "GRUCell", false);
    bind_cell<LSTMCell>(m, "LSTMCell", true);
    bind_cell<RNNCell>(m, "RNNCell", false);
}

// (context, weights) of an RNN attention layer called from Python.
template <class L>
std::pair<Tensor, Tensor> call_attention(const Owned<L>& w, const Tensor& query, const Tensor& keys,
                                         std::optional<Tensor> mask) {
    AttentionResult r = attend(*w.layer, query, keys, mask);
    return {r.context, r.weights};
}
const char* const kAttentionCallDoc =
    "query [B,Dq], keys [B,S,Dk], mask [B,S] (1 at padding) -> (context [B,Dk], weights [B,S]).";

// The RNN decoder's attentions: Bahdanau's and Luong's.
void bind_rnn_attention_layers(py::module_& m) {
    layer_class<BahdanauAttention>(m, "BahdanauAttention",
                                   "score_s = vᵀ tanh(W_q q + W_k k_s); parameters W_q.weight, "
                                   "W_k.weight, W_k.bias, v.weight.")
        .def(py::init([](int64_t query_dim, int64_t key_dim, int64_t attn_dim, bool key_bias,
                         std::optional<uint64_t> seed) {
                 auto owned = new Owned<BahdanauAttention>;
                 owned->rng = std::make_unique<Rng>(seed ? *seed : next_seed());
                 owned->layer = std::make_unique<BahdanauAttention>(query_dim, key_dim, attn_dim,
                                                                    *owned->rng, key_bias);
                 return owned;
             }),
             py::arg("query_dim"), py::arg("key_dim"), py::arg("attn_dim") = 128,
             py::arg("key_bias") = true, py::arg("seed") = py::none())
        .def("__call__", &call_attention<BahdanauAttention>, py::arg("query"), py::arg("keys"),
             py::arg("mask") = py::none(), kAttentionCallDoc);

    layer_class<LuongAttention>(m, "LuongAttention",
                                "score_s = qᵀ k_s (dot), qᵀ W_a k_s (general) or vᵀ tanh(W [q; "
                                "k_s]) (concat).")
        .def(py::init([](int64_t query_dim, int64_t key_dim, const std::string& score, bool scaled,
                         int64_t attn_dim, std::optional<uint64_t> seed) {
                 auto owned = new Owned<LuongAttention>;
                 owned->rng = std::make_unique<Rng>(seed ? *seed : next_seed());
                 owned->layer = std::make_unique<LuongAttention>(
                     parse_luong(score), query_dim, key_dim, *owned->rng, scaled, attn_dim);
                 return owned;
             }),
             py::arg("query_dim"), py::arg("key_dim"), py::arg("score") = "dot",
             py::arg("scaled") = false, py::arg("attn_dim") = 128, py::arg("seed") = py::none())
        .def("__call__", &call_attention<LuongAttention>, py::arg("query"), py::arg("keys"),
             py::arg("mask") = py::none(), kAttentionCallDoc);
}

void bind_multihead_attention(py::module_& m) {
    layer_class<MultiheadAttention>(m, "MultiheadAttention",
                                    "nn.MultiheadAttention(E, h, batch_first=True): "
                                    "in_proj_weight, in_proj_bias, out_proj.*.")
        .def(py::init([](int64_t embed_dim, int64_t num_heads, std::optional<uint64_t> seed) {
                 return Owned<MultiheadAttention>::make(seed, embed_dim, num_heads);
             }),
             py::arg("embed_dim"), py::arg("num_heads"), py::arg("seed") = py::none())
        .def(
            "__call__",
            [](const Owned<MultiheadAttention>& w, const Tensor& query, const Tensor& key,
               const Tensor& value, std::optional<Tensor> key_padding_mask, bool causal,
               bool need_weights) {
                py::gil_scoped_release release;
                MultiheadAttentionOutput out = w.layer->forward(
                    query, key, value, mask_or_none(key_padding_mask), causal, need_weights);
                return std::make_pair(out.output, out.weights);
            },
            py::arg("query"), py::arg("key"), py::arg("value"),
            py::arg("key_padding_mask") = py::none(), py::arg("causal") = false,
            py::arg("need_weights") = true,
            "query [B,T,E], key and value [B,S,E] -> (output [B,T,E], weights [B,h,T,S] per "
            "head, or None).");
}

void bind_layer_norm_and_dropout(py::module_& m) {
    py::class_<Owned<LayerNorm>> layer_norm = layer_class<LayerNorm>(m, "LayerNorm", "");
    layer_norm
        .def(py::init([](int64_t normalized_shape, real eps) {
                 auto owned = new Owned<LayerNorm>;
                 owned->layer = std::make_unique<LayerNorm>(normalized_shape, eps);
                 return owned;
             }),
             py::arg("normalized_shape"), py::arg("eps") = 1e-5)
        .def("__call__",
             [](const Owned<LayerNorm>& w, const Tensor& x) { return w.layer->forward(x); });
    layer_class<Dropout>(m, "Dropout", "Inverted dropout in training mode, identity in eval.")
        .def(py::init([](real p, std::optional<uint64_t> seed) {
                 return Owned<Dropout>::make(seed, p);
             }),
             py::arg("p") = 0.5, py::arg("seed") = py::none())
        .def("__call__",
             [](const Owned<Dropout>& w, const Tensor& x) { return w.layer->forward(x); });
}

// The Transformer's encoder and decoder layers.
void bind_transformer_layers(py::module_& m) {
    layer_class<TransformerEncoderLayer>(m, "TransformerEncoderLayer",
                                         "nn.TransformerEncoderLayer(batch_first=True).")
        .def(py::init([](int64_t d_model, int64_t nhead, int64_t dim_feedforward, real dropout,
                         const std::string& activation, bool norm_first, real layer_norm_eps,
                         std::optional<uint64_t> seed) {
                 return Owned<TransformerEncoderLayer>::make(
                     seed, layer_options(d_model, nhead, dim_feedforward, dropout, activation,
                                         norm_first, layer_norm_eps));
             }),
             py::arg("d_model"), py::arg("nhead"), py::arg("dim_feedforward") = 2048,
             py::arg("dropout") = 0.1, py::arg("activation") = "relu",
             py::arg("norm_first") = false, py::arg("layer_norm_eps") = 1e-5,
             py::arg("seed") = py::none())
        .def(
            "__call__",
            [](const Owned<TransformerEncoderLayer>& w, const Tensor& src,
               std::optional<Tensor> src_key_padding_mask) {
                py::gil_scoped_release release;
                return w.layer->forward(src, mask_or_none(src_key_padding_mask));
            },
            py::arg("src"), py::arg("src_key_padding_mask") = py::none());

    layer_class<TransformerDecoderLayer>(m, "TransformerDecoderLayer",
                                         "nn.TransformerDecoderLayer(batch_first=True); the "
                                         "self-attention is causal.")
        .def(py::init([](int64_t d_model, int64_t nhead, int64_t dim_feedforward, real dropout,
                         const std::string& activation, bool norm_first, real layer_norm_eps,
                         std::optional<uint64_t> seed) {
                 return Owned<TransformerDecoderLayer>::make(
                     seed, layer_options(d_model, nhead, dim_feedforward, dropout, activation,
                                         norm_first, layer_norm_eps));
             }),
             py::arg("d_model"), py::arg("nhead"), py::arg("dim_feedforward") = 2048,
             py::arg("dropout") = 0.1, py::arg("activation") = "relu",
             py::arg("norm_first") = false, py::arg("layer_norm_eps") = 1e-5,
             py::arg("seed") = py::none())
        .def(
            "__call__",
            [](const Owned<TransformerDecoderLayer>& w, const Tensor& tgt, const Tensor& memory,
               std::optional<Tensor> tgt_key_padding_mask,
               std::optional<Tensor> memory_key_padding_mask) {
                py::gil_scoped_release release;
                return w.layer->forward(tgt, memory, mask_or_none(tgt_key_padding_mask),
                                        mask_or_none(memory_key_padding_mask));
            },
            py::arg("tgt"), py::arg("memory"), py::arg("tgt_key_padding_mask") = py::none(),
            py::arg("memory_key_padding_mask") = py::none());
}

// ---- optimizers (optim/) -----------------------------------------------------------------------

// The base class (step, zero_grad, lr, state_dict) and SGD.
void bind_optimizer_and_sgd(py::module_& m) {
    py::class_<Optimizer>(m, "Optimizer", py::module_local())
        .def("step",
             [](Optimizer& o) {
                 py::gil_scoped_release release;
                 o.step();
             })
        .def("zero_grad", &Optimizer::zero_grad)
        .def_property("lr", &Optimizer::lr, &Optimizer::set_lr)
        .def_property_readonly("step_count", &Optimizer::step_count)
        .def("state_dict", [](const Optimizer& o) {
            py::dict state;
            for (const auto& [name, value] : o.state_tensors()) state[py::str(name)] = value;
            py::dict out;
            out["state"] = state;
            out["hyperparameters"] = json_to_python(o.state_json());
            return out;
        });
    py::class_<SGD, Optimizer>(m, "SGD", py::module_local(), "torch.optim.SGD (dampening 0).")
        .def(py::init([](const py::iterable& params, double lr, double momentum, bool nesterov,
                         double weight_decay) {
                 return new SGD(named_from(params), lr, momentum, nesterov, weight_decay);
             }),
             py::arg("params"), py::arg("lr"), py::arg("momentum") = 0.0,
             py::arg("nesterov") = false, py::arg("weight_decay") = 0.0);
}

void bind_adam(py::module_& m) {
    auto adam_options = [](double lr, std::pair<double, double> betas, double eps,
                           double weight_decay, bool decoupled) {
        AdamOptions options;
        options.lr = lr;
        options.beta1 = betas.first;
        options.beta2 = betas.second;
        options.eps = eps;
        options.weight_decay = weight_decay;
        options.decoupled_weight_decay = decoupled;
        return options;
    };
    py::class_<Adam, Optimizer>(m, "Adam", py::module_local(), "torch.optim.Adam.")
        .def(py::init([adam_options](const py::iterable& params, double lr,
                                     std::pair<double, double> betas, double eps,
                                     double weight_decay) {
                 return new Adam(named_from(params),
                                 adam_options(lr, betas, eps, weight_decay, false));
             }),
             py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = std::make_pair(0.9, 0.999),
             py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0);
    py::class_<AdamW, Adam>(m, "AdamW", py::module_local(), "torch.optim.AdamW.")
        .def(py::init([adam_options](const py::iterable& params, double lr,
                                     std::pair<double, double> betas, double eps,
                                     double weight_decay) {
                 return new AdamW(named_from(params),
                                  adam_options(lr, betas, eps, weight_decay, true));
             }),
             py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = std::make_pair(0.9, 0.999),
             py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.01);
}

void bind_gradient_clipping(py::module_& m) {
    m.def(
        "clip_grad_norm_",
        [](const std::vector<Tensor>& params, double max_norm) {
            return clip_grad_norm(params, max_norm);
        },
        py::arg("parameters"), py::arg("max_norm"),
        "Scales every gradient so that their global L2 norm is at most max_norm; returns the "
        "norm before clipping.");
}

}  // namespace

void bind_layers(py::module_& m) {
    bind_linear_and_embedding(m);
    bind_recurrent_layers(m);
    bind_rnn_attention_layers(m);
    bind_multihead_attention(m);
    bind_layer_norm_and_dropout(m);
    bind_transformer_layers(m);
    bind_optimizer_and_sgd(m);
    bind_adam(m);
    bind_gradient_clipping(m);
}

}  // namespace seqgrad::python
