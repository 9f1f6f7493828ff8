#!/bin/sh
# expect.sh STATUS PATTERN... -- COMMAND...
# Runs COMMAND; passes when it exits with STATUS and its output (stdout and stderr) matches
# every PATTERN (grep -E). Prints the output either way.
status=$1; shift
patterns=""
while [ "$1" != "--" ]; do patterns="$patterns
$1"; shift; done
shift
out=$("$@" 2>&1); got=$?
printf '%s\n' "$out"
if [ "$got" != "$status" ]; then echo "expect.sh: exit status $got, expected $status"; exit 1; fi
printf '%s\n' "$patterns" | while IFS= read -r p; do
  [ -z "$p" ] && continue
  if ! printf '%s\n' "$out" | grep -Eq -- "$p"; then echo "expect.sh: no match for: $p"; exit 1; fi
done || exit 1
echo "expect.sh: ok"
