#!/bin/sh
# Instrumentation overhead on a CPU-bound C++ program (kernel.cc), by the
# method of the C overhead benchmark: CPU time (user + system, from
# /usr/bin/time) of each variant, ROUNDS interleaved rounds, the median per
# variant and its ratio to the plain build of the same compiler; then the
# instructions each variant executes (callgrind's Ir) on a shorter run.
#   ./run.sh RETEST OUTDIR [ROUNDS] [ARG] [CALLGRIND_ARG]
# Variants, all -O2 -std=c++17: plain g++; `retest build` (g++ underneath);
# g++ --coverage (gcov); plain clang++-19; `retest build` with
# RETEST_CXX=clang++-19; clang++-19 -fprofile-instr-generate
# -fcoverage-mapping (source-based coverage). Every instrumented run writes
# its data as it would in use (a trace, .gcda files, a .profraw file).
set -eu
R=$(readlink -f "$1"); OUT=$2; ROUNDS=${3:-9}; ARG=${4:-400}; CARG=${5:-20}
HERE=$(dirname "$(readlink -f "$0")")
mkdir -p "$OUT"; OUT=$(readlink -f "$OUT")
variant() { # NAME: a fresh copy of the program in $OUT/NAME
    rm -rf "$OUT/$1"; mkdir -p "$OUT/$1"; cp "$HERE/kernel.cc" "$HERE/Makefile" "$OUT/$1/"
}
variant gcc;          (cd "$OUT/gcc" && make -s CXX=g++)
variant retest-gcc;   (cd "$OUT/retest-gcc" && "$R" init > /dev/null && RETEST_CXX=g++ "$R" build -- make -s > /dev/null)
variant gcov;         (cd "$OUT/gcov" && make -s CXX=g++ CXXFLAGS="-O2 -std=c++17 --coverage")
variant clang;        (cd "$OUT/clang" && make -s CXX=clang++-19)
variant retest-clang; (cd "$OUT/retest-clang" && "$R" init > /dev/null && RETEST_CXX=clang++-19 "$R" build -- make -s > /dev/null)
variant clang-cov;    (cd "$OUT/clang-cov" && make -s CXX=clang++-19 CXXFLAGS="-O2 -std=c++17 -fprofile-instr-generate -fcoverage-mapping")
VARIANTS="gcc retest-gcc gcov clang retest-clang clang-cov"
# every variant prints the same checksum
for v in $VARIANTS; do
    mkdir -p "$OUT/$v/traces"
    (cd "$OUT/$v" && RETEST_TRACE_DIR="$OUT/$v/traces" LLVM_PROFILE_FILE="$OUT/$v/k.profraw" ./kernel 3) > "$OUT/$v.check"
done
for v in $VARIANTS; do cmp "$OUT/gcc.check" "$OUT/$v.check"; done
: > "$OUT/times.txt"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for v in $VARIANTS; do
        rm -rf "$OUT/$v/traces"; mkdir -p "$OUT/$v/traces"
        (cd "$OUT/$v" && RETEST_TRACE_DIR="$OUT/$v/traces" LLVM_PROFILE_FILE="$OUT/$v/k.profraw" \
            /usr/bin/time -f "$v %U %S" -a -o "$OUT/times.txt" ./kernel "$ARG" > /dev/null)
    done
    r=$((r + 1))
done
: > "$OUT/ir.txt"
for v in $VARIANTS; do
    rm -rf "$OUT/$v/traces"; mkdir -p "$OUT/$v/traces"
    (cd "$OUT/$v" && RETEST_TRACE_DIR="$OUT/$v/traces" LLVM_PROFILE_FILE="$OUT/$v/k.profraw" \
        valgrind --tool=callgrind --callgrind-out-file="$OUT/$v.cg" ./kernel "$CARG" > /dev/null 2> "$OUT/$v.vg")
    echo "$v $(grep -o 'Collected : [0-9]*' "$OUT/$v.vg" | grep -o '[0-9]*')" >> "$OUT/ir.txt"
done
python3 - "$OUT" <<'PY'
import statistics, sys
out = sys.argv[1]
cpu = {}
for l in open(f"{out}/times.txt"):
    v, u, s = l.split()
    cpu.setdefault(v, []).append(float(u) + float(s))
ir = dict((l.split()[0], int(l.split()[1])) for l in open(f"{out}/ir.txt"))
base = {"gcc": "gcc", "retest-gcc": "gcc", "gcov": "gcc", "clang": "clang", "retest-clang": "clang", "clang-cov": "clang"}
names = {"gcc": "plain g++", "retest-gcc": "retest (g++)", "gcov": "g++ --coverage",
         "clang": "plain clang++-19", "retest-clang": "retest (clang++-19)", "clang-cov": "clang++-19 source-based coverage"}
print("| variant | CPU s, median of %d | CPU ratio to plain | instructions (Ir) | Ir ratio to plain |" % len(cpu["gcc"]))
print("|---|---:|---:|---:|---:|")
for v in names:
    m = statistics.median(cpu[v]); mb = statistics.median(cpu[base[v]])
    print(f"| {names[v]} | {m:.3f} | {m / mb:.2f} | {ir[v]:,} | {ir[v] / ir[base[v]]:.2f} |")
PY
