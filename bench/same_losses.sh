#!/usr/bin/env bash
# bench/same_losses.sh — does a change alter the numbers training computes? Trains
# configs/dates.json for 150 steps (one epoch of 9,600 pairs at batch 64, loss logged at every
# step, fixed seeds, 1 thread) with two `seqgrad` binaries and compares the logged losses step by
# step. Exits 0 when every step agrees to the tolerance (relative), 1 otherwise.
#
# usage: bench/same_losses.sh BASE_SEQGRAD NEW_SEQGRAD [--tolerance 1e-6] [--steps 150]
#   e.g. git worktree add /tmp/base <commit> && cmake -S /tmp/base -B /tmp/base/build && \
#        cmake --build /tmp/base/build --target seqgrad_cli && \
#        bench/same_losses.sh /tmp/base/build/seqgrad build/seqgrad
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -ge 2 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
base="$1" new="$2"; shift 2
tolerance=1e-6 steps=150
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tolerance) tolerance="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    *) echo "same_losses.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for arm in base new; do
  bin="$base"; [[ $arm == new ]] && bin="$new"
  OPENBLAS_NUM_THREADS=1 "$bin" train "$here/../configs/dates.json" --quiet \
    --set data.dates_train=$((steps * 64)) --set train.epochs=1 --set train.log_every=1 \
    --set train.threads=1 --set output.explore=0 --set output.run_dir="$work/$arm" >/dev/null
done
python3 - "$work/base/metrics.jsonl" "$work/new/metrics.jsonl" "$tolerance" <<'PY'
import json, sys
def losses(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("split", "train") == "train" and "step" in r and "loss" in r:
            out[r["step"]] = r["loss"]
    return out
a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if not a or a.keys() != b.keys():
    sys.exit(f"same_losses: the runs logged different steps ({len(a)} vs {len(b)})")
worst = max(abs(a[s] - b[s]) / max(abs(a[s]), 1e-30) for s in a)
print(f"{len(a)} steps compared; largest relative difference {worst:.3g} (tolerance {tol:g})")
sys.exit(0 if worst <= tol else 1)
PY
