#!/usr/bin/env bash
# Screenshots of every view of a `seqgrad explore` file, made by headless Chromium (the same
# browser and flags as the browser test), for docs/img and the README.
# usage: scripts/explore_screenshots.sh FILE.html SENTENCE OUT_PREFIX   e.g.
#   scripts/explore_screenshots.sh runs/eng-fra/explore.html 4 docs/img/explore
# writes OUT_PREFIX-corpus.png, -attention.png, -saliency.png, -gradients.png, -tree.png,
# -tape.png, -compare.png, -whatif.png, -training.png (the tape with the path through attention
# open and the first op on it chosen)
set -euo pipefail
file=$(realpath "$1"); sentence=$2; prefix=$3
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "chromium not found (apt-get install chromium)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
for view in corpus attention saliency gradients tape tree compare whatif training; do
  zoom=""; size=1280,860
  if [ "$view" = tree ]; then zoom="&zoom=0.75"; size=1280,1300; fi
  if [ "$view" = saliency ] || [ "$view" = gradients ]; then size=1280,1200; fi
  if [ "$view" = tape ]; then zoom="&path=attention&node=${TAPE_NODE:-28}"; size=1280,1200; fi
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size=$size --virtual-time-budget=3000 \
    --screenshot="$prefix-$view.png" "file://$file#sentence=$sentence&view=$view$zoom" 2>/dev/null
  echo "$prefix-$view.png"
done
