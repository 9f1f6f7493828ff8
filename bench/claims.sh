#!/usr/bin/env bash
# Reruns every claim of docs/claims.md: bench/claims/claim1.sh, claim2.sh, ... in order.
#   bash bench/claims.sh [quick|full]
# quick (the default) proves every command runs, on tiny configs, in a few minutes in all;
# full produces the page's numbers and figures (tens of minutes; see each script's header).
# Stops at the first claim that fails, naming it. Run from the repository root after a build.
set -euo pipefail
mode="${1:-quick}"
case "$mode" in quick | full) ;; *) echo "usage: bash bench/claims.sh [quick|full]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
[[ -x ./build/seqgrad ]] || { echo "bench/claims.sh: ./build/seqgrad not found: build first (see README)" >&2; exit 1; }

scripts=$(ls bench/claims/claim*.sh | sort -V)
for script in $scripts; do
    echo "=== $script $mode"
    start=$SECONDS
    if ! bash "$script" "$mode"; then
        echo "bench/claims.sh: $script $mode FAILED" >&2
        exit 1
    fi
    echo "=== $script $mode: done in $((SECONDS - start)) s"
done
echo "bench/claims.sh $mode: all $(echo $scripts | wc -w) claims ran"
