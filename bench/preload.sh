#!/bin/sh
# bench-preload: what libmemsim.so costs an allocation-heavy program, as
# wall-time ratios against the native run and against heaptrack, measured
# in the same run (median of REPS runs each), one thread and four.  Also
# trace bytes per record.
#
#   sh bench/preload.sh [BUILD] [OPS_PER_THREAD] [REPS]
set -eu
BUILD=${1:-build}
OPS=${2:-500000}
REPS=${3:-3}
PROG=$BUILD/programs/alloc_heavy
LIB=$(cd "$(dirname "$BUILD/libmemsim.so")" && pwd)/libmemsim.so
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# Seconds of wall time of one run of "$@", to the millisecond.
wall() {
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    echo "$s $e" | awk '{printf "%.3f\n", $2 - $1}'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

have_heaptrack=yes
command -v heaptrack >/dev/null 2>&1 || have_heaptrack=no

echo "bench-preload: $PROG, $OPS operations per thread (free + malloc of 16..4096 B), median of $REPS"
printf '%-8s %9s %9s %9s %9s %12s %12s %12s %14s\n' threads native memsim no-device heaptrack \
    memsim/nat nodev/nat heaptr/nat "bytes/record"
for t in 1 4; do
    n=""; m=""; d=""; h=""
    for r in $(seq "$REPS"); do
        n="$n $(wall "$PROG" "$t" "$OPS")"
        rm -f "$OUT"/*.jsonl*
        d="$d $(wall env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" MEMSIM_STRATEGY=none "$PROG" "$t" "$OPS")"
        rm -f "$OUT"/*.jsonl*
        m="$m $(wall env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" MEMSIM_STRATEGY=best-fit "$PROG" "$t" "$OPS")"
        if [ "$have_heaptrack" = yes ]; then
            h="$h $(wall heaptrack -o "$OUT/ht" "$PROG" "$t" "$OPS")"
            rm -f "$OUT"/ht*
        fi
    done
    nm=$(echo "$n" | tr ' ' '\n' | grep . | median)
    mm=$(echo "$m" | tr ' ' '\n' | grep . | median)
    dm=$(echo "$d" | tr ' ' '\n' | grep . | median)
    hm=-
    [ "$have_heaptrack" = yes ] && hm=$(echo "$h" | tr ' ' '\n' | grep . | median)
    f=$(ls "$OUT"/*.jsonl.zst | head -n 1)
    bytes=$(wc -c <"$f")
    records=$(zstd -dc "$f" | wc -l)
    printf '%-8s %9s %9s %9s %9s %12s %12s %12s %14s\n' "$t" "$nm" "$mm" "$dm" "$hm" \
        "$(echo "$mm $nm" | awk '{printf "%.2f", $1 / $2}')" \
        "$(echo "$dm $nm" | awk '{printf "%.2f", $1 / $2}')" \
        "$(echo "$hm $nm" | awk '$1 == "-" {print "-"; next} {printf "%.2f", $1 / $2}')" \
        "$(echo "$bytes $records" | awk '{printf "%.1f", $1 / $2}')"
done
[ "$have_heaptrack" = yes ] || echo "(heaptrack is not installed: apt-get install heaptrack for the comparison)"
echo "memsim: stacks and the best-fit shadow device (MEMSIM_STRATEGY=best-fit); no-device: MEMSIM_STRATEGY=none, the default"
echo "target: memsim's overhead (memsim/native - 1) at most half of heaptrack's"

# The poller's own cost: CPU of an idle program (sleep) under memsim at
# the default 100 ms interval, as a share of one core.
cpu=$(bash -c 'TIMEFORMAT="%U %S"; { time env LD_PRELOAD="$1" MEMSIM_OUTPUT="$2" sleep 5 ; } 2>&1' _ "$LIB" "$OUT" | tail -n 1)
echo "$cpu" | awk '{printf "poller: %.2f%% of a core over 5 s of sleep (user %ss, sys %ss; target under 1%%)\n", ($1 + $2) / 5 * 100, $1, $2}'
