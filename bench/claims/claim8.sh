#!/usr/bin/env bash
# Claim 8: "Dot-product scores grow with the dimension d, so dividing by sqrt(d) matters."
# Luong dot attention (score = q.k, or q.k / sqrt(d) with model.luong_scaled) on the date task,
# d = hidden size = embedding size (so that the states' components keep their size as d grows;
# with a fixed embedding size they shrink with d at initialisation). bench/attention_stats on
# the test split: the variance of the scores over a row's source positions, the normalised
# attention entropy H / ln S (1 = uniform) and exact match, at initialisation (a fresh model,
# no training) and after training (3 epochs of configs/dates.json).
#   full: at init d = 64 ... 1024, seeds 1 2 3; trained d = 64, 128 with seeds 1 2 3 and d = 256
#         with seed 1 only (larger trained models are left out to keep the run short)
#         (~15 min on an idle machine)
#   quick: at init d = 64, 256; trained d = 32 for 300 steps; 200 test dates   (~30 s)
source "$(dirname "$0")/common.sh" 8 "$@"
STATS=./build/bench/attention_stats
if [[ $MODE == full ]]; then
    INIT_DIMS="64 128 256 512 1024" TRAIN_DIMS="64 128 256" LIMIT=500 STEPS=0
else
    INIT_DIMS="64 256" TRAIN_DIMS="32" LIMIT=200 STEPS=300
fi
model_args() {  # model_args D SCALED
    echo --set model.attention=luong_dot --set model.hidden_size="$1" \
        --set model.embedding_size="$1" --set model.luong_scaled="$2"
}
rm -f "$OUT/stats-$MODE.csv"
for seed in $SEEDS; do
    for d in $INIT_DIMS; do
        for scaled in false true; do
            $STATS --config configs/dates.json $(model_args "$d" $scaled) --set train.seed="$seed" \
                --limit $LIMIT --label when=init,d=$d,scaled=$scaled,seed=$seed \
                --csv "$OUT/stats-$MODE.csv" > /dev/null
        done
    done
    for d in $TRAIN_DIMS; do
        [[ $d == 256 && $seed != 1 ]] && continue  # d = 256 with seed 1 only, to keep the run short
        for scaled in false true; do
            run="$OUT/$MODE-d$d-scaled-$scaled-s$seed"
            if [[ ! -f $run/best.safetensors ]]; then
                $SEQGRAD train configs/dates.json --quiet $(model_args "$d" $scaled) \
                    --set train.max_steps=$STEPS --set train.seed="$seed" \
                    --set output.run_dir="$run" --set output.explore=0 > "$run.log" 2>&1 ||
                    { cat "$run.log" >&2; exit 1; }
            fi
            $STATS "$run" --limit $LIMIT --label when=trained,d=$d,scaled=$scaled,seed=$seed \
                --csv "$OUT/stats-$MODE.csv" > /dev/null
        done
    done
done
echo "--- Luong dot on the date task: median [min, max] over seeds (n = seeds)"
summarise "$OUT/stats-$MODE.csv" "$OUT/table-$MODE.csv" --by when,scaled,d \
    --values score_var,entropy_norm,exact_match
python3 - "$OUT/table-$MODE.csv" "$OUT" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for when in ("init", "trained"):
    with open(f"{sys.argv[2]}/{when}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["d", "series", "score_var", "entropy_norm", "exact_match"])
        for r in rows:
            if r["when"] == when:
                w.writerow([r["d"], "q.k/sqrt(d)" if r["scaled"] == "true" else "q.k",
                            r["score_var"], r["entropy_norm"], r["exact_match"]])
PY
figure variance "$OUT/init.csv" --x d --y score_var --group series --logx --logy \
    --title "Luong dot at initialisation: score variance over source positions (median of seeds)" \
    --xlabel "d (hidden = embedding size)" --ylabel "variance of the scores"
figure entropy "$OUT/trained.csv" --x d --y entropy_norm --group series --logx \
    --title "Luong dot after training on dates: attention entropy H / ln S (median of seeds)" \
    --xlabel "d (hidden = embedding size)" --ylabel "H / ln S"
