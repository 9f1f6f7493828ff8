#!/usr/bin/env bash
# bench/ladder.sh — the performance ladder of docs/performance.md: training speed with the
# optimisations switched on one at a time, from the reference build to everything on.
#
# Every rung is a switch in one documented place: SEQGRAD_DISABLE (autograd/kernels/switches.h:
# the layers' fused ops and the kernels), train_throughput --ladder-off (the loss and decoder
# forms of bench/ladder_model.h), the kernel build (-DSEQGRAD_KERNELS=reference|fast) or
# train_throughput's threads / --parallel.
# All rungs of a cell run alternately, round after round (bench/alternate.py), so a busy
# machine slows them alike.
#
# usage: bench/ladder.sh [--build DIR] [--reference DIR] [--rounds R] [--seconds S]
#                        [--configs "a e" | --configs t]
#   --configs t      the Transformer's ladder (its own rungs: the fused attention, the fused
#                    layer norm, the fused loss over real tokens and packed sentences,
#                    bench/ladder_transformer.h, then the kernels); t runs alone, not
#                    beside the Seq2Seq configs
#   --build DIR      a fast-kernel build with the bench programs (default <repo>/build)
#   --reference DIR  a build configured with -DSEQGRAD_KERNELS=reference
#                    (default <repo>/build-ref; build it with
#                    cmake -S . -B build-ref -DSEQGRAD_KERNELS=reference &&
#                    cmake --build build-ref --target train_throughput)
#   --list           print the rungs (label | build | environment | arguments) and exit
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/../build" reference="$here/../build-ref" rounds=3 seconds=4 configs="a e" list=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --reference) reference="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "ladder.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
arms="$(mktemp)"
trap 'rm -f "$arms"' EXIT
# The rungs, in order: each switches one more optimisation on (removes it from its list).
# Rungs 0-7 undo the model-level ones: the layers' fused ops through SEQGRAD_DISABLE, the loss and
# decoder forms through --ladder-off (bench/ladder_model.h).
fast="shared_steps,packed,small_m"
off() {  # SEQGRAD_DISABLE=<the names given, comma-joined> (nothing when none)
  local list; list="$(IFS=,; echo "$*" | sed 's/,,*/,/g; s/^,//; s/,$//')"
  [[ -n "$list" ]] && echo "SEQGRAD_DISABLE=$list" || true
}
ladder_off() {  # --ladder-off <the rungs given, comma-joined>
  local list; list="$(IFS=,; echo "$*")"
  echo "--ladder-off $list"
}
cat > "$arms" <<ARMS
0 reference build, every optimisation off | $reference | $(off fused_gru fused_attention buffer_pool) | $(ladder_off fused_loss real_tokens one_projection cached_keys sort_by_length) threads=1
1 + fused GRU cell | $reference | $(off fused_attention buffer_pool) | $(ladder_off fused_loss real_tokens one_projection cached_keys sort_by_length) threads=1
2 + fused cross-entropy | $reference | $(off fused_attention buffer_pool) | $(ladder_off real_tokens one_projection cached_keys sort_by_length) threads=1
3 + fused attention ops | $reference | $(off buffer_pool) | $(ladder_off real_tokens one_projection cached_keys sort_by_length) threads=1
4 + loss over real tokens only | $reference | $(off buffer_pool) | $(ladder_off one_projection cached_keys sort_by_length) threads=1
5 + one output projection after the recurrence | $reference | $(off buffer_pool) | $(ladder_off cached_keys sort_by_length) threads=1
6 + cached attention keys | $reference | $(off buffer_pool) | $(ladder_off sort_by_length) threads=1
7 + sorting by length (finished rows dropped) | $reference | $(off buffer_pool) | threads=1
8 + fast build: SIMD row kernels, blocked Adam | $build | $(off $fast buffer_pool) | threads=1
9 + one weight-gradient product over all steps | $build | $(off packed small_m buffer_pool) | threads=1
10 + packed weights for thin products | $build | $(off small_m buffer_pool) | threads=1
11 + small-M kernel | $build | $(off buffer_pool) | threads=1
12 + buffer pool (everything on, 1 thread) | $build | | threads=1
13 2 threads: BLAS threads (--parallel blas) | $build | | threads=2 --parallel blas
14 + data-parallel shards (--parallel data) | $build | | threads=2 --parallel data
ARMS
if [[ " $configs " == *" t "* ]]; then
  [[ $configs == t ]] || { echo "ladder.sh: config t has rungs of its own: run it alone" >&2; exit 2; }
  tfused="fused_attention,fused_layer_norm,fused_loss"
  cat > "$arms" <<ARMS
0 reference build, every optimisation off | $reference | $(off buffer_pool) | --ladder-off $tfused threads=1
1 + fused scaled dot-product attention | $reference | $(off buffer_pool) | --ladder-off fused_layer_norm,fused_loss threads=1
2 + fused layer norm | $reference | $(off buffer_pool) | --ladder-off fused_loss threads=1
3 + fused loss over the real target tokens only | $reference | $(off buffer_pool) | --ladder-off packed_sentences threads=1
4 + packed sentences (no padding in any product) | $reference | $(off buffer_pool) | threads=1
5 + fast build (SIMD row kernels, blocked Adam) | $build | $(off buffer_pool) | threads=1
6 + buffer pool (everything on, 1 thread) | $build | | threads=1
7 2 threads: BLAS threads (--parallel blas) | $build | | threads=2 --parallel blas
8 + data-parallel shards (--parallel data) | $build | | threads=2 --parallel data
ARMS
fi
if [[ $list -eq 1 ]]; then cat "$arms"; exit 0; fi
python3 "$here/alternate.py" --arms "$arms" --configs "$configs" --threads "1 2" \
  --rounds "$rounds" --seconds "$seconds" --title "Performance ladder: train_throughput, alternated"
