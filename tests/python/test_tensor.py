"""Tensors from Python: numpy round trips, zero-copy views and their lifetimes, autograd,
no_grad, and the GIL released in long calls. The exceptions (each error kind, with the C++
message naming the op and shapes) are in test_errors.py."""

import gc
import threading
import time

import numpy as np
import pytest

import seqgrad
import seqgrad.f64 as sg64


def test_numpy_round_trip_float_and_double():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7
    t = seqgrad.tensor(a)
    assert t.shape == (2, 3, 4)
    assert t.numpy().dtype == np.float32
    np.testing.assert_allclose(t.numpy(), a.astype(np.float32))
    t64 = sg64.tensor(a)
    assert t64.numpy().dtype == np.float64
    np.testing.assert_array_equal(t64.numpy(), a)  # bit for bit
    # any strides, any real dtype, lists, scalars: copied in
    np.testing.assert_array_equal(sg64.tensor(a[:, ::2, 1]).numpy(), a[:, ::2, 1])
    assert sg64.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert sg64.tensor(2.5).item() == 2.5
    np.testing.assert_array_equal(np.asarray(t64), a)


def test_tensor_from_numpy_is_a_copy_and_numpy_is_a_view():
    a = np.ones((2, 2))
    t = sg64.tensor(a)
    a[0, 0] = 5  # the tensor copied the values in
    assert t.numpy()[0, 0] == 1
    view = t.numpy()
    view[1, 1] = 7  # the array shares the tensor's memory
    assert t.numpy()[1, 1] == 7
    assert np.shares_memory(view, t.numpy())


def test_view_outlives_its_tensor():
    t = sg64.tensor(np.arange(1000.0))
    view = t.numpy()
    del t
    gc.collect()
    for _ in range(20):  # new tensors reuse freed buffers: the view's must not be one of them
        sg64.tensor(np.full(1000, -1.0))
    np.testing.assert_array_equal(view, np.arange(1000.0))


def test_tensor_freed_while_a_graph_holds_it():
    x = sg64.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    w = sg64.tensor(np.array([0.5, -1.0, 2.0]))
    y = sg64.sum(sg64.mul(sg64.tanh(sg64.mul(x, w)), w))
    del w  # the graph still holds w's node
    gc.collect()
    y.backward()
    wv = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), wv * wv * (1 - np.tanh(wv * np.array([1, 2, 3.0])) ** 2))


def test_backward_grad_and_no_grad():
    x = sg64.tensor(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)
    assert x.grad is None
    y = sg64.sum(x * x * 3.0 + 2.0 * x)
    assert y.op is not None and not y.is_leaf
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy() + 2)
    with sg64.no_grad():
        assert not sg64.is_grad_enabled()
        z = x * 2.0
    assert sg64.is_grad_enabled()
    assert not z.requires_grad


def test_operators_and_ops_match_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    ta, tb = sg64.tensor(a), sg64.tensor(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b)
    np.testing.assert_allclose(sg64.softmax(ta).numpy(), np.exp(a) / np.exp(a).sum(-1, keepdims=True))
    np.testing.assert_allclose((1.0 - ta / 2.0).numpy(), 1 - a / 2)
    np.testing.assert_allclose(sg64.mean(ta, dim=0).numpy(), a.mean(0))
    np.testing.assert_allclose(sg64.reshape(ta, [2, -1]).numpy(), a.reshape(2, -1))
    np.testing.assert_allclose(ta.T.numpy(), a.T)


def test_gradcheck_passes_and_reports():
    rng = np.random.default_rng(1)
    x = sg64.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    w = sg64.tensor(rng.normal(size=(5, 4)), requires_grad=True)
    b = sg64.tensor(rng.normal(size=5), requires_grad=True)
    result = sg64.gradcheck(lambda x, w, b: sg64.log_softmax(sg64.tanh(sg64.linear(x, w, b))),
                            [x, w, b])
    assert result and result.passed
    assert result.inputs_checked == 3
    assert result.elements_checked == 12 + 20 + 5
    assert result.max_abs_error < 1e-7


def test_long_calls_release_the_gil():
    a = seqgrad.randn([1500, 1500])
    started, done = threading.Event(), threading.Event()
    timing = {}

    def work():
        started.set()
        t0 = time.perf_counter()
        seqgrad.matmul(a, a)  # one long call: holding the GIL, it would stop the loop below
        timing["seconds"] = time.perf_counter() - t0
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    started.wait()
    counted = 0
    while not done.is_set():
        counted += 1
    thread.join()
    # Holding the GIL, the product would let this loop start only once it had finished (a few
    # iterations at most); released, the loop runs all along (about a million iterations a
    # second even on a loaded machine).
    assert timing["seconds"] > 0.02
    assert counted > 10000
