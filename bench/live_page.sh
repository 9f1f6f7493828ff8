#!/usr/bin/env bash
# The live page's budgets (docs/live.md): file size, decode latency in headless Chromium (greedy
# and beam 5, one date sentence), training speed in the page against the native build on one
# thread, and the time the page takes to reach >= 99% exact match on the date task.
#   bash bench/live_page.sh [RUN_DIR] [BUILD_DIR] [WASM_DIR]     (defaults: runs/dates build build-wasm)
# Prints one line per measurement; bench/RESULTS.md records them with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-runs/dates} build=${2:-build} wasm=${3:-build-wasm}
chromium=${SEQGRAD_CHROMIUM:-/usr/bin/chromium}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pipe="/usr/bin/python3 tests/live/chromium_pipe.py $chromium"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "engine: $(stat -c %s "$wasm/seqgrad_live.wasm") bytes wasm, $(stat -c %s "$wasm/seqgrad_live.js") bytes glue"
for limit in 100 20; do
  "$build/seqgrad" explore "$run" --live --live-module "$wasm" --limit $limit --out "$work/live$limit.html" >/dev/null 2>&1
  echo "file: --limit $limit: $(stat -c %s "$work/live$limit.html") bytes"
done
"$build/seqgrad" explore "$run" --live --live-module "$wasm" --limit 20 --no-gradients --what-if-steps 0 --out "$work/small.html" >/dev/null 2>&1
echo "file: --limit 20 --no-gradients --what-if-steps 0: $(stat -c %s "$work/small.html") bytes"

page="file://$(realpath "$work/live20.html")"
sentence=${SENTENCE:-"saturday, 14 march 1987"}
$pipe "$page#check=latency&sentence_text=$(/usr/bin/python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$sentence")" \
  "typeof liveTest !== 'undefined' && liveTest.checks_done" 600 > "$work/latency.json"
/usr/bin/python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["selftest"]["live"]["latency"]; print("decode latency in Chromium (median of 7, %r): greedy %.1f ms, beam 5 %.1f ms" % (sys.argv[2], t["greedy"], t["beam5"]))' "$work/latency.json" "$sentence"

$pipe "$page#view=train&autostart=1" "typeof liveTest !== 'undefined' && liveTest.train_done" 1800 > "$work/train.json"
/usr/bin/python3 - "$work/train.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["selftest"]["live"]
train = t["train"]
first = next((m for m in train if m["exact_match"] >= 99), None)
last = train[-1]
print("training in the page: %d steps in %.1f s (%.1f steps/s); exact match %.1f%% at the end; >= 99%% at step %s after %s s" % (
    last["step"], last["seconds"], last["step"] / last["seconds"], last["exact_match"],
    first["step"] if first else "-", "%.1f" % first["seconds"] if first else "-"))
PY
start=$(date +%s.%N)
OPENBLAS_NUM_THREADS=1 "$build/seqgrad" train configs/dates.json --quiet --set train.threads=1 \
  --set output.run_dir="$work/native" --set output.explore=0 >/dev/null 2>&1
end=$(date +%s.%N)
/usr/bin/python3 -c 'import sys; print("native, 1 thread: seqgrad train configs/dates.json (939 steps, with data, validation and test) in %.1f s" % (float(sys.argv[2]) - float(sys.argv[1])))' "$start" "$end"
