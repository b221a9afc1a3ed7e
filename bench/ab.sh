#!/bin/sh
# ab.sh "COMMAND A" "COMMAND B" [ROUNDS]
#
# Two commands timed in alternating rounds (hyperfine -N -w 2 -r 10 each,
# A then B, ROUNDS times, 6 by default), so that a shared machine's noise
# falls on both alike. Prints each command's median of the round medians
# (ms), the rounds, and B/A. Needs hyperfine and python3.
set -eu
a=$1; b=$2; rounds=${3:-6}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
while [ "$i" -lt "$rounds" ]; do
  for c in a b; do
    eval "cmd=\$$c"
    hyperfine -N -w 2 -r 10 --export-json "$out/$c-$i.json" "$cmd" >/dev/null 2>&1
  done
  i=$((i + 1))
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
m = {c: [json.load(open(f"{d}/{c}-{i}.json"))["results"][0]["median"] * 1000 for i in range(n)] for c in "ab"}
for c in "ab":
    print(f"{c.upper()} median {statistics.median(m[c]):.2f} ms  rounds {' '.join(f'{x:.1f}' for x in m[c])}")
print(f"ratio B/A {statistics.median(m['b']) / statistics.median(m['a']):.3f}")
PY
