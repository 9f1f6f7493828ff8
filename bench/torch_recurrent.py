#!/usr/bin/python3
"""PyTorch's nn.LSTM / nn.GRU / nn.RNN layer on the shapes of bench/recurrent_cell.cpp's layer
row, to compare with seqgrad's fused layer in the same run (bench/recurrent_vs_torch.sh).

Run with Debian's PyTorch (/usr/bin/python3) and OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1.
PyTorch is used ONLY here: never by the build, the tests or CI.

    torch_recurrent.py --cell lstm|gru|rnn [--batch 32] [--hidden 256] [--steps 12] [--reps 100]

One repetition, as in recurrent_cell.cpp: a 1-layer unidirectional layer (input = hidden) over
a padded float32 batch [B, T, in] with lengths T, T-1, T-2, T-3, T, ... (>= 1), through
pack_padded_sequence(enforce_sorted=False) and pad_packed_sequence, then backward from a fixed
upstream gradient on the padded outputs (gradients accumulate). Median thread CPU time (what
recurrent_cell.cpp reports), process CPU time (all threads: shows whether any work ran outside
the calling thread) and wall time over `reps` after reps/10 warm-up ones. Prints one JSON line.
"""
import argparse
import json
import statistics
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cell", choices=["lstm", "gru", "rnn"], required=True)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    B, H, T = args.batch, args.hidden, args.steps
    layer = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[args.cell](
        H, H, batch_first=True)
    x = torch.empty(B, T, H).uniform_(-1, 1).requires_grad_()
    lengths = torch.tensor([max(1, T - b % 4) for b in range(B)])
    upstream = torch.empty(B, T, H).uniform_(-1, 1)

    def step():
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = layer(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        out.backward(upstream)

    for _ in range(max(1, args.reps // 10)):
        step()
    cpu, process_cpu, wall = [], [], []
    for _ in range(args.reps):
        c0, p0, w0 = time.thread_time(), time.process_time(), time.perf_counter()
        step()
        cpu.append((time.thread_time() - c0) * 1e3)
        process_cpu.append((time.process_time() - p0) * 1e3)
        wall.append((time.perf_counter() - w0) * 1e3)
    print(json.dumps({"impl": "torch", "bench": "recurrent_layer", "cell": args.cell,
                      "batch": B, "hidden": H, "steps": T, "threads": 1,
                      "layer_cpu_ms": round(statistics.median(cpu), 4),
                      "layer_process_cpu_ms": round(statistics.median(process_cpu), 4),
                      "layer_wall_ms": round(statistics.median(wall), 4),
                      "torch_version": torch.__version__}))


if __name__ == "__main__":
    main()
