#!/bin/sh
# bench-analyze: memsim-analyze's speed and memory on a large trace,
# against heaptrack_print on a recording of the same program, in the same
# run.  Target (issue 5): at least 2 million records per second without
# replay on one core, faster than heaptrack_print.
#
#   sh bench/analyze.sh [BUILD] [PAIRS]
set -eu
BUILD=${1:-build}
PAIRS=${2:-1000000}
PROG=$BUILD/programs/alloc_heavy
LIB=$(cd "$BUILD" && pwd)/libmemsim.so
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-analyze.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

secs() {
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    echo "$s $e" | awk '{printf "%.3f", $2 - $1}'
}
rss_kb() { /usr/bin/env bash -c 'TIMEFORMAT=""; command -v /usr/bin/time >/dev/null && /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1 || echo -' _ "$@"; }

env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" MEMSIM_STRATEGY=none "$PROG" 1 "$PAIRS" >/dev/null
T=$(ls "$OUT"/*.jsonl)
records=$(wc -l <"$T")
bytes=$(wc -c <"$T")
echo "bench-analyze: $records records ($bytes bytes) from $PROG 1 $PAIRS"
a=$(secs "$BUILD/memsim-analyze" --no-replay "$T")
b=$(secs "$BUILD/memsim-analyze" -s best-fit "$T")
echo "$records $a $b" | awk '{printf "memsim-analyze --no-replay: %.3f s, %.2f M records/s\nmemsim-analyze -s best-fit:  %.3f s, %.2f M records/s\n", $2, $1 / $2 / 1e6, $3, $1 / $3 / 1e6}'
echo "memsim-analyze peak RSS: $(rss_kb "$BUILD/memsim-analyze" --no-replay "$T") KiB"
if command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1; then
    heaptrack -o "$OUT/ht" "$PROG" 1 "$PAIRS" >/dev/null 2>&1
    h=$(secs heaptrack_print "$OUT/ht.zst")
    echo "$h" | awk '{printf "heaptrack_print:            %.3f s (same program)\n", $1}'
else
    echo "(heaptrack is not installed: no comparison)"
fi
echo "target: >= 2 M records/s without replay, and faster than heaptrack_print"
