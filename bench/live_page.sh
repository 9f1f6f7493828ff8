#!/usr/bin/env bash
# The live page's budgets (docs/live.md): file size (float32 and float16 weights), decode latency
# in headless Chromium (greedy and beam 5, one sentence: $SENTENCE, default a date) beside the
# native build's on one thread (bench/decode_latency), and for a date run the training speed in
# the page against the native build on one thread and the time the page takes to reach >= 99%
# exact match.
#   bash bench/live_page.sh [RUN_DIR] [BUILD_DIR] [WASM_DIR]     (defaults: runs/dates build build-wasm)
#   SENTENCE="Ich habe ..." bash bench/live_page.sh runs/deu-eng
# Needs BUILD_DIR's seqgrad and bench/decode_latency. Prints one line per measurement, each with
# the load average at its end; bench/RESULTS.md records them with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-runs/dates} build=${2:-build} wasm=${3:-build-wasm}
chromium=${SEQGRAD_CHROMIUM:-/usr/bin/chromium}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pipe="/usr/bin/python3 tests/live/chromium_pipe.py $chromium"
load() { echo "(load $(cut -d' ' -f1-3 /proc/loadavg))"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "engine: $(stat -c %s "$wasm/seqgrad_live.wasm") bytes wasm, $(stat -c %s "$wasm/seqgrad_live.js") bytes glue"
for limit in 100 20; do
  "$build/seqgrad" explore "$run" --live --live-module "$wasm" --limit $limit --out "$work/live$limit.html" >/dev/null 2>&1
  echo "file: --limit $limit: $(stat -c %s "$work/live$limit.html") bytes"
done
"$build/seqgrad" explore "$run" --live --live-module "$wasm" --limit 20 --no-gradients --what-if-steps 0 --out "$work/small.html" >/dev/null 2>&1
echo "file: --limit 20 --no-gradients --what-if-steps 0: $(stat -c %s "$work/small.html") bytes"
"$build/seqgrad" explore "$run" --live --live-module "$wasm" --limit 20 --live-weights f16 --out "$work/half.html" 2>/dev/null > "$work/half.txt"
echo "file: --limit 20 --live-weights f16: $(stat -c %s "$work/half.html") bytes; $(grep '^weights:' "$work/half.txt")"

sentence=${SENTENCE:-"saturday, 14 march 1987"}
quoted=$(/usr/bin/python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$sentence")
for weights in live20 half; do
  $pipe "file://$(realpath "$work/$weights.html")#check=latency&sentence_text=$quoted" \
    "typeof liveTest !== 'undefined' && liveTest.checks_done" 600 > "$work/latency.json"
  /usr/bin/python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["selftest"]["live"]["latency"]; print("decode latency in Chromium (%s weights, median of 7, %r): greedy %.1f ms, beam 5 %.1f ms" % (sys.argv[3], sys.argv[2], t["greedy"], t["beam5"]))' \
    "$work/latency.json" "$sentence" "$([ $weights = half ] && echo float16 || echo float32)"
  echo "  $(load)"
done
"$build/bench/decode_latency" "$run" "$sentence" > "$work/native.json"
/usr/bin/python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); print("decode latency native, 1 thread (bench/decode_latency, median of 7): greedy %.2f ms, beam 5 %.2f ms (%d and %d tokens)" % (t["greedy_ms"], t["beam5_ms"], t["greedy_tokens"], t["beam5_tokens"]))' "$work/native.json"
echo "  $(load)"

if ! grep -q '"task": *"dates"' "$run/config.json"; then exit 0; fi  # the Train view: date runs
page="file://$(realpath "$work/live20.html")"
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
echo "  $(load)"
start=$(date +%s.%N)
OPENBLAS_NUM_THREADS=1 "$build/seqgrad" train configs/dates.json --quiet --set train.threads=1 \
  --set output.run_dir="$work/native" --set output.explore=0 >/dev/null 2>&1
end=$(date +%s.%N)
/usr/bin/python3 -c 'import sys; print("native, 1 thread: seqgrad train configs/dates.json (939 steps, with data, validation and test) in %.1f s" % (float(sys.argv[2]) - float(sys.argv[1])))' "$start" "$end"
echo "  $(load)"
