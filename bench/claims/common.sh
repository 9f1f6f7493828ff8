# Sourced by bench/claims/claimN.sh: the mode, the output folder, and the models the claims share.
#   source bench/claims/common.sh N "$@"
# sets MODE (quick|full), OUT (runs/claims/claimN, created) and SEQGRAD, and works from the
# repository root. Decoding speed is measured on one BLAS thread (the machine is shared).
set -euo pipefail
CLAIM="$1"
MODE="${2:-quick}"
case "$MODE" in quick | full) ;; *) echo "usage: bash bench/claims/claim$CLAIM.sh [quick|full]" >&2; exit 2 ;; esac
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SEQGRAD=./build/seqgrad
[[ -x $SEQGRAD ]] || { echo "claim $CLAIM: $SEQGRAD not found: build first" >&2; exit 1; }
OUT="runs/claims/claim$CLAIM"
mkdir -p "$OUT" runs/claims/models
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# The seeds of the trained models: three in full mode, one in quick mode.
if [[ $MODE == full ]]; then SEEDS="1 2 3"; else SEEDS="1"; fi

# eng_fra_model SEED: prints the run directory of the eng-fra model with that seed, training it
# first if it is not there. full: configs/eng-fra.json for 10 epochs (early stopping, patience
# 3); quick: a small model (hidden 64) for 1 epoch. Models are shared by claims 1, 2 and 7.
eng_fra_model() {
    local seed="$1" dir
    if [[ $MODE == full ]]; then
        dir="runs/claims/models/eng-fra-s$seed"
        set -- --set train.epochs=10
    else
        dir="runs/claims/models/quick-eng-fra-s$seed"
        set -- --set train.epochs=1 --set model.hidden_size=64 --set model.embedding_size=64 \
            --set model.attention_size=64
    fi
    if [[ ! -f $dir/best.safetensors ]]; then
        $SEQGRAD train configs/eng-fra.json "$@" --set train.seed="$seed" \
            --set output.run_dir="$dir" --set output.explore=0 --quiet > "$dir.log" 2>&1 ||
            { cat "$dir.log" >&2; return 1; }
    fi
    echo "$dir"
}

# figure NAME ARGS...: in full mode, `seqgrad plot ARGS --out docs/img/claims-$CLAIM-NAME.svg`;
# in quick mode the same into $OUT, so the page's figures change only with a full run.
figure() {
    local name="$1" target
    shift
    if [[ $MODE == full ]]; then target="docs/img/claims-$CLAIM-$name.svg"; else target="$OUT/$name.svg"; fi
    $SEQGRAD plot "$@" --out "$target"
}

# summarise IN.csv OUT.csv --by COLS --values COLS: median, min and max per group (see
# bench/claims/summarise.py), printed as a table.
summarise() { python3 bench/claims/summarise.py "$@"; }
