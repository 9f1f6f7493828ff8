#!/usr/bin/env bash
# Claim 1: "Beam search with k = 5 raises BLEU by 8-12 points over greedy decoding and costs
# about 3x the time; k = 10 adds a little more at 1.5x the time again."
# BLEU and sentences/s of eng-fra test decoding for k = 1, 2, 3, 5, 10, 20, per model seed;
# timings repeated (rounds alternate the k order) and reduced to medians. The config's length
# penalty (gnmt, alpha 0.6); then the same k without any (--length-penalty none), once per seed,
# for the known effect of large beams without length normalisation.
#   full: 3 models (10 epochs each, trained if missing), 3 timing rounds  (~12 min)
#   quick: 1 small 1-epoch model, k = 1, 5, 20 on 100 sentences, 1 round  (~30 s)
source "$(dirname "$0")/common.sh" 1 "$@"
if [[ $MODE == full ]]; then BEAMS="1 2 3 5 10 20" ROUNDS="1 2 3" LIMIT=0; else BEAMS="1 5 20" ROUNDS="1" LIMIT=100; fi
rm -f "$OUT/beam.csv"
for seed in $SEEDS; do
    model=$(eng_fra_model "$seed")
    for round in $ROUNDS; do
        order=$BEAMS
        ((round % 2 == 0)) && order=$(echo $BEAMS | tr ' ' '\n' | tac | tr '\n' ' ')
        for k in $order; do
            $SEQGRAD eval "$model" --beam "$k" --limit $LIMIT --summary-csv "$OUT/beam.csv" \
                --out "$OUT/hyps.s$seed.k$k.txt" > "$OUT/eval.s$seed.k$k.txt"
        done
    done
    for k in $BEAMS; do
        $SEQGRAD eval "$model" --beam "$k" --length-penalty none --limit $LIMIT \
            --summary-csv "$OUT/beam.csv" --out "$OUT/hyps.s$seed.k$k.none.txt" > /dev/null
    done
done
echo "--- the config's length penalty (gnmt, alpha 0.6): BLEU and speed"
summarise "$OUT/beam.csv" "$OUT/table.csv" --by beam --values bleu,sentences_per_s,mean_length \
    --where length_penalty=gnmt
echo "--- BLEU and mean length by length penalty (none: raw log-probability)"
summarise "$OUT/beam.csv" "$OUT/bleu.csv" --by length_penalty,beam --values bleu,mean_length
# The time each k costs against greedy decoding, from the median speeds.
python3 - "$OUT/table.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
greedy = float(rows[0]["sentences_per_s"])
print("time per sentence relative to greedy:",
      ", ".join(f"k={r['beam']}: {greedy / float(r['sentences_per_s']):.2f}x" for r in rows))
PY
figure bleu "$OUT/bleu.csv" --x beam --y bleu,bleu_min,bleu_max --group length_penalty --logx \
    --title "eng-fra test BLEU against beam width (median, min, max over seeds)" \
    --xlabel "beam width k" --ylabel "BLEU"
figure speed "$OUT/table.csv" --x beam --y sentences_per_s --logx --logy \
    --title "eng-fra test decoding speed (1 thread, median)" --xlabel "beam width k" \
    --ylabel "sentences / s"
