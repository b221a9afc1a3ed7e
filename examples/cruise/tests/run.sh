#!/bin/sh
# Run one cruise test:  sh tests/run.sh NAME   (from any directory)
#
# Runs ../cruise on tests/NAME.ev and compares its stdout with
# tests/NAME.expected.  The expected exit status is in tests/NAME.status
# (0 if that file is absent).  If tests/NAME.args exists, cruise gets those
# arguments instead and reads the script from stdin, run from tests/.
# Exit status 0 if the test passes, 1 if it fails (the diff is printed).

name=${1:?usage: run.sh NAME}
here=$(cd "$(dirname "$0")" && pwd)
cruise=$here/../cruise
script=$here/$name.ev
if [ ! -f "$script" ]; then
    echo "run.sh: no test named $name" >&2
    exit 2
fi

want=0
[ -f "$here/$name.status" ] && want=$(cat "$here/$name.status")
out=$(mktemp "${TMPDIR:-/tmp}/cruise-test.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

if [ -f "$here/$name.args" ]; then
    # shellcheck disable=SC2046  # the arguments are meant to be split
    (cd "$here" && exec "$cruise" $(cat "$name.args") <"$script") >"$out" 2>/dev/null
else
    "$cruise" "$script" >"$out" 2>/dev/null
fi
got=$?

rc=0
if ! diff -u "$here/$name.expected" "$out"; then
    rc=1
fi
if [ "$got" -ne "$want" ]; then
    echo "$name: exit status $got, expected $want"
    rc=1
fi
[ "$rc" -eq 0 ] || echo "FAIL: $name"
exit "$rc"
