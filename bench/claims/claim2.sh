#!/usr/bin/env bash
# Claim 2: "Without length normalisation, beam search prefers short outputs; alpha between 0.6
# and 1.0 is best."
# Beam search (k = 5) on eng-fra valid and test: BLEU and mean output length against alpha for
# both penalty forms, lp = len^alpha (average) and lp = ((5 + len) / 6)^alpha (gnmt);
# alpha = 0 is no normalisation (lp = 1). Greedy decoding and the references' mean length
# are printed beside them.
#   full: 3 models, alpha = 0, 0.2, ..., 2.0 (~8 min)    quick: 1 small model, 3 alphas, 100 sentences
source "$(dirname "$0")/common.sh" 2 "$@"
if [[ $MODE == full ]]; then
    ALPHAS="0 0.2 0.4 0.6 0.8 1.0 1.2 1.4 1.6 1.8 2.0" LIMIT=0 K=5
else
    ALPHAS="0 0.6 2.0" LIMIT=100 K=5
fi
rm -f "$OUT"/alpha.*.csv
for seed in $SEEDS; do
    model=$(eng_fra_model "$seed")
    for split in valid test; do
        for penalty in average gnmt; do
            for alpha in $ALPHAS; do
                $SEQGRAD eval "$model" --test "datasets/eng-fra/$split.tsv" --beam $K \
                    --length-penalty $penalty --alpha "$alpha" --limit $LIMIT \
                    --summary-csv "$OUT/alpha.$split.csv" --out "$OUT/hyps.txt" > /dev/null
            done
        done
        $SEQGRAD eval "$model" --test "datasets/eng-fra/$split.tsv" --beam 1 --limit $LIMIT \
            --summary-csv "$OUT/greedy.$split.csv" --out "$OUT/hyps.txt" > /dev/null
    done
done
for split in valid test; do
    echo "--- $split: beam $K"
    summarise "$OUT/alpha.$split.csv" "$OUT/table.$split.csv" --by length_penalty,alpha \
        --values bleu,mean_length,reference_mean_length
    echo "--- $split: greedy"
    summarise "$OUT/greedy.$split.csv" "$OUT/greedy.table.$split.csv" --by beam \
        --values bleu,mean_length
    figure "bleu-$split" "$OUT/table.$split.csv" --x alpha --y bleu --group length_penalty \
        --title "eng-fra $split BLEU against alpha (beam $K, median of seeds)" --ylabel BLEU
    figure "length-$split" "$OUT/table.$split.csv" --x alpha --y mean_length,reference_mean_length \
        --group length_penalty --title "eng-fra $split mean output length (words) against alpha" \
        --ylabel "words per sentence"
done
