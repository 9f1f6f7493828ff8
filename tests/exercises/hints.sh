#!/bin/sh
# hints.sh GRADER SOURCE_DIR: every file `GRADER hint N` names exists, and every function it
# names as name() occurs in one of the files that hint names.
grader=$1; root=$2; bad=0
for n in $(seq 1 17); do
  text=$("$grader" hint "$n" | tr '\n' ' ')
  files=$(printf '%s' "$text" | grep -oE '[a-z_]+(/[a-z_]+)*/[a-z_0-9]+\.(cpp|h)')
  for f in $files; do
    [ -f "$root/$f" ] || { echo "hint $n: no file $f"; bad=1; }
  done
  for fn in $(printf '%s' "$text" | grep -oE '[A-Za-z_:]+\(\)' | tr -d '()'); do
    found=0
    for f in $files; do grep -q -- "${fn##*::}" "$root/$f" 2>/dev/null && found=1; done
    [ $found = 1 ] || { echo "hint $n: $fn not in $files"; bad=1; }
  done
done
[ $bad = 0 ] && echo "hints: every file and function exists"
exit $bad
