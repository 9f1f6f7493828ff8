#!/usr/bin/env bash
# bench/compare.sh — seqgrad vs PyTorch on the same model, data and step.
#
# One invocation measures and prints, as markdown ready to paste into bench/RESULTS.md:
#   1. training: ours and bench/torch_baseline.py alternately (ours, torch, ours, torch, ...
#      for --rounds rounds; each cell = median over the rounds) for every config of --configs
#      and every thread count of --threads: ms/step, target tokens/s, useful GFLOP/s, peak RSS
#      and the ratios ours/torch;
#   2. decoding (config (a)-sized model, and the config (t) Transformer), alternated the same
#      way: sentences/s, greedy and beam 5, batch 1 and batched (the torch baselines do beam 5
#      at batch 1 only; the Transformer's re-runs its decoder on the whole prefix at each step,
#      as PyTorch's tutorial does, where seqgrad attends over cached keys and values);
#   3. roofline of --roofline-config (default c) at 1 thread: build/bench/sgemm_roofline
#      --config c runs cblas_sgemm once on every GEMM shape of that config's training step
#      (forward, dX and dW of each product); the roofline is the FLOP-weighted throughput of
#      that mix (each shape weighted by the useful FLOPs it carries per step) and
#      efficiency = our useful GFLOP/s at 1 thread / that roofline (the best single-shape
#      figure is printed too). It runs right after that config's 1-thread training rounds;
#      if those are not part of this run, ours is measured --rounds times for it first;
#   4. cost growth (ours only, 1 thread): ms/step of --growth-config with a fixed target
#      length L (--growth-lens) and batch B (--growth-batches); the source length stays
#      uniform in 5..12. Tables: ms/step, µs per target token (B x L), the step-time ratios
#      between successive L and B (at most L2/L1, B2/B1 when the cost grows linearly), and
#      peak RSS / live-buffer growth / system allocations across the timed steps.
# Every measurement is its own process, so peak RSS is per measurement.
#
# Usage: bench/compare.sh [options]
#   --rounds R            alternations (A B A B ...) per measurement, median shown (default 3)
#   --seconds S           timed seconds per training/decoding measurement, after warm-up (10)
#   --threads "1 2"       thread counts for training and decoding (default "1 2")
#   --configs "a b c d e" training configs (default all five; also t = the Transformer and
#                         g = the tutorial's GRU model, bench/synthetic.h, against
#                         bench/torch_tutorials.py)
#   --cell gru|lstm       training: the recurrent cell of both sides' models (default gru;
#                         lstm: model.cell "lstm" against nn.LSTM / nn.LSTMCell)
#   --decode-modes LIST   mode:batch pairs (default "greedy:1 beam5:1 greedy:32 beam5:32")
#   --decode-configs LIST decoding models: a (Bahdanau) and/or t (Transformer) (default "a")
#   --roofline-config X   config of the roofline section (default c)
#   --roofline-seconds S  seconds per sgemm shape (default 0.5; about 20 shapes)
#   --growth-config X     config of the cost-growth section (default a)
#   --growth-lens LIST    fixed target lengths, EOS included (default "10 20 40 80")
#   --growth-batches LIST batch sizes (default "16 32 64 128")
#   --growth-seconds S    timed seconds (>= 5 steps) per growth cell, after 11 warm-up steps (3)
#   --growth-rounds R     runs per growth cell, median shown (default 1)
#   --no-train | --no-decode | --no-roofline | --no-growth   skip a section
#   --build DIR           where build/bench/* live (default <repo>/build)
#   --raw FILE            also write every JSON line measured (all sections) to FILE
#   --python PY           Python with torch (default /usr/bin/python3, Debian's python3-torch)
#   -h, --help            this text
#
# Both implementations run with OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N
# OMP_WAIT_POLICY=PASSIVE (idle threads block instead of spinning: on 2 cores spinning makes
# PyTorch slower with 2 threads than with 1). PyTorch is used only here, never by the build
# or the tests. A missing program is reported as n/a, so the script also runs with one side.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

cmdline="$0"
for a in "$@"; do  # as typed, quoting only what needs it
  if [[ $a =~ ^[A-Za-z0-9_./:=,+-]+$ ]]; then cmdline+=" $a"
  elif [[ $a != *[\"\$\`\\]* ]]; then cmdline+=" \"$a\""
  else cmdline+=" $(printf '%q' "$a")"; fi
done
start_load="$(cut -d' ' -f1-3 /proc/loadavg)"

rounds=3
seconds=10
threads_list="1 2"
configs="a b c d e"
cell=gru
decode_modes="greedy:1 beam5:1 greedy:32 beam5:32"
decode_configs="a"
roofline_config=c
roofline_seconds=0.5
growth_config=a
growth_lens="10 20 40 80"
growth_batches="16 32 64 128"
growth_seconds=3
growth_rounds=1
do_train=1
do_decode=1
do_roofline=1
do_growth=1
build="$root/build"
raw=""
py=/usr/bin/python3

need() { [[ $# -ge 2 ]] || { echo "compare.sh: $1 needs a value (see --help)" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) need "$@"; rounds="$2"; shift 2 ;;
    --seconds) need "$@"; seconds="$2"; shift 2 ;;
    --threads) need "$@"; threads_list="$2"; shift 2 ;;
    --configs) need "$@"; configs="$2"; shift 2 ;;
    --cell) need "$@"; cell="$2"; shift 2 ;;
    --decode-modes) need "$@"; decode_modes="$2"; shift 2 ;;
    --decode-configs) need "$@"; decode_configs="$2"; shift 2 ;;
    --roofline-config) need "$@"; roofline_config="$2"; shift 2 ;;
    --roofline-seconds) need "$@"; roofline_seconds="$2"; shift 2 ;;
    --growth-config) need "$@"; growth_config="$2"; shift 2 ;;
    --growth-lens) need "$@"; growth_lens="$2"; shift 2 ;;
    --growth-batches) need "$@"; growth_batches="$2"; shift 2 ;;
    --growth-seconds) need "$@"; growth_seconds="$2"; shift 2 ;;
    --growth-rounds) need "$@"; growth_rounds="$2"; shift 2 ;;
    --no-train) do_train=0; shift ;;
    --no-decode) do_decode=0; shift ;;
    --no-roofline) do_roofline=0; shift ;;
    --no-growth) do_growth=0; shift ;;
    --build) need "$@"; build="$(cd "$2" && pwd)"; shift 2 ;;
    --raw) need "$@"; raw="$2"; shift 2 ;;
    --python) need "$@"; py="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

ours_train="$build/bench/train_throughput"
ours_decode="$build/bench/decode_throughput"
ours_sgemm="$build/bench/sgemm_roofline"
torch_py="$here/torch_baseline.py"
torch_tutorials_py="$here/torch_tutorials.py"

if ! "$py" -c 'import torch' 2>/dev/null; then
  echo "compare.sh: PyTorch missing for $py: apt-get install -y python3-torch" >&2
  have_torch=0
else
  have_torch=1
fi
for p in "$ours_train" "$ours_decode" "$ours_sgemm"; do
  [[ -x "$p" ]] || echo "compare.sh: $p not built: its results will be n/a" >&2
done

rawfile="$(mktemp)"
logfile="$(mktemp)"
trap 'rm -f "$rawfile" "$logfile"' EXIT

# run SECTION THREADS LABEL CMD... : one measurement in its own process; keep the JSON lines
# that have an "impl" key, tagged with the report section they belong to.
run() {
  local section="$1" n="$2" label="$3"; shift 3
  echo "compare.sh: [$label] threads=$n: $*" >&2
  local out rc=0
  out="$(env OMP_NUM_THREADS="$n" OPENBLAS_NUM_THREADS="$n" OMP_WAIT_POLICY=PASSIVE \
        "$@" 2>>"$logfile")" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "compare.sh: [$label] exited with $rc (stderr tail below)" >&2
    tail -n 5 "$logfile" >&2
  fi
  # the 1-minute load average as the measurement ends, kept with its JSON line
  printf '%s\n' "$out" | CMP_SECTION="$section" CMP_LOAD1="$(cut -d' ' -f1 /proc/loadavg)" "$py" -c '
import json, os, sys
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if isinstance(d, dict) and "impl" in d:
        d["section"] = os.environ["CMP_SECTION"]
        d["load1"] = float(os.environ["CMP_LOAD1"])
        print(json.dumps(d, separators=(",", ":")))
' >>"$rawfile"
}

train_pair() {  # train_pair SECTION CONFIG THREADS ROUND [--ours-only]
  local section="$1" c="$2" n="$3" r="$4" ours_only="${5:-}"
  # the tutorial models (t, g) have their own cells; --cell is for configs a..e
  local cell_args=(--cell "$cell") torch_args=("$torch_py" --cell "$cell")
  if [[ $c == t || $c == g ]]; then cell_args=(); torch_args=("$torch_tutorials_py"); fi
  # g's steps are long (batch 128): 3 warm-up steps on both sides instead of 10
  if [[ $c == g ]]; then cell_args+=(--warmup-steps 3); torch_args+=(--warmup-steps 3); fi
  if [[ -x "$ours_train" ]]; then run "$section" "$n" "train $c round $r seqgrad" \
    "$ours_train" --config "$c" "${cell_args[@]}" --threads "$n" --seconds "$seconds"; fi
  if [[ $have_torch -eq 1 && -z "$ours_only" ]]; then run "$section" "$n" "train $c round $r torch" \
    "$py" "${torch_args[@]}" --bench train --config "$c" --threads "$n" --seconds "$seconds"; fi
}

roofline() {
  if [[ -x "$ours_sgemm" ]]; then run roofline 1 "sgemm roofline ($roofline_config)" \
    "$ours_sgemm" --config "$roofline_config" --threads 1 --seconds "$roofline_seconds"; fi
}

start_date="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
roofline_done=0

if [[ $do_train -eq 1 ]]; then
  for c in $configs; do
    for n in $threads_list; do
      for ((r = 1; r <= rounds; r++)); do train_pair train "$c" "$n" "$r"; done
      if [[ $do_roofline -eq 1 && $c == "$roofline_config" && $n == 1 && $roofline_done -eq 0 ]]; then
        roofline
        roofline_done=1
      fi
    done
  done
fi

if [[ $do_roofline -eq 1 && $roofline_done -eq 0 ]]; then
  # the roofline config at 1 thread was not trained above: measure ours for it here
  for ((r = 1; r <= rounds; r++)); do train_pair roofline "$roofline_config" 1 "$r" --ours-only; done
  roofline
fi

if [[ $do_decode -eq 1 ]]; then
  for dc in $decode_configs; do
    torch_decode="$torch_py"
    [[ $dc == t ]] && torch_decode="$torch_tutorials_py"
    for mb in $decode_modes; do
      m="${mb%%:*}"; b="${mb##*:}"
      for n in $threads_list; do
        for ((r = 1; r <= rounds; r++)); do
          if [[ -x "$ours_decode" ]]; then run decode "$n" "decode $dc $m b$b round $r seqgrad" \
            "$ours_decode" --config "$dc" --mode "$m" --batch "$b" --threads "$n" --seconds "$seconds"; fi
          # the torch baselines implement beam search for batch 1 only
          if [[ $have_torch -eq 1 && ($m != beam5 || $b == 1) ]]; then run decode "$n" "decode $dc $m b$b round $r torch" \
            "$py" "$torch_decode" --bench decode --config "$dc" --mode "$m" --batch "$b" --threads "$n" --seconds "$seconds"; fi
        done
      done
    done
  done
fi

if [[ $do_growth -eq 1 && -x "$ours_train" ]]; then
  for b in $growth_batches; do
    for l in $growth_lens; do
      for ((r = 1; r <= growth_rounds; r++)); do
        run growth 1 "growth $growth_config B=$b L=$l round $r" "$ours_train" --config "$growth_config" \
          --threads 1 --seconds "$growth_seconds" --batch "$b" --target-len "$l"
      done
    done
  done
fi

end_date="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
if [[ -n "$raw" ]]; then cp "$rawfile" "$raw"; fi

# ------------------------------------------------------------------ machine info + tables
cpu_model="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)"
cpu_fm="$(awk -F': *' '/^cpu family/ {f=$2} /^model[ \t]*:/ {m=$2} END {if (f != "") print "family " f " model " m}' /proc/cpuinfo)"
cpu_flags="$(grep -m1 -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ' || true)"
mem_gib="$(awk '/^MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)"
torch_version="$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo n/a)"
torch_deb="$(dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || echo n/a)"
openblas_version="$(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null \
  || dpkg-query -W -f='${Version}' libopenblas0 2>/dev/null || echo n/a)"
openblas_lib="$(ldd "$ours_train" 2>/dev/null | awk '/libopenblas/ {print $3; exit}' || true)"
openblas_config="$("$py" -c '
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1] or "libopenblas.so.0")
lib.openblas_get_config.restype = ctypes.c_char_p
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_config().decode(), "| core", lib.openblas_get_corename().decode())
' "$openblas_lib" 2>/dev/null || echo n/a)"
blas_alt="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo n/a)"
git_rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo n/a)"
# (outside a git checkout, or when head closes the pipe early, the pipeline fails: not an error)
git_dirty="$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | head -c1 || true)"
[[ -z "$git_dirty" ]] || git_rev+=" + uncommitted changes"

nproc_out="$(nproc)"
loadavg="$(cut -d' ' -f1-3 /proc/loadavg)"
export CMP_RAW="$rawfile" CMP_CMD="$cmdline" CMP_DATE="$start_date" CMP_END="$end_date" \
  CMP_NPROC="$nproc_out" CMP_CPU="$cpu_model" CMP_CPU_FM="$cpu_fm" CMP_FLAGS="$cpu_flags" \
  CMP_MEM="$mem_gib" CMP_TORCH="$torch_version" CMP_TORCH_DEB="$torch_deb" \
  CMP_OPENBLAS="$openblas_version" CMP_OPENBLAS_CONFIG="$openblas_config" CMP_BLAS="$blas_alt" \
  CMP_ROUNDS="$rounds" CMP_SECONDS="$seconds" CMP_GIT="$git_rev" CMP_CELL="$cell" \
  CMP_LOAD="$loadavg" CMP_LOAD_START="$start_load" CMP_ROOFLINE="$roofline_config" \
  CMP_GROWTH="$growth_config" CMP_GROWTH_SECONDS="$growth_seconds" CMP_GROWTH_ROUNDS="$growth_rounds" \
  CMP_GROWTH_LENS="$growth_lens" CMP_GROWTH_BATCHES="$growth_batches"

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
print(f"- date: {E['CMP_DATE']} to {E['CMP_END']}; load average (1/5/15 min) at the start "
      f"{E['CMP_LOAD_START']}, at the end {E['CMP_LOAD']}")
print(f"- machine: `nproc` = {E['CMP_NPROC']}, CPU model `{E['CMP_CPU']}` ({E['CMP_CPU_FM']}; "
      f"{E['CMP_FLAGS'].strip() or 'flags n/a'}), {E['CMP_MEM']} GiB")
print(f"- PyTorch {E['CMP_TORCH']} (Debian python3-torch {E['CMP_TORCH_DEB']}); "
      f"OpenBLAS {E['CMP_OPENBLAS']}: {E['CMP_OPENBLAS_CONFIG']}; libblas.so.3 -> {E['CMP_BLAS']}")
print(f"- training and decoding cells: median over {E['CMP_ROUNDS']} alternated runs (seqgrad, torch,"
      f" seqgrad, torch, ...), each its own process, >= {E['CMP_SECONDS']} s timed after warm-up;"
      " OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = threads, OMP_WAIT_POLICY=PASSIVE")
print(f"- training models' recurrent cell: {E['CMP_CELL']} (encoder and decoder, both sides)")
print()


def pick(section, impl=None, **match):
    return [r for r in rows if r.get("section") == section
            and (impl is None or r.get("impl") == impl)
            and all(r.get(k) == v for k, v in match.items())]


def med(section, impl, key, **match):
    vals = [r[key] for r in pick(section, impl, **match) if isinstance(r.get(key), (int, float))]
    return statistics.median(vals) if vals else None


def fmt(x, nd=1):
    return "n/a" if x is None else f"{x:,.{nd}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def times(r):
    return "n/a" if r is None else f"{r:,.2f}x"


def verdict(r, target, higher=True):
    if r is None:
        return "n/a"
    ok = r >= target if higher else r <= target
    return ("yes" if ok else "**no**") + f" ({'>=' if higher else '<='} {target:g})"


CONFIGS = ("a = Bahdanau E=H=A=256 batch 32 vocab 4000/6000; b = a with batch 64; "
           "c = E=H=A=512 batch 64; d = Luong general E=H=256 batch 32; "
           "e = tiny Bahdanau E=H=A=64 batch 16 vocab 50/50; "
           "t = Transformer (nn.Transformer(batch_first=True) in the form of PyTorch's translation "
           "tutorial: embeddings x sqrt(d) + sinusoidal positions, 3 + 3 layers, d_model 256, 8 "
           "heads, feed-forward 512, output projection, cross-entropy) batch 32 vocab 4000/6000; "
           "g = the GRU model of bentrevett/pytorch-seq2seq notebook 3 (bidirectional GRU encoder "
           "emb 256 hid 512, bridge tanh(fc), decoder GRU 512, additive attention 512, deep "
           "output [h; c; emb]) batch 128 vocab 7853/5893, lengths uniform in 5..19 (mean 12). "
           "No dropout in any config. PyTorch runs t and g as bench/torch_tutorials.py (its header "
           "lists how its forms differ from the tutorials' code)")

# --------------------------------------------------------------------------- training
TRAIN_TARGET = {("a", 1): 1.8, ("a", 2): 2.5, ("e", 1): 5.0, ("e", 2): 5.0, ("t", 1): 1.5}
train = sorted({(r["config"], r["threads"]) for r in pick("train") if r.get("bench") == "train"})
if train:
    print("### Training step (forward + backward + clip_grad_norm 1.0 + Adam)\n")
    print("| config | threads | seqgrad ms/step | torch ms/step | seqgrad tok/s | torch tok/s "
          "| tok/s ratio | tok/s target met | seqgrad GFLOP/s | torch GFLOP/s "
          "| seqgrad RSS MB | torch RSS MB | RSS ratio | RSS <= 0.5 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c, n in train:
        m = dict(bench="train", config=c, threads=n)
        o_ms, t_ms = med("train", "seqgrad", "ms_per_step", **m), med("train", "torch", "ms_per_step", **m)
        o_tk, t_tk = med("train", "seqgrad", "tokens_per_s", **m), med("train", "torch", "tokens_per_s", **m)
        o_gf, t_gf = med("train", "seqgrad", "gflops", **m), med("train", "torch", "gflops", **m)
        o_rss, t_rss = med("train", "seqgrad", "peak_rss_mb", **m), med("train", "torch", "peak_rss_mb", **m)
        rt, rr = ratio(o_tk, t_tk), ratio(o_rss, t_rss)
        tgt = TRAIN_TARGET.get((c, n))
        print(f"| {c} | {n} | {fmt(o_ms, 2)} | {fmt(t_ms, 2)} | {fmt(o_tk, 0)} | {fmt(t_tk, 0)} "
              f"| {times(rt)} | {verdict(rt, tgt) if tgt else '-'} | {fmt(o_gf, 2)} | {fmt(t_gf, 2)} "
              f"| {fmt(o_rss)} | {fmt(t_rss)} | {fmt(rr, 2)} | {verdict(rr, 0.5, higher=False)} |")
    print()
    # CPU time per step (the process's, all threads): on a loaded machine the time spent
    # waiting for a core is in the wall time but mostly not in the CPU time
    for c, n in train:
        m = dict(bench="train", config=c, threads=n)
        o_cpu = med("train", "seqgrad", "cpu_ms_per_step", **m)
        t_cpu = med("train", "torch", "cpu_ms_per_step", **m)
        if o_cpu is not None and t_cpu is not None:
            print(f"CPU ms/step of ({c}) at {n} thread(s), median: seqgrad {fmt(o_cpu, 1)}, torch "
                  f"{fmt(t_cpu, 1)}: torch / seqgrad {times(ratio(t_cpu, o_cpu))}  ")
    loads = [r["load1"] for r in pick("train") if isinstance(r.get("load1"), (int, float))]
    if loads:
        print(f"1-minute load average as each training run ended: {min(loads):.1f}..{max(loads):.1f}"
              f" (median {statistics.median(loads):.1f})  ")
    for c in sorted({c for c, _ in train}):
        o_p = [r.get("parameters") for r in pick("train", "seqgrad", bench="train", config=c)]
        t_p = [r.get("parameters") for r in pick("train", "torch", bench="train", config=c)]
        if any(o_p) or any(t_p):
            print(f"parameters of ({c}): seqgrad {fmt(next((p for p in o_p if p), None), 0)}, "
                  f"torch {fmt(next((p for p in t_p if p), None), 0)}  ")
    print(f"configs: {CONFIGS}. Source and target lengths uniform in 5..12 (EOS included) but g's. "
          "tok/s = non-pad target tokens (EOS included) per second at the median step time; "
          "GFLOP/s = useful GFLOP/s, the FLOPs of the non-pad matrix work (forward products x3 "
          "for forward + backward, counted the same way for both: bench/synthetic.h "
          "training_flops, torch_baseline.py useful_flops) per second at the median step time.\n")

# --------------------------------------------------------------------------- decoding
DECODE_TITLE = {
    "a": "config (a)-sized Bahdanau model, max length 20",
    "t": "config (t) Transformer, max length 20; seqgrad decodes incrementally (each step "
         "attends over cached keys and values), PyTorch re-runs the decoder on the whole prefix "
         "at each step, as its tutorial does",
}
for r in rows:  # torch_baseline.py's decode lines (config a) carry no "config" key
    if r.get("section") == "decode":
        r.setdefault("config", "a")
for dcfg in sorted({r["config"] for r in pick("decode") if r.get("bench") == "decode"}):
    dec = sorted({(r["mode"], r["batch"], r["threads"]) for r in pick("decode", config=dcfg)
                  if r.get("bench") == "decode"},
                 key=lambda k: (k[0] != "greedy", k[1], k[2]))
    print(f"### Decoding ({DECODE_TITLE.get(dcfg, dcfg)})\n")
    print("| mode | batch | threads | seqgrad sent/s | torch sent/s | ratio | target met "
          "| seqgrad RSS MB | torch RSS MB | RSS ratio | RSS <= 0.5 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mode, b, n in dec:
        m = dict(bench="decode", config=dcfg, mode=mode, batch=b, threads=n)
        o, t = med("decode", "seqgrad", "sentences_per_s", **m), med("decode", "torch", "sentences_per_s", **m)
        o_rss, t_rss = med("decode", "seqgrad", "peak_rss_mb", **m), med("decode", "torch", "peak_rss_mb", **m)
        r, rr = ratio(o, t), ratio(o_rss, t_rss)
        print(f"| {mode} | {b} | {n} | {fmt(o)} | {fmt(t)} | {times(r)} "
              f"| {verdict(r, 3.0) if mode == 'beam5' else '-'} | {fmt(o_rss)} | {fmt(t_rss)} "
              f"| {fmt(rr, 2)} | {verdict(rr, 0.5, higher=False)} |")
    print()
    loads = [r["load1"] for r in pick("decode", config=dcfg) if isinstance(r.get("load1"), (int, float))]
    if loads:
        print(f"1-minute load average as each decoding run ended: {min(loads):.1f}..{max(loads):.1f}"
              f" (median {statistics.median(loads):.1f})  ")
    print("beam5 = beam width 5, length penalty score/len^0.6 on finished hypotheses; "
          "sent/s = source sentences decoded per second. The torch baselines decode beam 5 "
          "at batch 1 only (n/a at larger batches).\n")

# --------------------------------------------------------------------------- roofline
rc = E["CMP_ROOFLINE"]
summ = [r for r in pick("roofline", "openblas") if r.get("bench") == "sgemm_roofline"]
shapes = [r for r in pick("roofline", "openblas") if r.get("bench") == "sgemm"]
ours_rows = pick("train", "seqgrad", bench="train", config=rc, threads=1) or \
            pick("roofline", "seqgrad", bench="train", config=rc, threads=1)
if summ or ours_rows:
    s = summ[-1] if summ else {}
    ours_gf = statistics.median([r["gflops"] for r in ours_rows]) if ours_rows else None
    ours_ms = statistics.median([r["ms_per_step"] for r in ours_rows]) if ours_rows else None
    w, best, sq = s.get("weighted_gflops"), s.get("best_gflops"), s.get("square1024_gflops")
    eff = ratio(ours_gf, w)
    print(f"### Roofline of config ({rc}), 1 thread\n")
    print(f"`sgemm_roofline --config {rc} --threads 1`: cblas_sgemm alone on every GEMM shape of "
          f"({rc})'s training step, forward x Wᵀ and its two backward products, measured once "
          "right after the training rounds of this config at 1 thread. share = the shape's part "
          "of the step's useful GEMM FLOPs.\n")
    if shapes:
        print("| product | op | M | N | K | sgemm GFLOP/s | share of useful GEMM FLOPs |")
        print("|---|---|---|---|---|---|---|")
        for r in shapes:
            name = r["shape"].split(") ", 1)[-1].split(" [", 1)[0]
            print(f"| {name} | {r.get('op', '')} | {r.get('M', '')} | {r.get('N', '')} | "
                  f"{r.get('K', '')} | {fmt(r['gflops'])} | {fmt(100 * r.get('share_of_gemm_flops', 0))}% |")
        print()
    print("| figure | value |")
    print("|---|---|")
    print(f"| seqgrad ({rc}) 1 thread: ms/step, median of {len(ours_rows)} run(s) | {fmt(ours_ms, 2)} |")
    print(f"| seqgrad ({rc}) 1 thread: useful GFLOP/s | {fmt(ours_gf, 2)} |")
    print(f"| useful GFLOP per step (GEMM part / all) | {fmt(s.get('useful_gemm_gflop_per_step'), 3)}"
          f" / {fmt(s.get('useful_gflop_per_step'), 3)} |")
    print(f"| sgemm roofline = FLOP-weighted GFLOP/s of ({rc})'s GEMM mix | {fmt(w, 2)} |")
    print(f"| ms sgemm alone needs for the step's useful GEMM work | {fmt(s.get('sgemm_ms_per_step'), 1)} |")
    met = "" if eff is None else (" (target >= 75%: " + ("met" if eff >= 0.75 else "**not met**") + ")")
    cpu_rows = [r["cpu_ms_per_step"] for r in ours_rows if isinstance(r.get("cpu_ms_per_step"), (int, float))]
    if cpu_rows and s.get("useful_gflop_per_step") and w:
        cpu_gf = s["useful_gflop_per_step"] / (statistics.median(cpu_rows) / 1e3)
        print(f"| the same by CPU time (useful GFLOP per CPU second of the step: "
              f"{fmt(cpu_gf, 2)}) / roofline | {fmt(100 * cpu_gf / w)}% |")
    print(f"| **efficiency = useful GFLOP/s / roofline** | **{fmt(None if eff is None else 100 * eff)}%**{met} |")
    print(f"| for reference: best single shape of the mix, GFLOP/s | {fmt(best, 2)} "
          f"(efficiency against it {fmt(None if ratio(ours_gf, best) is None else 100 * ratio(ours_gf, best))}%) |")
    print(f"| for reference: square 1024 sgemm, GFLOP/s | {fmt(sq, 2)} |")
    print()
    print("The roofline is sum(useful FLOPs) / sum(useful FLOPs of a shape / sgemm GFLOP/s of that "
          "shape) over the mix: the throughput of a step that spent exactly cblas_sgemm's own time "
          "on its useful GEMM work and nothing else. Per-step products are timed at the full batch "
          "B, the all-steps encoder products at B x padded source length, the output projection "
          "at the real target tokens of a batch. Attention scores/context (no GEMM, "
          f"{fmt(s.get('non_gemm_gflop_per_step'), 3)} GFLOP/step) count in our useful GFLOP/s "
          "but not in the mix." + (" The Transformer's products (each once per layer) are timed "
          "at the real tokens, source or target, as seqgrad trains on packed sentences (PyTorch's "
          "run over every padded position); its per-head q·k and a·v products count as the "
          "non-GEMM part." if rc == "t" else "")
          + "\n")

# --------------------------------------------------------------------------- cost growth
g = [r for r in pick("growth", "seqgrad") if r.get("bench") == "train"]
if g:
    gc = E["CMP_GROWTH"]
    lens = [int(x) for x in E["CMP_GROWTH_LENS"].split()]
    batches = [int(x) for x in E["CMP_GROWTH_BATCHES"].split()]

    def cell(b, l, key, agg=statistics.median):
        vals = [r[key] for r in g if r.get("batch") == b and r.get("target_len") == l
                and isinstance(r.get(key), (int, float))]
        return agg(vals) if vals else None

    print(f"### Cost growth of our training step: config ({gc}), 1 thread\n")
    print(f"Target length fixed at L (EOS included) for every sentence, batch B; source length "
          f"still uniform in 5..12, so the encoder's cost does not grow with L. Each cell: "
          f"train_throughput --config {gc} --threads 1 --batch B --target-len L --seconds "
          f"{E['CMP_GROWTH_SECONDS']}, median ms/step after train_throughput's warm-up (11 steps) "
          f"(median of {E['CMP_GROWTH_ROUNDS']} run(s)).\n")
    head = "| B \\ L | " + " | ".join(str(l) for l in lens)
    ls = list(zip(lens, lens[1:]))
    print("**ms/step** (ratio columns: ms(L2)/ms(L1) and L2/L1; linear cost gives at most L2/L1)\n")
    print(head + "".join(f" | ms {b}/{a} (L x{b / a:g})" for a, b in ls) + " |")
    print("|---" * (1 + len(lens) + len(ls)) + "|")
    for b in batches:
        ms = [cell(b, l, "ms_per_step") for l in lens]
        rs = [ratio(ms[i + 1], ms[i]) for i in range(len(ls))]
        print(f"| {b} | " + " | ".join(fmt(x, 2) for x in ms)
              + "".join(f" | {fmt(x, 2)}" for x in rs) + " |")
    print()
    bs = list(zip(batches, batches[1:]))
    if bs:
        print("**ms(B2)/ms(B1)** between successive batch sizes at each L (linear cost gives at "
              "most B2/B1)\n")
        print("| B2/B1 \\ L | " + " | ".join(str(l) for l in lens) + " |")
        print("|---" * (1 + len(lens)) + "|")
        for a, b in bs:
            print(f"| {b}/{a} (x{b / a:g}) | " + " | ".join(
                fmt(ratio(cell(b, l, "ms_per_step"), cell(a, l, "ms_per_step")), 2) for l in lens) + " |")
        print()
    print("**µs per target token-step** = ms/step / (B x L) x 1000 (flat or falling = linear in B and L)\n")
    print(head + " |")
    print("|---" * (1 + len(lens)) + "|")
    for b in batches:
        us = [None if cell(b, l, "ms_per_step") is None else 1000 * cell(b, l, "ms_per_step") / (b * l)
              for l in lens]
        print(f"| {b} | " + " | ".join(fmt(x, 2) for x in us) + " |")
    print()
    print("**memory**: peak RSS MB / live-buffer growth across the timed steps / system "
          "allocations during the timed steps (max over runs)\n")
    print(head + " |")
    print("|---" * (1 + len(lens)) + "|")
    worst_live, worst_alloc = 0, 0
    for b in batches:
        cells = []
        for l in lens:
            rss = cell(b, l, "peak_rss_mb", max)
            live = cell(b, l, "live_buffers_growth", max)
            alloc = cell(b, l, "system_allocations_during_timing", max)
            worst_live = max(worst_live, live or 0)
            worst_alloc = max(worst_alloc, alloc or 0)
            cells.append(f"{fmt(rss, 0)} / {'n/a' if live is None else f'{live:+d}'} / "
                         f"{'n/a' if alloc is None else alloc}")
        print(f"| {b} | " + " | ".join(cells) + " |")
    print()
    print(f"Largest live-buffer growth across the timed steps: {worst_live:+d}; largest number of "
          f"system allocations during them: {worst_alloc}.\n")

if not rows:
    print("(no measurement produced a JSON line: see the messages above)")
PYEOF
