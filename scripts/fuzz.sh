#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (-fsanitize=fuzzer,address,undefined;
# the library as a unity build, SEQGRAD_UNITY)
# in build-fuzz/ and runs each for SECONDS (default 30), two at a time. Each starts from its seed
# corpus (tests/fuzz/corpus/NAME) plus the regression inputs, and grows a working corpus in
# build-fuzz/corpus/NAME (kept between runs, never written into the repository). Exits non-zero
# if a harness crashes; the crashing input is build-fuzz/crashes/NAME-crash-*. A crash becomes a
# regression test: fix it, then copy the input to tests/fuzz/regressions/NAME/ (ctest replays it).
#   bash scripts/fuzz.sh                   every harness, 30 s each (what CI runs)
#   bash scripts/fuzz.sh 3600 safetensors  one harness for an hour (a long run)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
all=$(sed -n 's/^seqgrad_fuzzer(\([a-z_0-9]*\))$/\1/p' tests/fuzz/CMakeLists.txt)
names=${*:-$all}
clang=${SEQGRAD_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
  -DSEQGRAD_FUZZ=ON -DSEQGRAD_BUILD_TESTS=OFF -DSEQGRAD_BUILD_BENCH=OFF -DSEQGRAD_UNITY=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers
mkdir -p build-fuzz/crashes
run() {
  local name=$1
  mkdir -p "build-fuzz/corpus/$name"
  local seeds=(tests/fuzz/corpus/"$name")
  [ -d "tests/fuzz/regressions/$name" ] && seeds+=(tests/fuzz/regressions/"$name")
  if OPENBLAS_NUM_THREADS=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "build-fuzz/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$name-" \
      "build-fuzz/corpus/$name" "${seeds[@]}" >"build-fuzz/$name.log" 2>&1; then
    echo "fuzz $name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$name.log" | grep -o '[0-9]*$') executions in ${seconds}s, no crash"
  else
    echo "fuzz $name: CRASH (build-fuzz/$name.log, input in build-fuzz/crashes/)" >&2
    tail -40 "build-fuzz/$name.log" >&2
    return 1
  fi
}
status=0
set -- $names
while [ $# -gt 0 ]; do  # two at a time: CI has 2 cores
  run "$1" & first=$!
  second=""
  if [ $# -gt 1 ]; then run "$2" & second=$!; fi
  wait $first || status=1
  [ -n "$second" ] && { wait $second || status=1; }
  shift $(( $# > 1 ? 2 : 1 ))
done
exit $status
