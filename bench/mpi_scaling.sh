#!/usr/bin/env bash
# Training steps over processes against threads, alternated in one run: for each config, each
# round runs 1 rank x 1 thread, 1 rank x 2 threads and 2 ranks x 1 thread (bench/mpi_train), and
# the medians over the rounds are printed with their ratios to 1 rank x 1 thread.
#   bash bench/mpi_scaling.sh [BUILD_DIR] [ROUNDS] [CONFIGS]     (defaults: build 5 "a c")
# BUILD_DIR must be a build with -DSEQGRAD_MPI=ON.
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
configs=${3:-a c}
bin="$build/bench/mpi_train"
[ -x "$bin" ] || { echo "no $bin: build with -DSEQGRAD_MPI=ON -DSEQGRAD_BUILD_BENCH=ON" >&2; exit 2; }
# Open MPI as root, and in containers without a working single-copy mechanism.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OPENBLAS_NUM_THREADS=1
echo "# $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for config in $configs; do
  steps=40; [ "$config" = e ] && steps=200
  : >"/tmp/mpi_scaling.$config.1x1"; : >"/tmp/mpi_scaling.$config.1x2"; : >"/tmp/mpi_scaling.$config.2x1"
  : >"/tmp/mpi_scaling.$config.sum"
  for ((r = 1; r <= rounds; r++)); do
    "$bin" --config "$config" --steps $steps --threads 1 | field ms_per_step >>"/tmp/mpi_scaling.$config.1x1"
    "$bin" --config "$config" --steps $steps --threads 2 | field ms_per_step >>"/tmp/mpi_scaling.$config.1x2"
    line=$(mpiexec -n 2 "$bin" --config "$config" --steps $steps --threads 1)
    echo "$line" | field ms_per_step >>"/tmp/mpi_scaling.$config.2x1"
    echo "$line" | field gradient_sum_ms >>"/tmp/mpi_scaling.$config.sum"
  done
  a=$(median <"/tmp/mpi_scaling.$config.1x1"); b=$(median <"/tmp/mpi_scaling.$config.1x2")
  c=$(median <"/tmp/mpi_scaling.$config.2x1"); s=$(median <"/tmp/mpi_scaling.$config.sum")
  awk -v cfg="$config" -v a="$a" -v b="$b" -v c="$c" -v s="$s" -v n="$rounds" 'BEGIN {
    printf "config (%s), medians of %d alternated rounds: 1 rank x 1 thread %.2f ms/step; 1 rank x 2 threads %.2f ms (%.2fx); 2 ranks x 1 thread %.2f ms (%.2fx), of which the gradient sum %.2f ms (after a barrier)\n",
      cfg, n, a, b, a / b, c, a / c, s }'
done
