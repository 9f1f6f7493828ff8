#!/usr/bin/env bash
# Claim 7: "A coverage penalty prevents repeated words ('the the the')."
# eng-fra test, greedy and beam 5, without and with GNMT's coverage penalty (beta 0.2, 1.0) and
# n-gram blocking (no repeated 2-gram / 3-gram): repeated words ("the the": a word equal to the
# one before) and repeated 3-grams per 1,000 output words, BLEU, mean length. On the trained
# models and on under-trained ones (1 epoch), which repeat themselves more.
#   full: 3 trained + 3 one-epoch models (~8 min)    quick: 1 small model, 100 sentences
source "$(dirname "$0")/common.sh" 7 "$@"
VARIANTS="plain coverage:0.2 coverage:1.0 ngram:2 ngram:3"
if [[ $MODE == full ]]; then LIMIT=0; else LIMIT=100; fi
rm -f "$OUT/repeats.csv"
for seed in $SEEDS; do
    models="trained:$(eng_fra_model "$seed")"
    if [[ $MODE == full ]]; then
        weak="runs/claims/models/eng-fra-1epoch-s$seed"
        [[ -f $weak/best.safetensors ]] ||
            $SEQGRAD train configs/eng-fra.json --set train.epochs=1 --set train.seed="$seed" \
                --set output.run_dir="$weak" --set output.explore=0 --quiet > "$weak.log" 2>&1
        models="$models 1-epoch:$weak"
    fi
    for entry in $models; do
        stage=${entry%%:*} model=${entry#*:}
        for k in 1 5; do
            for variant in $VARIANTS; do
                case $variant in
                    plain) extra=() ;;
                    coverage:*) extra=(--coverage "${variant#*:}") ;;
                    ngram:*) extra=(--no-repeat-ngram "${variant#*:}") ;;
                esac
                csv="$OUT/repeats.$stage.csv"
                $SEQGRAD eval "$model" --beam $k "${extra[@]}" --limit $LIMIT \
                    --summary-csv "$csv" --out "$OUT/hyps.txt" > "$OUT/eval.txt"
            done
        done
    done
done
for csv in "$OUT"/repeats.*.csv; do
    stage=${csv#"$OUT"/repeats.}
    stage=${stage%.csv}
    echo "--- $stage models (reference rates: $(grep -o 'references [0-9.]*, [0-9.]*' "$OUT/eval.txt"))"
    summarise "$csv" "$OUT/table.$stage.csv" --by beam,coverage,no_repeat_ngram \
        --values immediate_repeats_per_1000,repeated_trigrams_per_1000,bleu,mean_length
done
