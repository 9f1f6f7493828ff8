#!/usr/bin/env bash
# bench/nonregression.sh — does a change slow training down? bench/train_throughput of an older
# build, of this build (fast kernels) and, if given, of a reference-kernel build, run
# alternately (bench/alternate.py) on configs (a) and (e) at 1 and 2 threads.
#
# usage: bench/nonregression.sh --base DIR [--build DIR] [--reference DIR] [--rounds R]
#                               [--seconds S] [--configs "a e"] [--threads "1 2"]
#   --base DIR       build directory of the commit to compare against (e.g. a `git worktree`
#                    of it, built with the same flags)
#   --build DIR      this build (default <repo>/build)
#   --reference DIR  a build configured with -DSEQGRAD_KERNELS=reference (optional)
# Prints a markdown table per cell: median ms/step over the rounds, min..max, ratio to the base.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
base="" build="$here/../build" reference="" rounds=5 seconds=6 configs="a e" threads="1 2"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --base) base="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --reference) reference="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "nonregression.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n "$base" ]] || { echo "nonregression.sh: --base DIR is required" >&2; exit 2; }
arms="$(mktemp)"
trap 'rm -f "$arms"' EXIT
{
  echo "base ($(git -C "$base/.." rev-parse --short HEAD 2>/dev/null || echo "$base")) | $base | |"
  echo "this build, fast kernels ($(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo n/a)) | $build | |"
  [[ -z "$reference" ]] || echo "this build, reference kernels | $reference | |"
} > "$arms"
python3 "$here/alternate.py" --arms "$arms" --configs "$configs" --threads "$threads" \
  --rounds "$rounds" --seconds "$seconds" --title "Non-regression: train_throughput, alternated"
