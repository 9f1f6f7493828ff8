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
rm -f "$OUT"/*.csv
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
# Paired by seed: BLEU(alpha) - BLEU(alpha = 0) of the same model, median [min, max] over seeds,
# and the best alpha of each seed: seed-to-seed spread is larger than the effect of alpha.
python3 - "$OUT" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
for split in ["valid", "test"]:
    runs = {}
    for r in csv.DictReader(open(f"{out}/alpha.{split}.csv")):
        runs.setdefault((r["checkpoint"], r["length_penalty"]), {})[float(r["alpha"])] = float(r["bleu"])
    for penalty in ["average", "gnmt"]:
        deltas, best = {}, []
        for (_, p), bleu in runs.items():
            if p != penalty:
                continue
            for a, b in bleu.items():
                deltas.setdefault(a, []).append(b - bleu[0.0])
            best.append(max(bleu, key=bleu.get))
        print(f"--- {split} {penalty}: BLEU(alpha) - BLEU(0), paired by seed; best alpha per seed: {best}")
        print("  " + "  ".join(f"{a:g}: {statistics.median(v):+.2f} [{min(v):+.2f}, {max(v):+.2f}]"
                               for a, v in sorted(deltas.items())))
PY
