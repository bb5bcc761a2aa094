#!/bin/sh
# bench/same.sh: two builds of memsim-analyze give the same analysis of
# the same traces, byte for byte: the text report and the JSON, the one
# figure that is a measurement of the analyzer itself masked (each
# strategy's events_per_s, the replay's own clock).  For a change that
# must not change what the analysis says (a faster replay, a leaner
# reader): build the code before it elsewhere and run this on recordings
# of real programs (bench/analyze.sh's, bench/workloads.sh's).
#
#   sh bench/same.sh BASE_BUILD BUILD TRACE...
# Prints one line per trace, "same" or the first differing lines; exits
# 1 when any differs.
set -eu
[ $# -ge 3 ] || { echo "usage: sh bench/same.sh BASE_BUILD BUILD TRACE..." >&2; exit 2; }
A=$1/memsim-analyze
B=$2/memsim-analyze
shift 2
for x in "$A" "$B"; do
    [ -x "$x" ] || { echo "bench/same: no analyzer at $x" >&2; exit 2; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-same.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
mask() { sed 's/"events_per_s": *[0-9.e+-]*/"events_per_s": -/g'; }
status=0
for t in "$@"; do
    for fmt in text json; do
        flag=""
        [ "$fmt" = json ] && flag=--json
        "$A" $flag "$t" 2>&1 | mask >"$OUT/a"
        "$B" $flag "$t" 2>&1 | mask >"$OUT/b"
        if cmp -s "$OUT/a" "$OUT/b"; then
            echo "same  $fmt $t ($(wc -c <"$OUT/a") bytes)"
        else
            echo "DIFF  $fmt $t:"
            diff "$OUT/a" "$OUT/b" | head -20
            status=1
        fi
    done
done
exit $status
