#!/bin/sh
# bench/shapes.sh [BUILD]: the findings on planted patterns, live.  Every
# pattern of tests/programs/shapes.c traced at MEMSIM_SAMPLE_MS 100 and
# 20 and analyzed, with every check of tests/integration/shapes_checks.sh
# (class, series, height within 10%, time range within two samples of
# the trace's own phase records, nothing else).  The program is driven by
# wall time, so on a loaded machine its series, and so the findings, may
# change: test_shapes.sh checks the same on recorded traces, and this is
# where the live runs are measured.  Prints the load, then one line per
# pattern and interval: PASS, or FAIL with the checks that failed; then
# the count.  Exit 0 either way (timing is too noisy to gate on); 1 when
# a program or its trace is missing.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 1
. tests/integration/lib.sh
. tests/integration/shapes_checks.sh
A=$BUILD/memsim-analyze
J=$JSONQ
for f in "$BUILD/libmemsim.so" "$BUILD/memsim-recorder" "$A" "$J" "$BUILD/programs/shapes"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "bench/shapes: no $f (make all build/jsonq)"; exit 1; }
done
echo "bench/shapes: every planted pattern traced live; load $(cut -d' ' -f1-3 /proc/loadavg)"
good=0 all=0 status=0
for ms in $SHAPE_MS; do
    for p in $SHAPES; do
        d=$TMP/live-$p-$ms
        mkdir -p "$d"
        env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$d" MEMSIM_SAMPLE_MS="$ms" \
            "$BUILD/programs/shapes" "$p" >/dev/null 2>"$d/stderr"
        trace=$(ls "$d"/memsim.shapes.*.jsonl 2>/dev/null | head -n 1)
        all=$((all + 1))
        if [ -z "$trace" ]; then
            printf '  %-13s %3s ms  no trace\n' "$p" "$ms"
            status=1
            continue
        fi
        FAILED=0
        check_shape "$p" "$ms" "$trace" >"$d/checks"
        if [ "$FAILED" -eq 0 ]; then
            printf '  %-13s %3s ms  PASS\n' "$p" "$ms"
            good=$((good + 1))
        else
            printf '  %-13s %3s ms  FAIL\n' "$p" "$ms"
            grep '^not ok' "$d/checks" | sed 's/^not ok - /      /'
        fi
    done
done
echo "bench/shapes: $good of $all pattern runs passed every check (load $(cut -d' ' -f1-3 /proc/loadavg))"
exit $status
