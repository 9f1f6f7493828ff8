#!/usr/bin/env bash
# Claim 3: "Without a padding mask, attention spreads weight onto PAD positions and BLEU drops
# sharply (by up to 40%) when inputs grow from 20 to 100 tokens."
# The task: several dates in a row (bench/concat_dates.cpp), char level, sources of 20..~130
# characters, trained with batches that mix lengths (train.bucket_chunk=0), with the mask on and
# off (model.attention_mask). Then bench/attention_stats on the test set in batches of 64
# consecutive pairs (lengths mixed as in training): weight on PAD, normalised attention entropy,
# exact match and BLEU per source-length bucket.
#   full: 10000 training pairs, 5 epochs, seeds 1 2 3, 1000 test pairs  (6 runs of ~6 min; two
#         at a time)
#   quick: 400 pairs, 1 epoch, a small model, seed 1, 100 test pairs     (~20 s)
source "$(dirname "$0")/common.sh" 3 "$@"
STATS=./build/bench/attention_stats
if [[ $MODE == full ]]; then
    N_TRAIN=10000 N_TEST=1000 SIZE=(--set train.epochs=5)
else
    N_TRAIN=400 N_TEST=100 SIZE=(--set train.epochs=1 --set model.hidden_size=32 --set model.attention_size=32)
fi
DATA="$OUT/data-$MODE"
./build/bench/concat_dates --out "$DATA" --train $N_TRAIN --valid 300 --test $N_TEST \
    --min-len 20 --max-len 100 --seed 3 > /dev/null
train() {  # train MASK SEED: the run directory, trained if it is not there
    local run="$OUT/$MODE-mask-$1-s$2"
    [[ -f $run/best.safetensors ]] && return 0
    $SEQGRAD train configs/dates.json --quiet "${SIZE[@]}" --set data.task=tsv \
        --set data.train="$PWD/$DATA/train.tsv" --set data.valid="$PWD/$DATA/valid.tsv" \
        --set data.test="$PWD/$DATA/test.tsv" --set data.max_source_len=140 \
        --set data.max_target_len=110 --set decode.max_length=110 \
        --set train.bucket_chunk=0 --set train.max_valid_decode=300 \
        --set model.attention_mask="$1" --set train.seed="$2" \
        --set output.run_dir="$run" --set output.explore=0 > "$run.log" 2>&1 ||
        { cat "$run.log" >&2; return 1; }
}
rm -f "$OUT/stats-$MODE.csv"
for seed in $SEEDS; do
    # mask on and off side by side (one thread each)
    train true "$seed" & on=$!
    train false "$seed" & off=$!
    wait $on && wait $off
    for mask in true false; do
        run="$OUT/$MODE-mask-$mask-s$seed"
        $STATS "$run" --buckets 20,40,60,80,100 --batch 64 --label mask=$mask,seed=$seed \
            --csv "$OUT/stats-$MODE.csv" > "$run.stats.txt"
    done
done
echo "--- by source length (characters), mask on (true) and off (false): median [min, max] over seeds"
summarise "$OUT/stats-$MODE.csv" "$OUT/table-$MODE.csv" --by mask,bucket,bucket_lo \
    --values pad_weight,entropy_norm,exact_match,bleu
figure exact "$OUT/table-$MODE.csv" --x bucket_lo --y exact_match --group mask \
    --title "Concatenated dates: exact match by source length, padding mask on / off (median of seeds)" \
    --xlabel "source length bucket (characters, lower edge)" --ylabel "exact match"
figure pad "$OUT/table-$MODE.csv" --x bucket_lo --y pad_weight --group mask \
    --title "Attention weight on PAD positions by source length (median of seeds)" \
    --xlabel "source length bucket (characters, lower edge)" --ylabel "weight on PAD per step"
