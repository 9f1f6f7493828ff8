#!/usr/bin/env bash
# Claim 4: "Without gradient clipping an RNN's loss explodes to inf within a few epochs."
# The date task (GRU encoder-decoder with attention), trained with clip_norm 0 (off) and 1.0 at
# the default and at high learning rates, Adam and SGD with momentum. Every step's gradient norm
# (before clipping) is logged (train.log_every = 1); the table gives the largest one, whether the
# loss became inf/NaN (the trainer then stops with an error naming the step; the script records
# the message) and what the model learned (validation loss, test exact-match accuracy).
#   full: 3 seeds, 3 epochs of 20,000 dates per run, 5 optimiser settings x 2 (~10 min)
#   quick: 1 seed, 1 epoch of 2,000 dates, 2 settings x 2 (~20 s)
source "$(dirname "$0")/common.sh" 4 "$@"
if [[ $MODE == full ]]; then
    SETTINGS="adam:0.002 adam:0.01 adam:0.03 adam:0.1 sgd:1.0" DATA="--set train.epochs=3"
else
    SETTINGS="adam:0.002 adam:0.1" DATA="--set train.epochs=1 --set data.dates_train=2000"
fi
rm -rf "$OUT/runs"
mkdir -p "$OUT/runs"
for seed in $SEEDS; do
    for setting in $SETTINGS; do
        optimizer=${setting%%:*} lr=${setting##*:}
        for clip in 0 1.0; do
            dir="$OUT/runs/$optimizer-lr$lr-clip$clip-s$seed"
            # A run that diverges exits with status 1 and its error; that is a result here.
            $SEQGRAD train configs/dates.json $DATA --set train.optimizer=$optimizer \
                --set train.lr=$lr --set train.clip_norm=$clip --set train.seed=$seed \
                --set train.log_every=1 --set train.patience=0 --set output.explore=0 \
                --set output.run_dir="$dir" --quiet > "$dir.log" 2>&1 || true
        done
    done
done
python3 - "$OUT" <<'PY'
import csv, glob, json, os, re, statistics, sys
out = sys.argv[1]
runs, curves = [], []
for log in sorted(glob.glob(f"{out}/runs/*.log")):
    d = log[:-4]
    m = re.match(r"(\w+)-lr([\d.]+)-clip([\d.]+)-s(\d+)$", os.path.basename(d))
    opt, lr, clip, seed = m.groups()
    train, valid, test = [], [], None
    if os.path.exists(f"{d}/metrics.jsonl"):
        for line in open(f"{d}/metrics.jsonl"):
            j = json.loads(line)
            if j["type"] == "train": train.append(j)
            elif j["type"] == "valid": valid.append(j)
            elif j["type"] == "test": test = j
    text = open(log).read()
    err = re.search(r"error: (.*)", text)
    norms = [t["grad_norm"] for t in train]
    top = max(range(len(norms)), key=norms.__getitem__) if norms else None
    runs.append({
        "optimizer": opt, "lr": lr, "clip_norm": clip, "seed": seed,
        "steps": len(train),
        "max_grad_norm": f"{norms[top]:.4g}" if norms else "",
        "max_at_step": train[top]["step"] if norms else "",
        "median_grad_norm": f"{statistics.median(norms):.4g}" if norms else "",
        "steps_over_10": sum(n > 10 for n in norms),
        "last_train_loss": f"{statistics.mean(t['loss'] for t in train[-20:]):.4g}" if train else "",
        "best_valid_loss": f"{min(v['loss'] for v in valid):.4g}" if valid else "",
        "test_accuracy": f"{100 * test['accuracy']:.1f}" if test else "",
        "stopped": (err.group(1)[:160] if err else "no"),
    })
    if seed == "1":
        for t in train:
            curves.append({"run": f"{opt} lr {lr} clip {clip}", "step": t["step"],
                           "grad_norm": t["grad_norm"], "loss": t["loss"]})
with open(f"{out}/runs.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(runs[0]), lineterminator="\n")
    w.writeheader(); w.writerows(runs)
with open(f"{out}/curves.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["run", "step", "grad_norm", "loss"], lineterminator="\n")
    w.writeheader(); w.writerows(curves)
cols = ["optimizer", "lr", "clip_norm", "seed", "steps", "max_grad_norm", "max_at_step",
        "median_grad_norm", "steps_over_10", "last_train_loss", "best_valid_loss", "test_accuracy"]
print("  ".join(f"{c:>10}" for c in cols) + "  stopped")
for r in runs:
    print("  ".join(f"{str(r[c]):>10}" for c in cols) + "  " + r["stopped"])
PY
summarise "$OUT/runs.csv" "$OUT/table.csv" --by optimizer,lr,clip_norm \
    --values max_grad_norm,best_valid_loss,test_accuracy
figure gradnorm "$OUT/curves.csv" --x step --y grad_norm --group run --logy \
    --title "date task: gradient norm before clipping, every step (seed 1)" \
    --ylabel "global gradient norm"
