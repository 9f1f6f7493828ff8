"""Layers and optimizers from Python: PyTorch's parameter names, state_dict, gradients equal to
the C++ fused ones (f64), optimizer updates, and a micrograd-style training loop that learns."""

import numpy as np
import pytest

import seqgrad
import seqgrad.f64 as sg64


def gru_step_composed(x, h, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's GRU cell written in Python from the primitive ops."""
    H = h.shape[1]
    gi = sg64.linear(x, w_ih, b_ih)
    gh = sg64.linear(h, w_hh, b_hh)
    part = lambda g, k: sg64.slice(g, 1, k * H, (k + 1) * H)  # noqa: E731
    r = sg64.sigmoid(part(gi, 0) + part(gh, 0))
    z = sg64.sigmoid(part(gi, 1) + part(gh, 1))
    n = sg64.tanh(part(gi, 2) + r * part(gh, 2))
    return (1.0 - z) * n + z * h


def test_gru_cell_gradients_equal_the_cpp_fused_cell():
    cell = sg64.GRUCell(3, 4, seed=7)
    assert [name for name, _ in cell.named_parameters()] == [
        "weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    rng = np.random.default_rng(3)
    x = sg64.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    h = sg64.tensor(rng.normal(size=(2, 4)), requires_grad=True)
    weights = rng.normal(size=(2, 4))

    fused = cell(x, h)
    sg64.sum(fused * weights).backward()
    fused_grads = [x.grad.numpy(), h.grad.numpy()] + [p.grad.numpy() for p in cell.parameters()]

    x.zero_grad(), h.zero_grad(), cell.zero_grad()
    composed = gru_step_composed(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    np.testing.assert_allclose(composed.numpy(), fused.numpy(), rtol=0, atol=1e-14)
    sg64.sum(composed * weights).backward()
    composed_grads = [x.grad.numpy(), h.grad.numpy()] + [p.grad.numpy() for p in cell.parameters()]
    for a, b in zip(fused_grads, composed_grads):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def test_layers_have_pytorch_names_and_state_dicts():
    gru = seqgrad.GRU(5, 6, num_layers=2, bidirectional=True, seed=1)
    names = [n for n, _ in gru.named_parameters()]
    assert "weight_ih_l0" in names and "bias_hh_l1_reverse" in names
    assert gru.weight_hh_l0.shape == (18, 6)
    out, h_n = gru(seqgrad.randn([3, 7, 5]), lengths=[7, 4, 2])
    assert out.shape == (3, 7, 12) and h_n.shape == (4, 3, 6)
    lstm = seqgrad.LSTM(5, 6, seed=1)
    out, (h, c) = lstm(seqgrad.randn([2, 3, 5]))
    assert c.shape == (1, 2, 6)
    mha = seqgrad.MultiheadAttention(8, 2, seed=1)
    assert sorted(mha.state_dict()) == ["in_proj_bias", "in_proj_weight", "out_proj.bias",
                                        "out_proj.weight"]
    out, weights = mha(seqgrad.randn([2, 3, 8]), seqgrad.randn([2, 4, 8]), seqgrad.randn([2, 4, 8]))
    assert out.shape == (2, 3, 8) and weights.shape == (2, 2, 3, 4)
    bahdanau = seqgrad.BahdanauAttention(6, 8, attn_dim=5, seed=2)
    assert sorted(bahdanau.state_dict()) == ["W_k.bias", "W_k.weight", "W_q.weight", "v.weight"]
    context, weights = bahdanau(seqgrad.randn([2, 6]), seqgrad.randn([2, 4, 8]))
    np.testing.assert_allclose(weights.numpy().sum(1), 1, rtol=1e-6)
    luong = seqgrad.LuongAttention(8, 8, score="general", seed=2)
    assert luong(seqgrad.randn([2, 8]), seqgrad.randn([2, 4, 8]))[0].shape == (2, 8)
    enc = seqgrad.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, seed=3)
    assert "self_attn.in_proj_weight" in enc.state_dict()
    assert enc(seqgrad.randn([2, 5, 8])).shape == (2, 5, 8)
    dec = seqgrad.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, seed=3)
    assert "multihead_attn.out_proj.weight" in dec.state_dict()
    assert dec(seqgrad.randn([2, 3, 8]), seqgrad.randn([2, 5, 8])).shape == (2, 3, 8)
    # state_dict round trip, and a mismatch names the parameter
    a, b = seqgrad.Linear(3, 2, seed=1), seqgrad.Linear(3, 2, seed=2)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    with pytest.raises(KeyError, match="bias"):
        b.load_state_dict({"weight": a.weight})


def test_sgd_step_is_p_minus_lr_grad_and_views_see_it():
    lin = sg64.Linear(2, 1, seed=4)
    view = lin.weight.numpy()  # a view: sees the optimizer's in-place update
    before = view.copy()
    opt = sg64.SGD(lin.named_parameters(), lr=0.1)
    sg64.sum(lin(sg64.tensor([[1.0, 2.0]]))).backward()
    opt.step()
    np.testing.assert_allclose(view, before - 0.1 * np.array([[1.0, 2.0]]))
    assert opt.step_count == 1
    assert "sgd" in str(opt.state_dict()["hyperparameters"])


def test_micrograd_style_training_loop_learns():
    # two interleaved half moons, a 2-16-16-2 MLP, Adam, cross-entropy: the loop of micrograd's
    # demo written with seqgrad's tensors
    rng = np.random.default_rng(0)
    n = 200
    angle = rng.uniform(0, np.pi, n)
    label = rng.integers(0, 2, n)
    xs = np.stack([np.cos(angle) + label, np.sin(angle) * (1 - 2 * label) + 0.5 * label], 1)
    xs += rng.normal(scale=0.1, size=xs.shape)
    layers = [seqgrad.Linear(2, 16, seed=1), seqgrad.Linear(16, 16, seed=2),
              seqgrad.Linear(16, 2, seed=3)]
    params = [p for layer in layers for p in layer.parameters()]
    opt = seqgrad.Adam(params, lr=0.02)
    x = seqgrad.tensor(xs)

    def loss_and_accuracy():
        h = seqgrad.relu(layers[0](x))
        h = seqgrad.relu(layers[1](h))
        logits = layers[2](h)
        accuracy = (logits.numpy().argmax(1) == label).mean()
        return seqgrad.cross_entropy(logits, label), accuracy

    first, _ = loss_and_accuracy()
    for _ in range(150):
        opt.zero_grad()
        loss, accuracy = loss_and_accuracy()
        loss.backward()
        opt.step()
    assert loss.item() < first.item() / 4
    assert accuracy > 0.95
