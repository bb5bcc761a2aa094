#!/bin/sh
# bench-timing: the time bounds of the transparency and poller tests,
# measured here rather than asserted by `make test` (on a loaded machine a
# wall-time bound there fails at random).  Each figure is a median of
# interleaved runs, beside the native run's where there is one, with the
# bound it is held to and "ok" or "OVER".
#
#   sh bench/timing.sh [BUILD]
#
#   exit_sig     exit() from a SIGALRM handler 50 ms in: traced, the
#                process ends within 1 s (an exit that waits for its
#                recorder in vain takes 5 s)
#   ulimit -Sn 4, ulimit -n 4
#                heap_mix with a soft descriptor limit the recorder
#                raises, and a hard one it cannot load under: under 5 s
#                (a wait for a recorder that cannot start takes 10 s)
#   frag_heap    the share of its time in mallinfo2 (libmallinfo-meter.so
#                ahead of libmemsim.so): at most 2%
#   fork_timer   a timer's handler forks every 20 ms while main works
#                (tests/edges/fork_timer, unpaced): traced, within 2 s (a
#                traced fork dearer than the interval never lets it end:
#                cut at 60 s)
#   sample interval
#                MEMSIM_SAMPLE_MS=20 over a 1 s hold: 40 to 66 samples
#   memsim run budgets
#                --rss-mb 50 on a runaway (a MiB more every ms): stopped
#                within 2 s, dead within two polls of the crossing (at most
#                3 polls over the budget); --wall-s 0.5 on sleep 5: ends
#                within 3 s
#
# Environment: RUNS=N runs of each (7; 3 with BENCH_QUICK=1).
set -u
BUILD=${1:-build}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then RUNS=${RUNS:-3}; else RUNS=${RUNS:-7}; fi
BIN=$(cd "$BUILD" && pwd)
LIB=$BIN/libmemsim.so
PROG=$BIN/programs
METER=$BIN/libmallinfo-meter.so
for f in "$LIB" "$BIN/memsim-recorder" "$BIN/memsim" "$BIN/jsonq" "$METER" "$PROG/exit_sig" "$PROG/heap_mix" \
    "$PROG/frag_heap" "$PROG/touch_mb" "$BIN/edges/fork_timer"; do
    [ -e "$f" ] || { echo "bench-timing: $f is missing (make bench builds it)" >&2; exit 1; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-timing.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
unset LD_PRELOAD MEMSIM_OUTPUT MEMSIM_SAMPLE_MS MEMSIM_COMPRESS

ms_now() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "?"}'; }
# verdict VALUE BOUND: ok when VALUE <= BOUND
verdict() { awk -v v="$1" -v b="$2" 'BEGIN {print (v + 0 <= b + 0) ? "ok" : "OVER"}'; }

# ms CMD...: the wall milliseconds of CMD (its output dropped), traced
# into a fresh directory when TRACED=1.
ms() {
    d=$OUT/run.$$.$(ms_now)
    mkdir -p "$d"
    t0=$(ms_now)
    if [ "${TRACED:-0}" = 1 ]; then
        env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$d" "$@" >/dev/null 2>&1
    else
        "$@" >/dev/null 2>&1
    fi
    echo $(($(ms_now) - t0))
    rm -rf "$d"
}

# timed NAME BOUND_MS CMD...: RUNS interleaved native and traced runs.
timed() {
    name=$1 bound=$2
    shift 2
    : >"$OUT/n" && : >"$OUT/t"
    for i in $(seq "$RUNS"); do
        ms "$@" >>"$OUT/n"
        TRACED=1 ms "$@" >>"$OUT/t"
    done
    n=$(median <"$OUT/n") t=$(median <"$OUT/t")
    printf '%-22s native %6s ms  traced %6s ms  (x%s)  bound %s ms: %s\n' "$name" "$n" "$t" \
        "$(awk -v a="$t" -v b="$n" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}')" "$bound" \
        "$(verdict "$t" "$bound")"
}

echo "bench-timing: medians of $RUNS interleaved runs; load $(cut -d' ' -f1-3 /proc/loadavg)"
timed "exit_sig" 1000 "$PROG/exit_sig"
timed "ulimit -Sn 4 heap_mix" 5000 sh -c 'ulimit -Sn 4; exec "$0"' "$PROG/heap_mix"
timed "ulimit -n 4 heap_mix" 5000 sh -c 'ulimit -n 4; exec "$0"' "$PROG/heap_mix"
timed "fork_timer 20 ms" 2000 timeout 60 "$BIN/edges/fork_timer" 20 300

# frag_heap: "CALLS NS_IN_MALLINFO2 NS_ALIVE" per run from the meter.
: >"$OUT/share"
for i in $(seq "$RUNS"); do
    rm -f "$OUT/meter"
    mkdir -p "$OUT/fh"
    env LD_PRELOAD="$METER $LIB" MALLINFO_METER_OUTPUT="$OUT/meter" MEMSIM_OUTPUT="$OUT/fh" \
        "$PROG/frag_heap" 2000000 >/dev/null 2>&1
    awk '$3 > 0 {printf "%.1f\n", 100 * $2 / $3; exit}' "$OUT/meter" >>"$OUT/share" 2>/dev/null
    rm -rf "$OUT/fh"
done
share=$(median <"$OUT/share")
printf '%-22s %s%% of its time in mallinfo2 (runs: %s)  bound 2%%: %s\n' "frag_heap" "$share" \
    "$(tr '\n' ' ' <"$OUT/share" | sed 's/ $//')" "$(verdict "$share" 2)"

# The sample interval: MEMSIM_SAMPLE_MS=20 over a 1 s hold.
: >"$OUT/samples"
for i in $(seq "$RUNS"); do
    mkdir -p "$OUT/s"
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT/s" MEMSIM_SAMPLE_MS=20 MEMSIM_COMPRESS=0 \
        "$PROG/touch_mb" 1 1000 >/dev/null 2>&1
    cat "$OUT"/s/memsim.touch_mb.*.jsonl | grep -c '"ev":"sample"' >>"$OUT/samples"
    rm -rf "$OUT/s"
done
n=$(median <"$OUT/samples")
printf '%-22s %s samples in a 1 s hold at 20 ms (runs: %s)  bound 40-66: %s\n' "sample interval" "$n" \
    "$(tr '\n' ' ' <"$OUT/samples" | sed 's/ $//')" \
    "$([ "$n" -ge 40 ] 2>/dev/null && [ "$n" -le 66 ] && echo ok || echo OVER)"

# memsim run's budgets: resources.json's wall_s, and the polls of
# rss.jsonl over the budget.
: >"$OUT/rw" && : >"$OUT/rp" && : >"$OUT/ww"
for i in $(seq "$RUNS"); do
    rm -rf "$OUT/ra" "$OUT/wa"
    "$BIN/memsim" run --rss-mb 50 --out "$OUT/ra" "$PROG/touch_mb" forever >/dev/null 2>&1
    "$BIN/jsonq" wall_s <"$OUT/ra/resources.json" >>"$OUT/rw" 2>/dev/null
    awk -F'"tree_rss_bytes": ' '{split($2, a, ","); if (a[1] + 0 >= 50 * 1048576) n++} END {print n + 0}' \
        "$OUT/ra/rss.jsonl" >>"$OUT/rp"
    "$BIN/memsim" run --wall-s 0.5 --out "$OUT/wa" sleep 5 >/dev/null 2>&1
    "$BIN/jsonq" wall_s <"$OUT/wa/resources.json" >>"$OUT/ww" 2>/dev/null
done
w=$(median <"$OUT/rw") p=$(sort -n "$OUT/rp" | tail -n 1) ww=$(median <"$OUT/ww")
printf '%-22s stopped after %s s (bound 2 s: %s), at most %s polls over (bound 3: %s)\n' \
    "run --rss-mb 50" "$w" "$(verdict "$w" 2)" "$p" "$(verdict "$p" 3)"
printf '%-22s ended after %s s (bound 3 s: %s)\n' "run --wall-s 0.5" "$ww" "$(verdict "$ww" 3)"
