#!/usr/bin/env python3
"""Writes tests/data/transformer_reference.json: what PyTorch's nn.LayerNorm,
nn.MultiheadAttention and nn.Transformer compute in float64 on tiny padded batches, for
tests/unit/test_transformer_torch.cpp.

Run once with Debian's PyTorch (apt-get install -y python3-torch), from the repository root:
    /usr/bin/python3 tests/data/make_transformer_reference.py
The tests read the numbers; they never import torch.

Every case holds random parameters (under PyTorch's names), the inputs, the outputs and the
gradient of a scalar loss L = sum(out * w) (+ more terms, see each case) with respect to the
inputs and every parameter. Masks are bool, True at padding (PyTorch's convention); the JSON
holds them as 0/1. Modules run in training mode with dropout 0 (PyTorch's inference fast path
is not used).
  layer_norm:  nn.LayerNorm(5) on x [2,3,5]
  mha_cross:   nn.MultiheadAttention(6, 2) on query [2,3,6], key = value [2,4,6], key padding,
               need_weights with the weights averaged over heads
  mha_self:    the same as self-attention on [2,4,6] with the causal mask and key padding
  transformer_post / transformer_pre: nn.Transformer(d_model 4, 2 heads, 2+2 layers, FFN 6,
               norm_first False / True) on src [3,5,4], tgt [3,4,4] with source, target and
               memory key-padding masks and the causal mask; L = sum(memory * w_memory) +
               sum(out * w_out)
  model:       the whole translation model of models/model/transformer.h (scaled embeddings,
               learned positions, nn.Transformer, output projection) on token ids; L = mean
               cross-entropy over the real target tokens with label smoothing 0.1
"""
import json
import math
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def tensor_json(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.detach().reshape(-1).tolist()]}


def randomize(module, scale=0.5):
    with torch.no_grad():
        for p in module.parameters():
            p.uniform_(-scale, scale)


def padding(lengths, max_len):
    return torch.tensor([[j >= n for j in range(max_len)] for n in lengths])


def rand(*shape):
    return torch.empty(*shape).uniform_(-1, 1)


def grads(module):
    return {name: tensor_json(p.grad) for name, p in module.named_parameters()}


def params(module):
    return {name: tensor_json(p) for name, p in module.named_parameters()}


def layer_norm_case():
    torch.manual_seed(1)
    norm = torch.nn.LayerNorm(5)
    randomize(norm, 1.0)
    x = rand(2, 3, 5).requires_grad_()
    w = rand(2, 3, 5)
    y = norm(x)
    loss = (y * w).sum()
    loss.backward()
    return {"parameters": params(norm), "x": tensor_json(x), "w": tensor_json(w),
            "y": tensor_json(y), "loss": float(loss), "grad_x": tensor_json(x.grad),
            "grad_parameters": grads(norm)}


def mha_case(self_attention, seed):
    torch.manual_seed(seed)
    E, H = 6, 2
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True)
    randomize(mha)
    if self_attention:
        T = S = 4
        lengths = [4, 3]
        query = rand(2, T, E).requires_grad_()
        key = query
        attn_mask = torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1)
    else:
        T, S = 3, 4
        lengths = [4, 2]
        query = rand(2, T, E).requires_grad_()
        key = rand(2, S, E).requires_grad_()
        attn_mask = None
    pad = padding(lengths, S)
    out, weights = mha(query, key, key, key_padding_mask=pad, attn_mask=attn_mask,
                       need_weights=True, average_attn_weights=True)
    w = rand(*out.shape)
    loss = (out * w).sum()
    loss.backward()
    case = {"embed_dim": E, "heads": H, "causal": self_attention, "lengths": lengths,
            "parameters": params(mha), "query": tensor_json(query), "w": tensor_json(w),
            "output": tensor_json(out), "weights": tensor_json(weights), "loss": float(loss),
            "grad_query": tensor_json(query.grad), "grad_parameters": grads(mha)}
    if not self_attention:
        case.update({"key": tensor_json(key), "grad_key": tensor_json(key.grad)})
    return case


def transformer_case(norm_first, seed):
    torch.manual_seed(seed)
    E, H, F_, L = 4, 2, 6, 2
    model = torch.nn.Transformer(d_model=E, nhead=H, num_encoder_layers=L, num_decoder_layers=L,
                                 dim_feedforward=F_, dropout=0.0, batch_first=True,
                                 norm_first=norm_first)
    randomize(model)
    src_lengths, tgt_lengths = [5, 3, 2], [4, 2, 3]
    src = rand(3, 5, E).requires_grad_()
    tgt = rand(3, 4, E).requires_grad_()
    src_pad, tgt_pad = padding(src_lengths, 5), padding(tgt_lengths, 4)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    memory = model.encoder(src, src_key_padding_mask=src_pad)
    out = model.decoder(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
                        memory_key_padding_mask=src_pad)
    w_memory, w_out = rand(*memory.shape), rand(*out.shape)
    loss = (memory * w_memory).sum() + (out * w_out).sum()
    loss.backward()
    return {"d_model": E, "heads": H, "ff_size": F_, "layers": L, "norm_first": norm_first,
            "src_lengths": src_lengths, "tgt_lengths": tgt_lengths,
            "parameters": params(model), "src": tensor_json(src), "tgt": tensor_json(tgt),
            "w_memory": tensor_json(w_memory), "w_out": tensor_json(w_out),
            "memory": tensor_json(memory), "output": tensor_json(out), "loss": float(loss),
            "grad_src": tensor_json(src.grad), "grad_tgt": tensor_json(tgt.grad),
            "grad_parameters": grads(model)}


class TranslationModel(torch.nn.Module):
    """models/model/transformer.h in PyTorch: the same parameter names."""

    def __init__(self, source_vocab, target_vocab, E, H, F_, L, max_positions):
        super().__init__()
        self.source_embedding = torch.nn.Embedding(source_vocab, E, padding_idx=0)
        self.target_embedding = torch.nn.Embedding(target_vocab, E, padding_idx=0)
        self.source_positions = torch.nn.Module()
        self.source_positions.embedding = torch.nn.Embedding(max_positions, E)
        self.target_positions = torch.nn.Module()
        self.target_positions.embedding = torch.nn.Embedding(max_positions, E)
        self.transformer = torch.nn.Transformer(d_model=E, nhead=H, num_encoder_layers=L,
                                                num_decoder_layers=L, dim_feedforward=F_,
                                                dropout=0.0, batch_first=True)
        self.out = torch.nn.Linear(E, target_vocab)
        self.E = E

    def embed(self, embedding, positions, ids):
        T = ids.shape[1]
        return embedding(ids) * math.sqrt(self.E) + positions.embedding(torch.arange(T))

    def forward(self, src, tgt_in, src_pad, tgt_pad):
        T = tgt_in.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        memory = self.transformer.encoder(self.embed(self.source_embedding,
                                                     self.source_positions, src),
                                          src_key_padding_mask=src_pad)
        out = self.transformer.decoder(self.embed(self.target_embedding, self.target_positions,
                                                  tgt_in), memory, tgt_mask=causal,
                                       tgt_key_padding_mask=tgt_pad,
                                       memory_key_padding_mask=src_pad)
        return self.out(out)


def model_case(seed):
    torch.manual_seed(seed)
    Vs, Vt, E, H, F_, L, P = 9, 10, 4, 2, 6, 2, 8
    model = TranslationModel(Vs, Vt, E, H, F_, L, P)
    randomize(model)
    with torch.no_grad():  # the padding rows stay zero, as seqgrad's Embedding keeps them
        model.source_embedding.weight[0].zero_()
        model.target_embedding.weight[0].zero_()
    PAD, SOS, EOS = 0, 1, 2
    src_lengths, tgt_lengths = [5, 3, 2], [4, 2, 3]
    S, T = 5, 4
    g = torch.Generator().manual_seed(seed)
    src = torch.full((3, S), PAD, dtype=torch.long)
    tgt_in = torch.full((3, T), PAD, dtype=torch.long)
    tgt_out = torch.full((3, T), PAD, dtype=torch.long)
    for b in range(3):
        n = src_lengths[b]
        src[b, :n - 1] = torch.randint(4, Vs, (n - 1,), generator=g)
        src[b, n - 1] = EOS
        m = tgt_lengths[b]
        words = torch.randint(4, Vt, (m - 1,), generator=g)
        tgt_in[b, 0] = SOS
        tgt_in[b, 1:m] = words
        tgt_out[b, :m - 1] = words
        tgt_out[b, m - 1] = EOS
    logits = model(src, tgt_in, padding(src_lengths, S), padding(tgt_lengths, T))
    loss = F.cross_entropy(logits.reshape(-1, Vt), tgt_out.reshape(-1), ignore_index=PAD,
                           label_smoothing=0.1)
    loss.backward()
    grad = grads(model)
    for name in ("source_embedding.weight", "target_embedding.weight"):
        grad[name]["data"] = [0.0 if i < E else v for i, v in enumerate(grad[name]["data"])]
    return {"source_vocab": Vs, "target_vocab": Vt, "d_model": E, "heads": H, "ff_size": F_,
            "layers": L, "max_positions": P, "label_smoothing": 0.1,
            "src_ids": src.reshape(-1).tolist(), "src_lengths": src_lengths,
            "tgt_in": tgt_in.reshape(-1).tolist(), "tgt_out": tgt_out.reshape(-1).tolist(),
            "tgt_lengths": tgt_lengths, "src_len": S, "tgt_len": T,
            "parameters": params(model), "logits": tensor_json(logits), "loss": float(loss),
            "grad_parameters": grad}


def main():
    reference = {
        "generator": "tests/data/make_transformer_reference.py",
        "torch_version": torch.__version__,
        "layer_norm": layer_norm_case(),
        "mha_cross": mha_case(False, 2),
        "mha_self": mha_case(True, 3),
        "transformer_post": transformer_case(False, 4),
        "transformer_pre": transformer_case(True, 5),
        "model": model_case(6),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformer_reference.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(reference, f)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
