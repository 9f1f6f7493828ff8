#!/usr/bin/env python3
"""bench/alternate.py — time several variants of bench/train_throughput against each other.

Each variant ("arm") is a train_throughput binary plus environment settings (SEQGRAD_DISABLE,
autograd/kernels/switches.h) and arguments. For every (config, threads) cell the arms run alternately,
round after round (A B C ... A B C ...), each run its own process, and the table shows each
arm's median ms/step over the rounds, the spread (min..max), and its ratio to the cell's first
arm. Alternating spreads the load of a shared machine over all arms alike.

usage: alternate.py --arms FILE --configs "a e" --threads "1 2" --rounds R --seconds S
                    [--raw FILE] [--title TEXT]
FILE holds one arm per line:  label | build-dir | ENV=value ... | extra args
(a `#` starts a comment; a line's threads may be fixed with `threads=N` among the extra
args, and such an arm runs only in cells of that thread count; when every arm fixes its
threads, each config is one cell with all arms, each at its own thread count).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def parse_arms(path):
    arms = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 4:
                sys.exit(f"alternate.py: {path}:{n}: expected 'label | build | env | args', "
                         f"got {len(parts)} fields")
            label, build, env, args = parts
            env_map = {}
            for item in env.split():
                if "=" not in item:
                    sys.exit(f"alternate.py: {path}:{n}: environment item '{item}' is not NAME=value")
                k, v = item.split("=", 1)
                env_map[k] = v
            extra, threads = [], None
            for a in args.split():
                if a.startswith("threads="):
                    threads = int(a.split("=", 1)[1])
                else:
                    extra.append(a)
            binary = os.path.join(build, "bench", "train_throughput")
            if not os.access(binary, os.X_OK):
                sys.exit(f"alternate.py: {path}:{n}: {binary} is not built")
            arms.append({"label": label, "binary": binary, "env": env_map, "args": extra,
                         "threads": threads})
    if not arms:
        sys.exit(f"alternate.py: {path}: no arms")
    return arms


def run_once(arm, config, threads, seconds, raw):
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
                "OMP_WAIT_POLICY": "PASSIVE"})
    env.pop("SEQGRAD_DISABLE", None)
    env.update(arm["env"])
    cmd = [arm["binary"], "--config", config, "--threads", str(threads), "--seconds",
           str(seconds)] + arm["args"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"alternate.py: {' '.join(cmd)} exited with {out.returncode}:\n{out.stderr}")
    line = json.loads(out.stdout.strip().splitlines()[-1])
    if raw:
        line["arm"] = arm["label"]
        raw.write(json.dumps(line) + "\n")
        raw.flush()
    return line


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arms", required=True)
    p.add_argument("--configs", default="a e")
    p.add_argument("--threads", default="1 2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--raw")
    p.add_argument("--title", default="")
    a = p.parse_args()
    arms = parse_arms(a.arms)
    raw = open(a.raw, "a") if a.raw else None
    load_start = open("/proc/loadavg").read().split()[:3]
    tables = []
    all_fixed = all(arm["threads"] is not None for arm in arms)
    thread_counts = [None] if all_fixed else [int(t) for t in a.threads.split()]
    for config in a.configs.split():
        for threads in thread_counts:
            cell = [arm for arm in arms if all_fixed or arm["threads"] in (None, threads)]
            if not cell:
                continue
            times = {arm["label"]: [] for arm in cell}
            rss = {arm["label"]: [] for arm in cell}
            for r in range(a.rounds):
                for arm in cell:
                    print(f"alternate.py: config {config}, {arm['threads'] or threads} thread(s), "
                          f"round {r + 1}/"
                          f"{a.rounds}: {arm['label']}", file=sys.stderr, flush=True)
                    line = run_once(arm, config, arm["threads"] or threads, a.seconds, raw)
                    times[arm["label"]].append(line["ms_per_step"])
                    rss[arm["label"]].append(line["peak_rss_mb"])
            base = statistics.median(times[cell[0]["label"]])
            heading = (f"**config ({config})**" if threads is None else
                       f"**config ({config}), {threads} thread{'s' if threads > 1 else ''}**")
            rows = [heading, "",
                    "| variant | threads | ms/step (median) | min..max | vs first | vs previous "
                    "| peak RSS MB |",
                    "|---|---|---|---|---|---|---|"]
            previous = base
            for arm in cell:
                t = times[arm["label"]]
                m = statistics.median(t)
                rows.append(f"| {arm['label']} | {arm['threads'] or threads} | {m:.2f} | "
                            f"{min(t):.2f}..{max(t):.2f} | {m / base:.3f} | {m / previous:.3f} | "
                            f"{statistics.median(rss[arm['label']]):.0f} |")
                previous = m
            tables.append("\n".join(rows))
            print(tables[-1] + "\n", file=sys.stderr, flush=True)
    load_end = open("/proc/loadavg").read().split()[:3]
    if a.title:
        print(f"### {a.title}\n")
    print(f"`{' '.join(sys.argv)}` — {a.rounds} alternated rounds of {a.seconds} s each, "
          f"load average {' '.join(load_start)} at the start, {' '.join(load_end)} at the end.\n")
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
