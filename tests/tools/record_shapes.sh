#!/bin/sh
# tests/tools/record_shapes.sh [BUILD [PATTERN...]]: re-records the traces
# test_shapes.sh checks, tests/data/shapes/PATTERN-MS.jsonl.zst: each
# pattern of tests/programs/shapes.c (default: all) traced with
# BUILD/libmemsim.so (default build) at MEMSIM_SAMPLE_MS 100 and 20, as
# the test once did live.  A recording is kept only when it passes every
# check of tests/integration/shapes_checks.sh; otherwise it is traced
# again, up to 5 times (a loaded machine stretches the program's
# phases).  Run it from the repository's top after `make all build/jsonq`,
# on a quiet machine; commit the files it writes.
# Exit 1 when a pattern never passed (its old file is left as it was).
set -u
BUILD=${1:-build}
[ $# -gt 0 ] && shift
. tests/integration/lib.sh
. tests/integration/shapes_checks.sh
A=$BUILD/memsim-analyze
J=$JSONQ
OUT=tests/data/shapes
mkdir -p "$OUT"
status=0
for p in ${*:-$SHAPES}; do
    for ms in $SHAPE_MS; do
        try=1
        while :; do
            d=$TMP/rec-$p-$ms-$try
            mkdir -p "$d"
            env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$d" MEMSIM_SAMPLE_MS="$ms" \
                "$BUILD/programs/shapes" "$p" >/dev/null 2>"$d/stderr"
            trace=$(ls "$d"/memsim.shapes.*.jsonl 2>/dev/null | head -n 1)
            FAILED=0
            [ -n "$trace" ] && check_shape "$p" "$ms" "$trace" >"$d/checks"
            if [ -n "$trace" ] && [ "$FAILED" -eq 0 ]; then
                zstd -q -19 -f "$trace" -o "$OUT/$p-$ms.jsonl.zst"
                echo "$OUT/$p-$ms.jsonl.zst: try $try, $(wc -c <"$OUT/$p-$ms.jsonl.zst") bytes"
                break
            fi
            grep '^not ok' "$d/checks" 2>/dev/null | sed "s/^/  try $try: /"
            if [ "$try" -ge 5 ]; then
                echo "$p at $ms ms: no recording passed in 5 tries; $OUT/$p-$ms.jsonl.zst left as it was"
                status=1
                break
            fi
            try=$((try + 1))
        done
    done
done
exit $status
