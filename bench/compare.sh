#!/usr/bin/env bash
# bench/compare.sh — seqgrad vs PyTorch on the same model, data and step (issue 7).
#
# Runs our benchmark programs and bench/torch_baseline.py alternately in one run
# (ours, torch, ours, torch, ... for --rounds rounds), for every training config and for
# decoding, with 1 and 2 threads; every measurement is its own process, so peak RSS is
# per measurement. Prints a markdown report (machine info, tables of medians over the
# rounds and the ratios ours/torch) ready to paste into bench/RESULTS.md.
#
# Usage: bench/compare.sh [--rounds R] [--seconds S] [--threads "1 2"] [--configs "a b c d e"]
#                         [--decode-modes "greedy:1 beam5:1 greedy:32"] [--no-train] [--no-decode]
#                         [--build DIR] [--raw FILE] [--python PY]
#   --rounds R    alternations per measurement (default 3); the table shows the median
#   --seconds S   timed seconds per measurement, after warm-up (default 10)
#   --build DIR   where build/bench/train_throughput and decode_throughput live (default build)
#   --raw FILE    also write every JSON line measured (both implementations) to FILE
#
# Both implementations run with OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N
# OMP_WAIT_POLICY=PASSIVE (idle threads block instead of spinning: on 2 cores spinning makes
# PyTorch slower with 2 threads than with 1). PyTorch is Debian's python3-torch, run by
# /usr/bin/python3; it is used only here, never by the build or the tests.
# A missing program is reported as n/a, so the script also runs with only one side.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

rounds=3
seconds=10
threads_list="1 2"
configs="a b c d e"
decode_modes="greedy:1 beam5:1 greedy:32"
do_train=1
do_decode=1
build="$root/build"
raw=""
py=/usr/bin/python3

while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --threads) threads_list="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --decode-modes) decode_modes="$2"; shift 2 ;;
    --no-train) do_train=0; shift ;;
    --no-decode) do_decode=0; shift ;;
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --raw) raw="$2"; shift 2 ;;
    --python) py="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

ours_train="$build/bench/train_throughput"
ours_decode="$build/bench/decode_throughput"
torch_py="$here/torch_baseline.py"

if ! "$py" -c 'import torch' 2>/dev/null; then
  echo "compare.sh: PyTorch missing for $py: apt-get install -y python3-torch" >&2
  have_torch=0
else
  have_torch=1
fi
[[ -x "$ours_train" ]] || echo "compare.sh: $ours_train not built: seqgrad train results will be n/a" >&2
[[ -x "$ours_decode" ]] || echo "compare.sh: $ours_decode not built: seqgrad decode results will be n/a" >&2

rawfile="$(mktemp)"
logfile="$(mktemp)"
trap 'rm -f "$rawfile" "$logfile"' EXIT

# run THREADS LABEL CMD... : one measurement in its own process; keep the JSON lines that
# have an "impl" key, tagged with the thread count the environment really had.
run() {
  local n="$1" label="$2"; shift 2
  echo "compare.sh: [$label] threads=$n: $*" >&2
  local out rc=0
  out="$(env OMP_NUM_THREADS="$n" OPENBLAS_NUM_THREADS="$n" OMP_WAIT_POLICY=PASSIVE \
        "$@" 2>>"$logfile")" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "compare.sh: [$label] exited with $rc (stderr tail below)" >&2
    tail -n 5 "$logfile" >&2
  fi
  printf '%s\n' "$out" | "$py" -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if isinstance(d, dict) and "impl" in d:
        print(json.dumps(d, separators=(",", ":")))
' >>"$rawfile"
}

start_date="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"

if [[ $do_train -eq 1 ]]; then
  for c in $configs; do
    for n in $threads_list; do
      for ((r = 1; r <= rounds; r++)); do
        if [[ -x "$ours_train" ]]; then run "$n" "train $c round $r seqgrad" \
          "$ours_train" --config "$c" --threads "$n" --seconds "$seconds"; fi
        if [[ $have_torch -eq 1 ]]; then run "$n" "train $c round $r torch" \
          "$py" "$torch_py" --bench train --config "$c" --threads "$n" --seconds "$seconds"; fi
      done
    done
  done
fi

if [[ $do_decode -eq 1 ]]; then
  for mb in $decode_modes; do
    m="${mb%%:*}"; b="${mb##*:}"
    for n in $threads_list; do
      for ((r = 1; r <= rounds; r++)); do
        if [[ -x "$ours_decode" ]]; then run "$n" "decode $m b$b round $r seqgrad" \
          "$ours_decode" --mode "$m" --batch "$b" --threads "$n" --seconds "$seconds"; fi
        if [[ $have_torch -eq 1 ]]; then run "$n" "decode $m b$b round $r torch" \
          "$py" "$torch_py" --bench decode --mode "$m" --batch "$b" --threads "$n" --seconds "$seconds"; fi
      done
    done
  done
fi

if [[ -n "$raw" ]]; then cp "$rawfile" "$raw"; fi

# ------------------------------------------------------------------ machine info + tables
cpu_model="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)"
[[ -n "$cpu_model" ]] || cpu_model="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)"
cpu_flags="$(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ' || true)"
torch_version="$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo n/a)"
openblas_version="$(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null \
  || dpkg-query -W -f='${Version}' libopenblas0 2>/dev/null || echo n/a)"
blas_alt="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo n/a)"
git_rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo n/a)"

export CMP_RAW="$rawfile" CMP_CMD="bench/compare.sh --rounds $rounds --seconds $seconds --threads \"$threads_list\" --configs \"$configs\"" \
  CMP_DATE="$start_date" CMP_NPROC="$(nproc)" CMP_CPU="$cpu_model" CMP_FLAGS="$cpu_flags" \
  CMP_TORCH="$torch_version" CMP_OPENBLAS="$openblas_version" CMP_BLAS="$blas_alt" \
  CMP_ROUNDS="$rounds" CMP_SECONDS="$seconds" CMP_GIT="$git_rev" CMP_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"

"$py" - <<'PYEOF'
import json, os, statistics

rows = []
with open(os.environ["CMP_RAW"]) as f:
    for line in f:
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass

E = os.environ
print("## seqgrad vs PyTorch\n")
print(f"- command: `{E['CMP_CMD']}` (git {E['CMP_GIT']})")
print(f"- date: {E['CMP_DATE']}; load average at the end: {E['CMP_LOAD']}")
print(f"- machine: {E['CMP_NPROC']} cores, {E['CMP_CPU']} ({E['CMP_FLAGS'].strip() or 'flags n/a'})")
print(f"- PyTorch {E['CMP_TORCH']} (Debian python3-torch); OpenBLAS {E['CMP_OPENBLAS']} ({E['CMP_BLAS']})")
print(f"- each cell: median over {E['CMP_ROUNDS']} alternated runs (seqgrad, torch, seqgrad, torch, ...),"
      f" each its own process, >= {E['CMP_SECONDS']} s timed after warm-up;"
      " OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = threads, OMP_WAIT_POLICY=PASSIVE")
print()

def med(impl, key, **match):
    vals = [r[key] for r in rows
            if r.get("impl") == impl and all(r.get(k) == v for k, v in match.items())
            and isinstance(r.get(key), (int, float))]
    return statistics.median(vals) if vals else None

def fmt(x, nd=1):
    return "n/a" if x is None else f"{x:,.{nd}f}"

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

def verdict(r, target, higher=True):
    if r is None:
        return "n/a"
    ok = r >= target if higher else r <= target
    return ("yes" if ok else "**no**") + f" ({'>=' if higher else '<='} {target:g})"

TRAIN_TARGET = {("a", 1): 1.8, ("a", 2): 2.5, ("e", 1): 5.0, ("e", 2): 5.0}

train = sorted({(r["config"], r["threads"]) for r in rows if r.get("bench") == "train"})
if train:
    print("### Training step (forward + backward + clip_grad_norm 1.0 + Adam)\n")
    print("| config | threads | seqgrad ms/step | torch ms/step | seqgrad tok/s | torch tok/s "
          "| tok/s ratio | tok/s target met | seqgrad RSS MB | torch RSS MB | RSS ratio | RSS <= 0.5 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c, n in train:
        m = dict(bench="train", config=c, threads=n)
        o_ms, t_ms = med("seqgrad", "ms_per_step", **m), med("torch", "ms_per_step", **m)
        o_tk, t_tk = med("seqgrad", "tokens_per_s", **m), med("torch", "tokens_per_s", **m)
        o_rss, t_rss = med("seqgrad", "peak_rss_mb", **m), med("torch", "peak_rss_mb", **m)
        rt, rr = ratio(o_tk, t_tk), ratio(o_rss, t_rss)
        tgt = TRAIN_TARGET.get((c, n))
        print(f"| {c} | {n} | {fmt(o_ms, 2)} | {fmt(t_ms, 2)} | {fmt(o_tk, 0)} | {fmt(t_tk, 0)} "
              f"| {fmt(rt, 2)}x | {verdict(rt, tgt) if tgt else '-'} | {fmt(o_rss)} | {fmt(t_rss)} "
              f"| {fmt(rr, 2)} | {verdict(rr, 0.5, higher=False)} |")
    print()
    print("configs: a = Bahdanau E=H=A=256 batch 32 vocab 4000/6000; b = a with batch 64; "
          "c = E=H=A=512 batch 64; d = Luong general E=H=256 batch 32; "
          "e = tiny Bahdanau E=H=A=64 batch 16 vocab 50/50. "
          "tok/s = non-pad target tokens (EOS included) per second at the median step time.\n")

dec = sorted({(r["mode"], r["batch"], r["threads"]) for r in rows if r.get("bench") == "decode"},
             key=lambda k: (k[0] != "greedy", k[1], k[2]))
if dec:
    print("### Decoding (config (a)-sized Bahdanau model, max length 20)\n")
    print("| mode | batch | threads | seqgrad sent/s | torch sent/s | ratio | target met "
          "| seqgrad RSS MB | torch RSS MB | RSS ratio | RSS <= 0.5 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mode, b, n in dec:
        m = dict(bench="decode", mode=mode, batch=b, threads=n)
        o, t = med("seqgrad", "sentences_per_s", **m), med("torch", "sentences_per_s", **m)
        o_rss, t_rss = med("seqgrad", "peak_rss_mb", **m), med("torch", "peak_rss_mb", **m)
        r, rr = ratio(o, t), ratio(o_rss, t_rss)
        print(f"| {mode} | {b} | {n} | {fmt(o)} | {fmt(t)} | {fmt(r, 2)}x "
              f"| {verdict(r, 3.0) if mode == 'beam5' else '-'} | {fmt(o_rss)} | {fmt(t_rss)} "
              f"| {fmt(rr, 2)} | {verdict(rr, 0.5, higher=False)} |")
    print()
    print("beam5 = beam width 5, length penalty score/len^0.6 on finished hypotheses; "
          "sent/s = source sentences decoded per second.\n")

if not rows:
    print("(no measurement produced a JSON line: see the messages above)")
PYEOF
