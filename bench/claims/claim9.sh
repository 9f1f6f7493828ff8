#!/usr/bin/env bash
# Claim 9: "Beam memory grows with k^2 because of the candidates; k = 10 at length 100 with
# H = 512 risks running out of memory."
# Peak resident memory of one beam search (bench/beam_memory.cpp, a fresh process per point):
# a random Bahdanau model with E = H = A = 512 and 10,000-word vocabularies, source length =
# output length L, every hypothesis forced to run all L steps. Against k for several L (one
# sentence), and for a batch of 64 sentences (what `seqgrad translate` / `eval` decode at once).
# Beside each measurement, the sizes of the tensors that grow with k (from models/decoding/beam_search.cpp
# and models/model/seq2seq.cpp; see docs/claims.md).
#   full: k = 1 .. 50, L = 25 .. 200, ~5 min      quick: H = 128, 4 points, ~10 s
source "$(dirname "$0")/common.sh" 9 "$@"
BENCH=./build/bench/beam_memory
[[ -x $BENCH ]] || cmake --build build --target beam_memory > "$OUT/build.log" ||
    { cat "$OUT/build.log" >&2; exit 1; }
if [[ $MODE == full ]]; then
    H=512 BEAMS="1 2 5 10 20 50" LENGTHS="25 50 100 200" BATCH_BEAMS="1 5 10" BATCH=64
else
    H=128 BEAMS="1 10" LENGTHS="10 20" BATCH_BEAMS="1 5" BATCH=4
fi
: > "$OUT/memory.jsonl"
for L in $LENGTHS; do
    for k in $BEAMS; do $BENCH --beam $k --length $L --hidden $H >> "$OUT/memory.jsonl"; done
done
for k in $BATCH_BEAMS; do
    $BENCH --beam $k --length 100 --hidden $H --batch $BATCH >> "$OUT/memory.jsonl"
    $BENCH --beam $k --length 100 --hidden $H --batch $BATCH --keep-attention 0 >> "$OUT/memory.jsonl"
done
python3 - "$OUT" <<'PY'
import csv, json, sys
out = sys.argv[1]
rows = []
MB = 2.0 ** 20
for line in open(f"{out}/memory.jsonl"):
    j = json.loads(line)
    B, K, L, S, H, V = j["batch"], j["beam"], j["length"], j["source_length"], j["hidden"], j["vocab"]
    N = B * K  # rows of the decoder batch
    # Grows with k (x N rows): the encoder outputs [N,S,H], projected keys [N,S,A] and mask
    # [N,S] copied into every beam's row of the state; Bahdanau's tanh(keys + query) [N,S,A];
    # log-probs [N,V]; each hypothesis' attention rows [L,S] (keep_attention). With k^2: the
    # candidates of step 3, k*k of them per sentence, 24 bytes each.
    state = N * S * (2 * H + 1) * 4 / MB
    scores = N * S * H * 4 / MB
    logits = N * V * 4 / MB
    history = N * L * S * 4 / MB if j["keep_attention"] else 0.0
    candidates = B * K * K * 24 / MB
    rows.append({"batch": B, "beam": K, "length": L, "keep_attention": int(j["keep_attention"]),
                 "peak_rss_mb": f"{j['peak_rss_mb']:.1f}", "decode_mb": f"{j['decode_mb']:.1f}",
                 "state_mb": f"{state:.2f}", "scores_mb": f"{scores:.2f}",
                 "log_probs_mb": f"{logits:.2f}", "attention_history_mb": f"{history:.2f}",
                 "candidates_mb": f"{candidates:.4f}", "seconds": f"{j['seconds']:.2f}"})
with open(f"{out}/memory.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader(); w.writerows(rows)
cols = list(rows[0])
print("  ".join(f"{c:>12}" for c in cols))
for r in rows:
    print("  ".join(f"{r[c]:>12}" for c in cols))
PY
python3 - "$OUT" <<'PY'
import csv, sys
out = sys.argv[1]
rows = [r for r in csv.DictReader(open(f"{out}/memory.csv")) if r["batch"] == "1"]
with open(f"{out}/single.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader(); w.writerows(rows)
PY
figure peak "$OUT/single.csv" --x beam --y decode_mb --group length --logx \
    --title "memory beam search adds (peak RSS minus before decoding), H = $H, one sentence" \
    --xlabel "beam width k" --ylabel "MB"
