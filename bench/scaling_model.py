#!/usr/bin/env python3
"""The scaling model of docs/scaling.md: measured step times and gradient sizes in, the time of a
ring allreduce over N machines and the parallel efficiency that follows out, as Markdown tables.

  python3 bench/scaling_model.py --config a --step-ms 160 --gradient-mb 20.9 --backward-share 0.67 \
      --last-bucket-share 0.20 [--latency-us 25]

Model (stated in docs/scaling.md):
  ring allreduce of S bytes over N machines at B bytes/s, per-message latency a:
      T_ar(N) = 2 (N-1)/N * S / B + 2 (N-1) a
  weak scaling (every machine keeps the measured per-machine batch and step time T):
      without overlap   E = T / (T + T_ar)
      with overlap      E = T / (T + max(T_ar * last, T_ar - backward * T))
  where `backward` is the backward pass's share of the step (the time during which gradients
  become ready and can be sent) and `last` the share of the gradient that is only ready at the very
  end of the backward (the encoder's embedding, whose gradient is the last op's).
"""
import argparse

p = argparse.ArgumentParser()
p.add_argument("--config", required=True)
p.add_argument("--step-ms", type=float, required=True, help="measured step time of one machine")
p.add_argument("--rows", type=int, default=32, help="rows per machine in the measured step")
p.add_argument("--gradient-mb", type=float, required=True)
p.add_argument("--backward-share", type=float, default=0.67)
p.add_argument("--last-bucket-share", type=float, default=0.2)
p.add_argument("--latency-us", type=float, default=25.0)
a = p.parse_args()

speeds = [10, 25, 100]  # Gb/s
machines = [2, 4, 8, 16, 32, 64]
S = a.gradient_mb * 1e6
T = a.step_ms / 1e3


def t_ar(n, gbps):
    return 2 * (n - 1) / n * S / (gbps * 1e9 / 8) + 2 * (n - 1) * a.latency_us * 1e-6


print(f"### Config ({a.config}): step {a.step_ms:.1f} ms per machine of {a.rows} rows, "
      f"gradient {a.gradient_mb:.1f} MB\n")
print("Ring allreduce time, ms:\n")
print("| machines | " + " | ".join(f"{g} Gb/s" for g in speeds) + " |")
print("|---|" + "---|" * len(speeds))
for n in machines:
    print(f"| {n} | " + " | ".join(f"{1e3 * t_ar(n, g):.1f}" for g in speeds) + " |")
print("\nParallel efficiency, weak scaling (global batch = machines x per-machine rows), "
      "without / with overlap of the backward pass:\n")
print("| machines | global batch | " + " | ".join(f"{g} Gb/s" for g in speeds) + " |")
print("|---|---|" + "---|" * len(speeds))
for n in machines:
    cells = []
    for g in speeds:
        c = t_ar(n, g)
        plain = T / (T + c)
        hidden = T / (T + max(c * a.last_bucket_share, c - a.backward_share * T))
        cells.append(f"{100 * plain:.0f}% / {100 * hidden:.0f}%")
    print(f"| {n} | {n * a.rows} | " + " | ".join(cells) + " |")
print("\nStrong scaling (a fixed global batch split over the machines; step time taken as "
      "linear in rows): the smallest global batch for which N machines reach 80% efficiency "
      "without overlap, i.e. compute per machine >= 4 x T_ar:\n")
print("| machines | " + " | ".join(f"{g} Gb/s" for g in speeds) + " |")
print("|---|" + "---|" * len(speeds))
per_row = T / a.rows
for n in machines:
    print(f"| {n} | " + " | ".join(f"{int(4 * t_ar(n, g) / per_row * n + 0.999)}" for g in speeds)
          + " |")
