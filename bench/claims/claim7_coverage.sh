#!/usr/bin/env bash
# Claim 7, coverage inside the model: does an attention that remembers where it has looked stop
# the repetitions ("the the"), and at what cost? Per corpus and seed, at an equal training budget
# (the same epochs, no early stopping, the best checkpoint by validation loss):
#   none        no coverage
#   penalty     the same model decoded with GNMT's coverage penalty (eval --coverage 1.0)
#   subtract    model.coverage "subtract" (score -= beta * c_s, beta = 1)
#   learned     model.coverage "learned" (Tu et al. 2016)
#   learned+loss  the same with See et al.'s coverage loss, train.coverage_loss = 1
#   learned+loss0.1  the same with train.coverage_loss = 0.1
# each decoded at beam 5 (the configs' decoding) on the test split, with `seqgrad eval
# --attention-stats --summary-csv`: repeated words ("the the") and repeated 3-grams per 1,000
# output words (the references' rates beside them), the share of source tokens never attended
# above 0.3 ("dropped words"; subword tokens for BPE, <eos> excluded), BLEU and chrF2 (sacreBLEU's
# cased 13a definitions; against the raw references for the BPE run, whose output is cased
# text, and against the normalised, lower-cased references for the word-level eng-fra run), and
# the mean output length against the references'.
#   corpora: deu-eng (configs/deu-eng.json, BPE, German -> English) and eng-fra
#            (configs/eng-fra.json, word level, French -> English), both with E = H = A = 128
#   full:  seeds 1 2 3; 6 epochs each (FULL_EPOCHS_ENG_FRA, FULL_EPOCHS_DEU_ENG), 15 trainings per
#          corpus: one epoch took 20 s (eng-fra) and 27 s (deu-eng, BPE learning included) on a
#          loaded machine, so ~60 min in all on one core, less on a quiet one
#   quick: seed 1; hidden 32, 40 steps, 60 test sentences (proves the script runs: ~1 min)
source "$(dirname "$0")/common.sh" 7_coverage "$@"
FULL_EPOCHS_ENG_FRA=${FULL_EPOCHS_ENG_FRA:-6}
FULL_EPOCHS_DEU_ENG=${FULL_EPOCHS_DEU_ENG:-6}
if [[ $MODE == full ]]; then
    LIMIT=0 SIZE=(--set model.hidden_size=128 --set model.embedding_size=128
        --set model.attention_size=128 --set train.patience=0)
else
    LIMIT=60 SIZE=(--set model.hidden_size=32 --set model.embedding_size=32
        --set model.attention_size=32 --set train.patience=0 --set train.max_steps=40)
fi
TABLE="$OUT/coverage-$MODE.csv"
echo "corpus,variant,seed,bleu,chrf,immediate_repeats_per_1000,repeated_trigrams_per_1000,reference_immediate_repeats_per_1000,reference_repeated_trigrams_per_1000,dropped_source_share,mean_length,reference_mean_length" > "$TABLE"

# train CORPUS VARIANT SEED EPOCHS: prints the run directory, training it first if needed
train() {
    local corpus="$1" variant="$2" seed="$3" epochs="$4" run
    run="$OUT/$MODE-$corpus-$variant-s$seed"
    local model=()
    case $variant in
        none) ;;
        subtract) model=(--set model.coverage=subtract) ;;
        learned) model=(--set model.coverage=learned) ;;
        learned+loss) model=(--set model.coverage=learned --set train.coverage_loss=1) ;;
        learned+loss0.1) model=(--set model.coverage=learned --set train.coverage_loss=0.1) ;;
    esac
    if [[ ! -f $run/best.safetensors ]]; then
        $SEQGRAD train "configs/$corpus.json" --quiet "${SIZE[@]}" "${model[@]}" \
            --set train.epochs="$epochs" --set train.seed="$seed" \
            --set output.run_dir="$run" --set output.explore=0 > "$run.log" 2>&1 ||
            { cat "$run.log" >&2; return 1; }
    fi
    echo "$run"
}

# evaluate CORPUS VARIANT SEED RUN [EVAL ARGS...]: one row of $TABLE from the eval's CSV row
evaluate() {
    local corpus="$1" variant="$2" seed="$3" run="$4"
    shift 4
    local csv="$OUT/eval-$MODE-$corpus-$variant-s$seed.csv"
    rm -f "$csv"
    $SEQGRAD eval "$run" --beam 5 --limit $LIMIT --attention-stats "$@" --summary-csv "$csv" \
        --out "$OUT/hyps-$MODE-$corpus-$variant-s$seed.txt" > "$OUT/eval-$MODE-$corpus-$variant-s$seed.txt"
    awk -F, -v pre="$corpus,$variant,$seed" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print pre "," $c["bleu"] "," $c["chrf"] "," $c["immediate_repeats_per_1000"] "," \
              $c["repeated_trigrams_per_1000"] "," $c["reference_immediate_repeats_per_1000"] "," \
              $c["reference_repeated_trigrams_per_1000"] "," $c["dropped_source_share"] "," \
              $c["mean_length"] "," $c["reference_mean_length"] }' "$csv" >> "$TABLE"
}

for corpus in deu-eng eng-fra; do
    if [[ $corpus == eng-fra ]]; then epochs=$FULL_EPOCHS_ENG_FRA; else epochs=$FULL_EPOCHS_DEU_ENG; fi
    for seed in $SEEDS; do
        for variant in none subtract learned learned+loss learned+loss0.1; do
            start=$(date +%s)
            run=$(train "$corpus" "$variant" "$seed" "$epochs")
            echo "$corpus $variant seed $seed: trained in $(($(date +%s) - start)) s ($run)"
            evaluate "$corpus" "$variant" "$seed" "$run"
            # the beam-search penalty alone: the model without coverage, re-ranked by GNMT's
            # coverage penalty
            if [[ $variant == none ]]; then evaluate "$corpus" penalty "$seed" "$run" --coverage 1.0; fi
        done
    done
done
echo "--- per corpus and variant: median, min and max over the seeds"
summarise "$TABLE" "$OUT/table-$MODE.csv" --by corpus,variant \
    --values immediate_repeats_per_1000,repeated_trigrams_per_1000,dropped_source_share,bleu,chrf,mean_length
echo "--- the references of the same test sentences (per corpus)"
awk -F, 'NR > 1 && !seen[$1]++ { printf "%s: immediate repeats %s, repeated 3-grams %s per 1,000 words; mean length %s words\n", $1, $8, $9, $12 }' "$TABLE"
