#!/usr/bin/env python3
"""Writes tests/data/recurrent_reference.json: what PyTorch's nn.RNN, nn.GRU and nn.LSTM compute
for one padded, bidirectional, 2-layer batch, in float64, for tests/unit/test_recurrent_torch.cpp.

Run once with Debian's PyTorch (apt-get install -y python3-torch), from the repository root:
    /usr/bin/python3 tests/data/make_recurrent_reference.py
The tests read the numbers; they never import torch.

Each case: random weights (every parameter under PyTorch's name), inputs x [B, T, in], lengths
(not sorted: pack_padded_sequence(enforce_sorted=False)), h0 (and c0), run through
pack_padded_sequence -> the layer -> pad_packed_sequence(total_length=T); then the scalar loss
    L = sum(out * w_out) + sum(h_n * w_h) (+ sum(c_n * w_c) for the LSTM)
with fixed random weights w_*, and its gradient with respect to x, h0, c0 and every parameter.
"""
import json
import os

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

INPUT, HIDDEN, LAYERS, BATCH, STEPS = 3, 2, 2, 3, 4
LENGTHS = [3, 4, 1]


def tensor_json(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.detach().reshape(-1).tolist()]}


def case(cell, seed):
    torch.manual_seed(seed)
    layer_class = {"rnn": torch.nn.RNN, "gru": torch.nn.GRU, "lstm": torch.nn.LSTM}[cell]
    layer = layer_class(INPUT, HIDDEN, num_layers=LAYERS, bidirectional=True, batch_first=True)
    layer = layer.double()
    with torch.no_grad():
        for p in layer.parameters():
            p.uniform_(-0.8, 0.8)
    D = 2
    x = torch.empty(BATCH, STEPS, INPUT, dtype=torch.float64).uniform_(-1, 1).requires_grad_()
    h0 = torch.empty(LAYERS * D, BATCH, HIDDEN, dtype=torch.float64).uniform_(-0.5, 0.5)
    h0.requires_grad_()
    c0 = torch.empty(LAYERS * D, BATCH, HIDDEN, dtype=torch.float64).uniform_(-0.5, 0.5)
    c0.requires_grad_()
    w_out = torch.empty(BATCH, STEPS, D * HIDDEN, dtype=torch.float64).uniform_(-1, 1)
    w_h = torch.empty(LAYERS * D, BATCH, HIDDEN, dtype=torch.float64).uniform_(-1, 1)
    w_c = torch.empty(LAYERS * D, BATCH, HIDDEN, dtype=torch.float64).uniform_(-1, 1)

    packed = pack_padded_sequence(x, torch.tensor(LENGTHS), batch_first=True,
                                  enforce_sorted=False)
    if cell == "lstm":
        packed_out, (h_n, c_n) = layer(packed, (h0, c0))
    else:
        packed_out, h_n = layer(packed, h0)
        c_n = None
    out, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=STEPS)
    loss = (out * w_out).sum() + (h_n * w_h).sum()
    if c_n is not None:
        loss = loss + (c_n * w_c).sum()
    loss.backward()

    result = {
        "cell": cell,
        "input_size": INPUT,
        "hidden_size": HIDDEN,
        "num_layers": LAYERS,
        "bidirectional": True,
        "lengths": LENGTHS,
        "parameters": {name: tensor_json(p) for name, p in layer.named_parameters()},
        "x": tensor_json(x),
        "h0": tensor_json(h0),
        "w_out": tensor_json(w_out),
        "w_h": tensor_json(w_h),
        "output": tensor_json(out),
        "h_n": tensor_json(h_n),
        "loss": float(loss),
        "grad_x": tensor_json(x.grad),
        "grad_h0": tensor_json(h0.grad),
        "grad_parameters": {name: tensor_json(p.grad) for name, p in layer.named_parameters()},
    }
    if cell == "lstm":
        result.update({"c0": tensor_json(c0), "w_c": tensor_json(w_c), "c_n": tensor_json(c_n),
                       "grad_c0": tensor_json(c0.grad)})
    return result


def main():
    reference = {
        "generator": "tests/data/make_recurrent_reference.py",
        "torch_version": torch.__version__,
        "cases": [case("rnn", 1), case("gru", 2), case("lstm", 3)],
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recurrent_reference.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("wrote", path)


if __name__ == "__main__":
    main()
