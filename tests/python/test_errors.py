"""Errors: each seqgrad::Error carries a kind, set where it is thrown (autograd/error.h), and the
module raises the Python exception of that kind with the C++ message unchanged: a bad value or
shape ValueError, an unknown or missing name KeyError, a missing file FileNotFoundError, a file
that cannot be read OSError, a graph used out of order RuntimeError, Ctrl-C KeyboardInterrupt."""

import os
import shutil
import signal
import threading

import numpy as np
import pytest

import seqgrad
import seqgrad.f64 as sg64


def test_a_bad_shape_or_value_is_a_value_error():
    a, b = sg64.zeros([2, 3]), sg64.zeros([4, 5])
    with pytest.raises(ValueError, match=r"^matmul.*\[2,3\].*\[4,5\]"):
        sg64.matmul(a, b)
    with pytest.raises(ValueError, match="reduction"):
        sg64.cross_entropy(sg64.zeros([2, 3]), np.array([0, 1]), reduction="avg")
    layer = seqgrad.Linear(3, 2, seed=1)
    state = layer.state_dict()
    state["weight"] = np.zeros((5, 5), np.float32)  # the names match, a shape does not
    with pytest.raises(ValueError, match=r"weight: given \[5,5\], model expects \[2,3\]"):
        layer.load_state_dict(state)


def test_an_unknown_or_missing_name_is_a_key_error_shown_as_written():
    with pytest.raises(KeyError, match="data.no_such_key: unknown key") as caught:
        seqgrad.train({"data": {"task": "dates", "no_such_key": 1}})
    assert isinstance(caught.value, seqgrad.KeyError)
    layer = seqgrad.Linear(3, 2, seed=1)
    state = layer.state_dict()
    del state["bias"]
    state["bias_typo"] = np.zeros(2, np.float32)
    with pytest.raises(KeyError) as caught:
        layer.load_state_dict(state)
    # not quoted, its lines not escaped, as KeyError's own str() would show them
    assert str(caught.value) == ("state_dict does not match the model (2 differences):\n"
                                 "  missing: bias (model expects [2])\n"
                                 "  unexpected: bias_typo [2]")
    with pytest.raises(KeyError, match="unknown section"):
        seqgrad.train({"dataset": {}})


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_such_dir: not a run directory"):
        seqgrad.load_run(str(tmp_path / "no_such_dir"))
    missing = str(tmp_path / "no_such_config.json")
    with pytest.raises(FileNotFoundError, match="no_such_config.json: cannot open the config"):
        seqgrad.train(missing)


def copy_of_run(small_run, folder):
    copy = os.path.join(folder, "run")
    shutil.copytree(small_run.run_dir, copy)
    return copy


def test_files_of_a_run_missing_or_unreadable(small_run, tmp_path):
    run = copy_of_run(small_run, str(tmp_path))
    # data/ reads the vocabulary (read_file): its FileError carries the system's error number
    os.remove(os.path.join(run, "vocab.source.json"))
    with pytest.raises(FileNotFoundError, match=r"vocab.source.json: no such file"):
        seqgrad.load_run(run)
    os.mkdir(os.path.join(run, "vocab.source.json"))
    with pytest.raises(OSError, match="vocab.source.json: is a directory") as caught:
        seqgrad.load_run(run)
    assert not isinstance(caught.value, FileNotFoundError)
    shutil.copy(os.path.join(small_run.run_dir, "vocab.source.json"),
                os.path.join(str(tmp_path), "vocab.source.json"))
    os.rmdir(os.path.join(run, "vocab.source.json"))
    shutil.copy(os.path.join(str(tmp_path), "vocab.source.json"), run)
    # a checkpoint that is a folder: the library's loader passes the kind on
    for name in ("best.safetensors", "last.safetensors"):
        path = os.path.join(run, name)
        if os.path.exists(path):
            os.remove(path)
        os.mkdir(path)
    with pytest.raises(OSError, match="best.safetensors: is a directory") as caught:
        seqgrad.load_run(run)
    assert not isinstance(caught.value, FileNotFoundError)
    for name in ("best.safetensors", "last.safetensors"):
        os.rmdir(os.path.join(run, name))
    with pytest.raises(FileNotFoundError, match=r"no checkpoint \(best.safetensors or last"):
        seqgrad.load_run(run)


def test_a_graph_used_out_of_order_is_a_runtime_error():
    x = sg64.tensor([1.0, 2.0], requires_grad=True)
    y = sg64.sum(sg64.tanh(x))
    y.backward()
    with pytest.raises(RuntimeError, match="already freed"):
        y.backward()
    with pytest.raises(RuntimeError, match="not a scalar"):
        sg64.tanh(x).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        sg64.sum(sg64.tensor([1.0, 2.0])).backward()
    # a gradient of the wrong shape is a bad value, not a misuse of the graph
    with pytest.raises(ValueError, match=r"gradient of shape \[3\] for a tensor of shape \[2\]"):
        sg64.tanh(x).backward(sg64.zeros([3]))


def test_ctrl_c_while_translating_is_a_keyboard_interrupt(small_run):
    """One SIGINT while the call runs without the GIL: translate stops between two batches and
    raises KeyboardInterrupt naming how far it got. Python's own handler is replaced for the
    test, so that a signal landing outside the call fails the test instead of ending pytest."""
    sentences = ["march {}, {}".format(1 + i % 28, 1900 + i % 200) for i in range(20000)]
    outside = []
    previous = signal.signal(signal.SIGINT, lambda *_: outside.append(True))
    try:
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt, match=r"translate: interrupted after \d+ of 20000"):
            small_run.translate(sentences, beam=5)
        timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not outside
    # the handler is Python's again, and the run still translates
    assert small_run.translate("march 3, 2001").text
