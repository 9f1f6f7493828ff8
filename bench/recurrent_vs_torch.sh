#!/bin/bash
# seqgrad's fused recurrent layers against PyTorch's nn.LSTM / nn.GRU / nn.RNN on the same shapes
# (B = 32, in = H = 256, T = 12, padded lengths T, T-1, T-2, T-3, ...; forward + backward), one
# BLAS thread, alternated: for each round, for each cell, seqgrad then PyTorch, each its own
# process. Prints the JSON lines of every run, then the medians over the rounds (thread CPU time).
#
#   bash bench/recurrent_vs_torch.sh [build-dir] [rounds]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
log=$(mktemp)
for ((round = 1; round <= rounds; ++round)); do
  for cell in lstm gru rnn; do
    "$build/bench/recurrent_cell" --cell "$cell" --reps 300 | grep '^{' | tee -a "$log"
    /usr/bin/python3 "$here/torch_recurrent.py" --cell "$cell" --reps 30 | tee -a "$log"
  done
done
/usr/bin/python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| cell | seqgrad fused layer ms (cpu) | PyTorch layer ms (cpu) | PyTorch / seqgrad (each round) |")
print("|---|---|---|---|")
for cell in ("lstm", "gru", "rnn"):
    ours = [r["layer_fused_cpu_ms"] for r in rows if r["impl"] == "seqgrad" and r["cell"] == cell]
    theirs = [r["layer_cpu_ms"] for r in rows if r["impl"] == "torch" and r["cell"] == cell]
    ratios = ", ".join(f"{t / o:.2f}" for o, t in zip(ours, theirs))
    print(f"| {cell} | {statistics.median(ours):.2f} | {statistics.median(theirs):.2f} | {ratios} |")
PY
rm -f "$log"
