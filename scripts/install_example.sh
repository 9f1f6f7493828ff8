#!/usr/bin/env bash
# Installs seqgrad from a build folder, moves the installed tree elsewhere (the package must be
# relocatable), then builds and runs examples/ against it with find_package(seqgrad), once with
# real = float (seqgrad::seqgrad) and once with real = double (seqgrad::seqgrad_f64).
#   bash scripts/install_example.sh [BUILD_DIR]        (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/seqgrad-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/staged" >/dev/null
mv "$work/staged" "$work/moved"
# The exported targets name no path of this machine: everything is relative to the prefix, and
# OpenBLAS, fmt and nlohmann_json are found again by the client.
if grep -n -e "$PWD" -e "$work" -e "libopenblas" "$work"/moved/lib*/cmake/seqgrad/*.cmake; then
  echo "install_example: the installed package records absolute paths (above)" >&2
  exit 1
fi
for real in float double; do
  cmake -S examples -B "$work/example-$real" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/moved" -DSEQGRAD_EXAMPLE_REAL=$real >/dev/null
  cmake --build "$work/example-$real" -j"$(nproc)" >/dev/null
  echo "examples/reverse_digits (real = $real):"
  OPENBLAS_NUM_THREADS=1 "$work/example-$real/reverse_digits"
done
