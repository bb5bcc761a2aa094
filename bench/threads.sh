#!/bin/sh
# bench-threads: what tracing costs as threads grow, memsim against
# heaptrack, measured in the same run.
#
#   sh bench/threads.sh [BUILD]
#
# The workload is bench/programs/churn (about 50,000 live blocks over all
# threads, mixed sizes, a quarter of its calls reallocs, a sixth of the
# frees made by another thread) at 1, 4, 50, 200 and 500 threads, the
# same calls in total at each count.  For each count: REPS interleaved
# runs of native, memsim and heaptrack under bench-watch (wall time, and
# CPU time summed over every process of the run: memsim's recorder,
# heaptrack's interpreter); medians.  Prints per count the wall times,
# memsim/native and heaptrack/native (wall and CPU), and whether the
# traces lost anything.  Servers with hundreds of threads are what the
# 200 and 500 rows stand for: with a few cores, most threads wait to run
# at any moment, some of them inside the tracer.
#
# Environment:
#   REPS=N               runs of each (3; 1 with BENCH_QUICK=1)
#   BENCH_QUICK=1        small sizes: a smoke run
#   BENCH_THREADS="…"    the thread counts (default: 1 4 50 200 500)
#   TMPDIR               scratch for the traces
set -eu
BUILD=${1:-build}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then REPS=${REPS:-1}; EVENTS=200000; else REPS=${REPS:-3}; EVENTS=7000000; fi
COUNTS=${BENCH_THREADS:-1 4 50 200 500}
BIN=$(cd "$BUILD" && pwd)
LIB=$BIN/libmemsim.so
WATCH=$BIN/bench-watch
CHURN=$BIN/programs/churn
for f in "$LIB" "$BIN/memsim-recorder" "$WATCH" "$CHURN"; do
    [ -e "$f" ] || { echo "bench-threads: $f is missing (make bench builds it)" >&2; exit 1; }
done
HEAPTRACK=$(command -v heaptrack 2>/dev/null || true)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-threads.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run MODE THREADS: one run under bench-watch, its report in $OUT/r.
run() {
    ops=$((EVENTS / $2))
    case $1 in
    native) "$WATCH" -i 20 -o "$OUT/r" "$CHURN" "$2" "$ops" ;;
    memsim) "$WATCH" -i 20 -o "$OUT/r" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$CHURN" "$2" "$ops" ;;
    heaptrack) "$WATCH" -i 20 -o "$OUT/r" "$HEAPTRACK" -o "$OUT/ht" "$CHURN" "$2" "$ops" ;;
    esac </dev/null >"$OUT/stdout" 2>"$OUT/stderr" || true
}
key() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }
cpu() { awk '$1 == "proc" { s += $5 } END { print s + 0 }' "$1"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

echo "bench-threads: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, memsim $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?'), churn with $EVENTS calls in all, medians of $REPS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$HEAPTRACK" ] || echo "(heaptrack is not installed: apt-get install heaptrack for the comparison)"
printf '%-8s %9s %9s %9s   %-17s %-17s %s\n' threads native_s memsim_s heaptr_s "memsim/native" "heaptrack/native" "memsim trace"
printf '%-8s %9s %9s %9s   %-17s %-17s %s\n' "" "" "" "" "wall  cpu" "wall  cpu" ""
for t in $COUNTS; do
    wn="" wm="" wh="" cn="" cm="" ch="" lost=""
    for r in $(seq "$REPS"); do
        run native "$t"
        wn="$wn $(key "$OUT/r" wall_s)" cn="$cn $(cpu "$OUT/r")"
        run memsim "$t"
        wm="$wm $(key "$OUT/r" wall_all_s)" cm="$cm $(cpu "$OUT/r")"
        for f in "$OUT"/memsim.churn.*.jsonl.zst; do
            [ -e "$f" ] || { lost="no trace"; continue; }
            d=$("$BIN/tracecheck" "$f" 2>/dev/null | sed -n 's/.*dropped=\([0-9]*\).*/\1/p')
            [ "${d:-x}" = 0 ] || lost="dropped ${d:-?}"
        done
        rm -f "$OUT"/memsim.*
        if [ -n "$HEAPTRACK" ]; then
            run heaptrack "$t"
            wh="$wh $(key "$OUT/r" wall_all_s)" ch="$ch $(cpu "$OUT/r")"
            rm -f "$OUT"/ht.*
        fi
    done
    n=$(echo "$wn" | median) m=$(echo "$wm" | median) h=$(echo "$wh" | median)
    printf '%-8s %9s %9s %9s   %-5s %-11s %-5s %-11s %s\n' "$t" "$n" "$m" "$h" \
        "$(ratio "$m" "$n")" "$(ratio "$(echo "$cm" | median)" "$(echo "$cn" | median)")" \
        "$(ratio "$h" "$n")" "$(ratio "$(echo "$ch" | median)" "$(echo "$cn" | median)")" "${lost:-whole}"
done
