#!/usr/bin/env bash
# Claim 5: "The gradient reaching the first word of a 50-word input is close to zero for an LSTM,
# and attention shortens that path to one step."
# `seqgrad gradflow` (apps/studies/gradflow_longrange.cpp) on the copy-memory task at T = 30 (inputs of
# exactly 50 steps), RNN, GRU and LSTM at equal parameter budgets, without and with Bahdanau
# attention, fresh and after training; then the Seq2Seq copy task with 50-token sources, fresh.
#   full: 3 seeds, 2000 training steps (~2 CPU-minutes)
#   quick: 1 seed, 50 training steps, shorter inputs (~10 s)
source "$(dirname "$0")/common.sh" 5 "$@"
if [[ $MODE == full ]]; then
    MEMORY="--lengths 30 --seeds 3 --hidden 40 --train-steps 2000"
    COPY="--lengths 10,25,50,75,100 --seeds 3"
else
    MEMORY="--lengths 10 --seeds 1 --hidden 16 --train-steps 50"
    COPY="--lengths 10,20 --seeds 1"
fi
$SEQGRAD gradflow --task copy_memory --cells rnn,gru,lstm --attention none,bahdanau $MEMORY \
    --out "$OUT/copy-memory"
$SEQGRAD gradflow --cells rnn,gru,lstm --attention none,bahdanau $COPY --out "$OUT/copy-cells"
