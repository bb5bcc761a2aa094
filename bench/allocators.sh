#!/bin/sh
# bench-allocators: memsim-analyze --allocators' predictions against real
# runs, on six real programs: python3 with PYTHONMALLOC=malloc, perl,
# lua5.4, sqlite3, gcc's cc1, and threads.py (python3, four producer and
# four consumer threads: every record freed by another thread than the
# one that made it).
#
#   sh bench/allocators.sh [BUILD]          (part of make bench)
#
# Per program, memsim run --compare-allocators: the program once per
# installed allocator (glibc, jemalloc, mimalloc, tcmalloc), traced, with
# its heap's RSS measured by libmemsim-meter.so (allocators/meter.c); the
# first run's trace (glibc's) replayed through every allocator.  Printed:
# predicted and measured peak heap RSS per allocator, the error, whether
# the pairs of allocators whose measured peaks differ by over 1% come out
# in the same order, and each replay's CPU and wall time per operation.
# The target: every error within 5%, every such pair in order.
#
# Environment: ALLOC_WORKLOADS="…" a subset (python-malloc perl lua sqlite
# gcc threads); ALLOC_QUICK=1 the shortened sizes of make test;
# ALLOC_KEEP=DIR keeps the runs.  An allocator that is not installed is
# named with the line that installs it, and the others are compared.
set -eu
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=$(cd "$BUILD" && pwd)
MEMSIM=$BIN/memsim
JSONQ=$BIN/jsonq
QUICK=${ALLOC_QUICK:-0}
WORKLOADS=${ALLOC_WORKLOADS:-python-malloc perl lua sqlite gcc threads}
for f in "$MEMSIM" "$BIN/memsim-analyze" "$BIN/memsim-replay" "$BIN/libmemsim-meter.so" "$JSONQ"; do
    [ -f "$f" ] || { echo "bench-allocators: $f is missing (make builds it)" >&2; exit 1; }
done
if [ -n "${ALLOC_KEEP:-}" ]; then
    OUT=$ALLOC_KEEP
    mkdir -p "$OUT"
else
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-allocators.XXXXXX")
    trap 'rm -rf "$OUT"' EXIT
fi
IN=$OUT/inputs
note() { echo "bench-allocators: $*" >&2; }
. "$HERE/study/workloads.sh"
workloads_sizes "$QUICK"
workloads_programs
workloads_inputs
q() { "$JSONQ" "$2" <"$1" 2>/dev/null || true; }

echo "bench-allocators: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, memsim $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %-10s %12s %12s %8s %10s %10s\n' workload allocator "predicted" "measured" error "CPU/op" "wall/op"
fails=0
for w in $WORKLOADS; do
    workload_cmd "$w" 1 || { note "$w: skipped (its program is missing)"; continue; }
    D=$OUT/$w
    rm -rf "$D"
    # shellcheck disable=SC2086 # ENVV and CMD are words without blanks (but .read's)
    eval env $ENVV "$MEMSIM" run --out "$D" --compare-allocators -- "$CMD" \
        </dev/null >"$OUT/$w.stdout" 2>"$OUT/$w.stderr" || {
        note "$w: memsim run --compare-allocators failed: $(tail -n 3 "$OUT/$w.stderr")"
        fails=$((fails + 1))
        continue
    }
    J=$D/allocators.json
    P=$D/prediction.json
    [ -f "$J" ] || { note "$w: no comparison ($(tail -n 2 "$OUT/$w.stderr"))"; fails=$((fails + 1)); continue; }
    # the replays' times, from the prediction's process (the one with the largest peak heap)
    exe=$(q "$J" exe)
    np=$(q "$P" processes.#)
    pre=
    if [ -n "$np" ]; then
        for i in $(seq 0 $((np - 1))); do
            [ "$(q "$P" "processes.$i.summary.exe")" = "$exe" ] && pre=processes.$i.
        done
    fi
    i=0
    while name=$(q "$J" "allocators.$i.name") && [ -n "$name" ]; do
        pr=$(q "$J" "allocators.$i.predicted_peak_heap_rss_bytes")
        me=$(q "$J" "allocators.$i.measured_peak_heap_rss_bytes")
        er=$(q "$J" "allocators.$i.error")
        cpu=- wall=-
        k=0
        while rn=$(q "$P" "${pre}allocators.rows.$k.name") && [ -n "$rn" ]; do
            if [ "$rn" = "$name" ]; then
                cpu=$(q "$P" "${pre}allocators.rows.$k.cpu_ns_per_op")
                wall=$(q "$P" "${pre}allocators.rows.$k.wall_ns_per_op")
            fi
            k=$((k + 1))
        done
        echo "$w $name $pr $me $er $cpu $wall" | awk '{
            printf "%-14s %-10s %8.2f MiB %8.2f MiB %+7.1f%% %7.0f ns %7.0f ns%s\n", $1, $2,
                $3 / 1048576, $4 / 1048576, 100 * $5, $6, $7, ($5 > 0.05 || $5 < -0.05) ? "  OUT OF 5%" : "" }'
        awk -v e="$er" 'BEGIN { exit !(e > 0.05 || e < -0.05) }' && fails=$((fails + 1))
        i=$((i + 1))
    done
    pairs=$(q "$J" pairs)
    inorder=$(q "$J" pairs_in_order)
    echo "$w: $inorder of $pairs pairs that differ by over 1% measured in the same order; the replays: $(q "$P" "${pre}allocators.operations") operations on $(q "$P" "${pre}allocators.threads") threads, $(q "$P" "${pre}allocators.wall_s" | cut -c1-5) s in parallel"
    [ "$pairs" = "$inorder" ] || fails=$((fails + 1))
done
echo "target: every prediction within 5% of the measured peak heap RSS, and the same order ($fails misses)"
