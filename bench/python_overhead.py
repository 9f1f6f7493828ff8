"""What calling seqgrad from Python costs: one op call from Python against the same call from C++
(bench/op_call) and against PyTorch eager from Python, for a small op (add of two [8,8] tensors
that require grad) and one GRU step (GRUCell 32 -> 64, batch 16); then a short training loop
written in Python (a 2-64-64-2 MLP on 256 points, Adam, cross-entropy: forward, zero_grad,
backward, step) with seqgrad's tensors against the same loop in PyTorch. One thread each.
Rounds alternate the three; the medians over rounds are reported.

  usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/python_overhead.py [--build build]
         [--rounds 5] [--seconds 1]
PyTorch (Debian's python3-torch) is only the baseline: without it, its columns are left out."""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--build", default="build")
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--seconds", type=float, default=1.0)
args = parser.parse_args()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(args.build, "python"))
import seqgrad  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None


def per_call_us(fn, seconds, calls=1000):
    """Median over timed runs of `calls` calls, in microseconds per call."""
    for _ in range(calls // 10):
        fn()
    runs = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(runs) < 5:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(runs)


def seqgrad_calls(seconds):
    a = seqgrad.full([8, 8], 0.5, requires_grad=True)
    b = seqgrad.full([8, 8], 0.25, requires_grad=True)
    cell = seqgrad.GRUCell(32, 64, seed=1)
    x, h = seqgrad.full([16, 32], 0.1), seqgrad.full([16, 64], 0.2)
    return {"add_us": per_call_us(lambda: seqgrad.add(a, b), seconds),
            "gru_step_us": per_call_us(lambda: cell(x, h), seconds)}


def torch_calls(seconds):
    a = torch.full((8, 8), 0.5, requires_grad=True)
    b = torch.full((8, 8), 0.25, requires_grad=True)
    cell = torch.nn.GRUCell(32, 64)
    x, h = torch.full((16, 32), 0.1), torch.full((16, 64), 0.2)
    return {"add_us": per_call_us(lambda: torch.add(a, b), seconds),
            "gru_step_us": per_call_us(lambda: cell(x, h), seconds)}


def moons(n=256):
    rng = np.random.default_rng(0)
    angle, label = rng.uniform(0, np.pi, n), rng.integers(0, 2, n)
    points = np.stack([np.cos(angle) + label, np.sin(angle) * (1 - 2 * label) + 0.5 * label], 1)
    return points.astype(np.float32), label


def seqgrad_loop(steps=200):
    points, label = moons()
    layers = [seqgrad.Linear(2, 64, seed=1), seqgrad.Linear(64, 64, seed=2),
              seqgrad.Linear(64, 2, seed=3)]
    opt = seqgrad.Adam([p for layer in layers for p in layer.parameters()], lr=0.01)
    x = seqgrad.tensor(points)
    start = time.perf_counter()
    for _ in range(steps):
        logits = layers[2](seqgrad.relu(layers[1](seqgrad.relu(layers[0](x)))))
        loss = seqgrad.cross_entropy(logits, label)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps * 1e3, loss.item()


def torch_loop(steps=200):
    points, label = moons()
    model = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.from_numpy(points), torch.from_numpy(label)
    start = time.perf_counter()
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps * 1e3, loss.item()


results = {key: [] for key in ["cpp_add", "cpp_gru", "py_add", "py_gru", "torch_add", "torch_gru",
                               "py_loop", "torch_loop"]}
for round_ in range(args.rounds):
    cpp = json.loads(subprocess.check_output(
        [os.path.join(args.build, "bench", "op_call"), "--seconds", str(args.seconds)]))
    results["cpp_add"].append(cpp["add_us"])
    results["cpp_gru"].append(cpp["gru_step_us"])
    py = seqgrad_calls(args.seconds)
    results["py_add"].append(py["add_us"])
    results["py_gru"].append(py["gru_step_us"])
    results["py_loop"].append(seqgrad_loop()[0])
    if torch is not None:
        t = torch_calls(args.seconds)
        results["torch_add"].append(t["add_us"])
        results["torch_gru"].append(t["gru_step_us"])
        results["torch_loop"].append(torch_loop()[0])
m = {key: statistics.median(v) for key, v in results.items() if v}

cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
            if line.startswith("model name")), platform.processor())
print(f"machine: {os.cpu_count()} cores, {cpu}; Python {platform.python_version()}"
      + (f", PyTorch {torch.__version__}" if torch else ""))
print(f"medians of {args.rounds} alternated rounds, 1 thread\n")
print("| call | C++ µs | seqgrad from Python µs | Python / C++ | PyTorch eager µs | seqgrad / PyTorch |")
print("|---|---|---|---|---|---|")
for name, key in [("add [8,8] (requires grad)", "add"), ("GRU step 32->64, batch 16", "gru")]:
    row = f"| {name} | {m['cpp_' + key]:.2f} | {m['py_' + key]:.2f} | {m['py_' + key] / m['cpp_' + key]:.2f}x |"
    if torch is not None:
        row += f" {m['torch_' + key]:.2f} | {m['py_' + key] / m['torch_' + key]:.2f}x |"
    print(row)
print("\n| training loop (MLP 2-64-64-2, 256 points, Adam) | ms/step |\n|---|---|")
print(f"| seqgrad from Python | {m['py_loop']:.3f} |")
if torch is not None:
    print(f"| PyTorch eager | {m['torch_loop']:.3f} |")
    print(f"| seqgrad / PyTorch (time) | {m['py_loop'] / m['torch_loop']:.2f}x |")
