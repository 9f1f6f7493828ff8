#!/bin/sh
# mutants.sh GRADER: every mutant of the solutions (GRADER variants) must fail its exercise.
grader=$1
total=0; missed=0
for line in $("$grader" variants | grep '^mutant:' | tr ' ' '='); do
  name=${line%%=*}; exercise=${line#*=}
  total=$((total + 1))
  if "$grader" check "$exercise" --replace "$name" --seed 1 > /dev/null 2>&1; then
    echo "NOT CAUGHT: $name (exercise $exercise passed)"; missed=$((missed + 1))
  fi
done
echo "mutants: $total run, $missed not caught"
[ "$total" -gt 0 ] && [ "$missed" -eq 0 ]
