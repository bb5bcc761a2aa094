#!/bin/sh
# bench/findings.sh BUILD [RUNS [FUNCS]]: the findings' stability on a
# real program.  gcc -O2 -c of one generated C file (bench/study/gen_c.sh
# FUNCS functions, default 120), traced RUNS times (default 5); each
# run's compiler (cc1) analyzed; its findings as "classification series
# severity" lines must be the same in every run.  Prints each run's
# findings with their bytes and share of peak RSS, then one line: the
# same in all runs, or not (exit status 1).  Part of `make bench`: a run
# takes 10 to 40 s on a busy 2-core machine, too long for the tests.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${2:-5}
FUNCS=${3:-120}
HERE=$(cd "$(dirname "$0")" && pwd)
GCC=$(command -v gcc || true)
if [ -z "$GCC" ]; then
    echo "bench/findings: no gcc: skipped"
    exit 0
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/memsim-findings.XXXXXX")
trap 'rm -rf "$W"' EXIT
sh "$HERE/study/gen_c.sh" "$W/big.c" "$FUNCS"
echo "bench/findings: gcc -O2 -c big.c ($(wc -l <"$W/big.c") lines), $RUNS runs, findings of cc1"
i=1
while [ "$i" -le "$RUNS" ]; do
    mkdir -p "$W/run$i"
    (cd "$W" && env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$W/run$i" \
        "$GCC" -O2 -c big.c -o "big$i.o")
    "$BUILD/memsim-analyze" --json --no-replay "$W"/run$i/memsim.cc1.*.jsonl* >"$W/run$i.json" 2>/dev/null
    n=$("$BUILD/jsonq" findings.# <"$W/run$i.json" 2>/dev/null || echo 0)
    : >"$W/run$i.classes"
    k=0
    while [ "$k" -lt "${n:-0}" ]; do
        q() { "$BUILD/jsonq" "findings.$k.$1" <"$W/run$i.json"; }
        echo "$(q classification) $(q series) $(q severity)" >>"$W/run$i.classes"
        printf '  run %d: %s %s %s, %s bytes, %.0f%% of peak RSS, %.1f s to %.1f s\n' "$i" \
            "$(q classification)" "$(q series)" "$(q severity)" "$(q bytes)" \
            "$(awk -v s="$(q share_of_peak_rss)" 'BEGIN { print 100 * s }')" "$(q start_s)" "$(q end_s)"
        k=$((k + 1))
    done
    [ "${n:-0}" -gt 0 ] || echo "  run $i: no finding"
    i=$((i + 1))
done
same=yes
i=2
while [ "$i" -le "$RUNS" ]; do
    cmp -s "$W/run1.classes" "$W/run$i.classes" || same=no
    i=$((i + 1))
done
if [ "$same" = yes ]; then
    echo "bench/findings: the same classes and severities in all $RUNS runs"
else
    echo "bench/findings: classes or severities differ between identical runs"
    exit 1
fi
