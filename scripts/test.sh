#!/usr/bin/env bash
# The whole test suite: with emscripten, the WebAssembly build and its tests under node; a release
# build (-O2, the fast kernels) running every test through ctest (the live page in Chromium too),
# then pytest on its Python modules and the notebooks, and the modules installed (cmake --install
# --component python) and imported from outside the checkout (when pybind11 is there); a release build
# with only the reference kernels (-DSEQGRAD_KERNELS=reference, unity) running the unit tests and the
# end-to-end training tests (the date task learns, resume is bit-exact); the
# installed package built against by examples/ in float and double (scripts/install_example.sh);
# every libFuzzer harness for SEQGRAD_FUZZ_SECONDS (default 30) each, two at a time
# (scripts/fuzz.sh, clang); then a sanitizer build (address + undefined, unity) running the unit tests.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# Each phase says how long it took (CI's budget is kept by these lines).
phase_start=$SECONDS
phase() { echo "== test.sh: $1 took $((SECONDS - phase_start)) s (total $SECONDS s)"; phase_start=$SECONDS; }
# MPI (optional): with Open MPI or MPICH installed the release build includes the communicator
# and ctest runs the tests that train under mpiexec; without it they are skipped, and said so.
mpi=OFF
if command -v mpicxx >/dev/null && command -v mpiexec >/dev/null; then
  mpi=ON
else
  echo "note: no MPI here (Debian: apt-get install openmpi-bin libopenmpi-dev): MPI tests skipped"
fi
# WebAssembly (optional, docs/live.md): with emscripten installed, build-wasm is built and its
# tests run under node (gradient checks, the SIMD product), and the release build's live/page test
# opens a live explore file in Chromium; without it that test is skipped, and said so.
if command -v emcmake >/dev/null; then
  export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}" EMSDK_PYTHON="${EMSDK_PYTHON:-/usr/bin/python3}"
  emcmake cmake -S . -B build-wasm -DSEQGRAD_WASM=ON >/dev/null
  cmake --build build-wasm -j"$jobs"
  ctest --test-dir build-wasm --output-on-failure -j"$jobs"
  phase "the WebAssembly build and its tests"
else
  echo "note: no emscripten here (Debian: apt-get install emscripten): the live page test skipped"
fi
# Python (optional): with pybind11, numpy and pytest for Debian's python3 the release build
# includes the modules seqgrad and seqgrad.f64, and pytest runs tests/python (the bindings, then
# the notebooks of notebooks/ executed headless when nbclient, ipykernel and matplotlib are
# there); without them they are skipped, and said so.
python=OFF
if /usr/bin/python3 -c "import os, sys, sysconfig, pybind11, numpy, pytest
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" 2>/dev/null; then
  python=ON
else
  echo "note: no pybind11, Python headers, numpy or pytest for /usr/bin/python3 (Debian: apt-get install pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pytest): Python tests skipped"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_MPI=$mpi -DSEQGRAD_PYTHON=$python >/dev/null
cmake --build build -j"$jobs"
phase "the release build"
ctest --test-dir build --output-on-failure -j"$jobs"
phase "the release tests"
if [ "$python" = ON ]; then
  SEQGRAD_BUILD="$PWD/build" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python
  # The documented install (docs/python.md): the component `python` into a folder, imported from
  # outside the checkout.
  site=$(mktemp -d "${TMPDIR:-/tmp}/seqgrad-site.XXXXXX")
  cmake --install build --component python --prefix "$site" >/dev/null
  (cd "$site" && PYTHONPATH="$site" /usr/bin/python3 -c "import seqgrad, seqgrad.f64
assert seqgrad.__file__.startswith('$site'), seqgrad.__file__
print('installed seqgrad imports:', seqgrad.real, seqgrad.f64.real)")
  rm -rf "$site"
  phase "the Python tests and notebooks"
fi
# The reference-kernel and sanitizer trees build their libraries as unity builds (SEQGRAD_UNITY):
# the release tree, compiled file by file, is the one that catches a missing #include.
cmake -S . -B build-reference -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_KERNELS=reference \
  -DSEQGRAD_BUILD_BENCH=OFF -DSEQGRAD_UNITY=ON >/dev/null
cmake --build build-reference -j"$jobs" --target unit_tests train_test_train_end_to_end
ctest --test-dir build-reference --output-on-failure -j"$jobs" -L unit
ctest --test-dir build-reference --output-on-failure -j"$jobs" -R '^train/test_train_end_to_end/'
phase "the reference-kernel build and its tests"
bash scripts/install_example.sh build
phase "the installed package"
bash scripts/fuzz.sh "${SEQGRAD_FUZZ_SECONDS:-30}"
phase "the fuzzers"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSEQGRAD_SANITIZE=ON -DSEQGRAD_BUILD_BENCH=OFF \
  -DSEQGRAD_UNITY=ON >/dev/null
cmake --build build-asan -j"$jobs" --target unit_tests
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit
phase "the sanitizer build and its unit tests"
