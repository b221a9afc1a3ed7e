#!/bin/sh
# The C++ change study: for each change of changes.py, a fresh copy of the
# program is built through `retest build`, run as the baseline, changed,
# rebuilt, and `retest select` and `retest audit` report what is selected and
# what a full rerun shows was missed.   ./run.sh RETEST OUTDIR
set -eu
R=$(readlink -f "$1"); OUT=$(readlink -f "$2"); HERE=$(dirname "$(readlink -f "$0")")
mkdir -p "$OUT"
printf '| change | selected | function | file | missed | changed behaviour |\n|---|---|---|---|---|---|\n' > "$OUT/table.md"
for c in $(python3 "$HERE/changes.py"); do
    W=$(mktemp -d); cp "$HERE"/shapes.h "$HERE"/shapes.cc "$HERE"/Makefile "$HERE"/retest.toml "$W"/
    cd "$W"
    "$R" init > /dev/null
    "$R" build -- make -s > /dev/null
    "$R" run -q > /dev/null || true
    python3 "$HERE/changes.py" "$c" "$W"
    sleep 1; touch shapes.cc
    "$R" build -- make -s > /dev/null
    "$R" select --format json > "$OUT/$c.select.json"
    "$R" select --algorithm function --format json > "$OUT/$c.function.json"
    "$R" select --algorithm file --format json > "$OUT/$c.file.json"
    "$R" audit --format json > "$OUT/$c.audit.json" || true
    python3 - "$c" "$OUT" >> "$OUT/table.md" <<'PY'
import json, sys
c, out = sys.argv[1], sys.argv[2]
n = lambda alg: len(json.load(open(f"{out}/{c}.{alg}.json"))["selected"])
a = json.load(open(f"{out}/{c}.audit.json"))
changed = sorted(a.get("changed", {}).keys()) if isinstance(a.get("changed"), dict) else a.get("changed", [])
print(f"| {c} | {n('select')} of 10 | {n('function')} | {n('file')} | {len(a['missed'])} | {', '.join(changed)} |")
PY
    cd /; rm -rf "$W"
done
cat "$OUT/table.md"
