#!/usr/bin/env bash
# Claim 10: "log(softmax(x)) is unstable where log_softmax(x) is not."
# bench/log_softmax_stability.cpp, built in float and in double (…_f64): the loss -log p_t and
# its gradient at x = [d, 0] by log(softmax(x)), log(exp(x)/sum(exp(x))) and log_softmax(x),
# against the exact values, and the first d where each fails. No training: quick = full (~2 s).
source "$(dirname "$0")/common.sh" 10 "$@"
for program in log_softmax_stability log_softmax_stability_f64; do
    ./build/bench/$program --csv "$OUT/$program.csv"
    echo
done
