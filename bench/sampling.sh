#!/bin/sh
# bench-sampling: what a sampled trace (MEMSIM_SAMPLE_BYTES) costs and how
# close its estimates come to the full trace's figures, measured in the
# same run.
#
#   sh bench/sampling.sh [BUILD]
#
# Workloads: alloc_heavy and churn (bench/programs/) at 1 and 4 threads,
# Debian's python3 (PYTHONMALLOC=malloc), perl, lua5.4 and sqlite3 on the
# scripts and inputs of bench/workloads.sh, and gcc's cc1 (gcc -O2 -c of
# a generated C file, bench/study/gen_c.sh).  For each:
#   cost      REPS interleaved runs natively, sampled, fully traced and
#             under heaptrack (when installed), watched by bench-watch:
#             medians of the CPU seconds of every process (the program,
#             memsim-recorder, heaptrack's interpreter), and the sampled
#             run's overhead over native in CPU and wall time; the
#             sampled trace's bytes per minute of the run
#   accuracy  the full trace's peak heap and top 10 functions by
#             allocated bytes and by bytes live at the peak (memsim-analyze
#             --json), against the sampled trace's estimates of the same:
#             the peak heap's error, and how many of the 10 are within
#             10% (a function the sampled trace did not see counts as
#             missed), with the worst error, and how many are within 2
#             of their standard errors (the sampling's variance: what is
#             not, is a bias), how many are under the resolution (fewer
#             than 400 intervals of bytes) and how many of the rest are
#             within 10%; the peak's error in its standard errors
#
# Environment:
#   SAMPLE_BYTES=N       the interval (512K, memsim run --sample's)
#   REPS=N               timed runs of each (3; 1 with BENCH_QUICK=1)
#   BENCH_QUICK=1        small sizes: a smoke run, no measure of targets
#   BENCH_WORKLOADS="…"  a subset, by name (default: all eight)
#   BENCH_HEAPTRACK=0    leave heaptrack out (it takes most of the time)
#   BENCH_KEEP=DIR       keep each workload's two analyses in DIR
#                        (NAME-THREADS.full.json, NAME-THREADS.sampled.json)
#   BENCH_COST_ONLY=1    the cost alone: no full trace, analysis or
#                        heaptrack; REPS interleaved native and sampled
#                        runs, the trace's size from the last sampled one
#                        (accuracy columns and verdicts "-")
#
# Last, a verdict per workload: PASS or FAIL for each target (top 10 by
# allocated bytes, top 10 by bytes live at the peak, peak heap, CPU,
# trace size); with REPS=0 the cost is not measured and its verdict is
# "-".
set -eu
BUILD=${1:-build}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then REPS=${REPS:-1}; else REPS=${REPS:-3}; fi
SAMPLE=${SAMPLE_BYTES:-512K}
case $SAMPLE in
*[kK]) INTERVAL=$((${SAMPLE%?} * 1024)) ;;
*[mM]) INTERVAL=$((${SAMPLE%?} * 1048576)) ;;
*) INTERVAL=$SAMPLE ;;
esac
WORKLOADS=${BENCH_WORKLOADS:-alloc_heavy churn python perl lua sqlite cc1}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$BUILD" && pwd)
LIB=$BIN/libmemsim.so
WATCH=$BIN/bench-watch
A=$BIN/memsim-analyze
J=$BIN/jsonq
if [ "$QUICK" = 1 ]; then
    AH_EVENTS=400000 CH_EVENTS=200000 PY_N=5000 PERL_WORDS=60000 LUA_N=15000 SQL_ROWS=3000 GEN_FUNCS=200
else
    AH_EVENTS=36000000 CH_EVENTS=7000000 PY_N=480000 PERL_WORDS=3000000 LUA_N=1000000 SQL_ROWS=240000 GEN_FUNCS=1500
fi
for f in "$LIB" "$BIN/memsim-recorder" "$WATCH" "$A" "$J" "$BIN/programs/alloc_heavy" "$BIN/programs/churn"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "bench-sampling: $f is missing (make bench builds it)" >&2; exit 1; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-sampling.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
IN=$OUT/inputs
PY=/usr/bin/python3
[ -x "$PY" ] || PY=
PERL=$(command -v perl || true)
LUA=$(command -v lua5.4 || true)
SQLITE=$(command -v sqlite3 || true)
GCC=$(command -v gcc || true)
HEAPTRACK=
COST_ONLY=${BENCH_COST_ONLY:-0}
[ "${BENCH_HEAPTRACK:-1}" = 0 ] || [ "$COST_ONLY" = 1 ] || HEAPTRACK=$(command -v heaptrack || true)

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
echo "bench-sampling: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, memsim $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?'), interval $SAMPLE, medians of $REPS"
echo "load average at start: $(load)"
sh "$HERE/inputs.sh" "$IN" "$PERL_WORDS" "$SQL_ROWS" >/dev/null
[ -z "$GCC" ] || sh "$HERE/study/gen_c.sh" "$IN/big.c" "$GEN_FUNCS"

# run MODE NAME THREADS DIR: one watched run (bench-watch -i 20) of a
# workload natively, sampled, fully traced or under heaptrack; traces
# into DIR, bench-watch's report into DIR/watch.
run() {
    r_mode=$1 r_name=$2 r_t=$3 r_dir=$4
    rm -rf "$r_dir"
    mkdir -p "$r_dir"
    wenv=
    case $r_name in
    alloc_heavy) set -- "$BIN/programs/alloc_heavy" "$r_t" $((AH_EVENTS / 2 / r_t)) ;;
    churn) set -- "$BIN/programs/churn" "$r_t" $((CH_EVENTS / r_t)) ;;
    python) wenv="PYTHONMALLOC=malloc PYTHONHASHSEED=0" && set -- "$PY" -s "$HERE/real/churn.py" "$PY_N" ;;
    perl) wenv="PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0" && set -- "$PERL" "$HERE/real/words.pl" "$IN/words.txt" ;;
    lua) set -- "$LUA" "$HERE/real/tables.lua" "$LUA_N" ;;
    sqlite) set -- "$SQLITE" :memory: ".read '$IN/inserts.sql'" ;;
    cc1) set -- "$GCC" -O2 -c "$IN/big.c" -o "$r_dir/big.o" ;;
    esac
    # shellcheck disable=SC2086 # wenv: words without blanks
    case $r_mode in
    native) "$WATCH" -i 20 -o "$r_dir/watch" env $wenv "$@" ;;
    sampled) "$WATCH" -i 20 -o "$r_dir/watch" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$r_dir" MEMSIM_SAMPLE_BYTES="$SAMPLE" $wenv "$@" ;;
    full) "$WATCH" -i 20 -o "$r_dir/watch" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$r_dir" $wenv "$@" ;;
    heaptrack) "$WATCH" -i 20 -o "$r_dir/watch" env $wenv "$HEAPTRACK" -o "$r_dir/ht" "$@" ;;
    esac </dev/null >"$r_dir/stdout" 2>"$r_dir/stderr" || true
}

key() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }
cpu() { awk '$1 == "proc" { s += $5 } END { printf "%.3f\n", s }' "$1"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# trace DIR: the trace of the workload's program in DIR (cc1 for gcc; the
# largest otherwise: a script's interpreter rather than its helpers).
trace() {
    case $name in
    cc1) ls "$1"/memsim.cc1.*.jsonl* 2>/dev/null | head -n 1 ;;
    *) ls -S "$1"/memsim.*.jsonl* 2>/dev/null | head -n 1 ;;
    esac
}

# functions JSON LIST N: "bytes<TAB>se<TAB>function" of the first N
# functions (se 0 in a full trace).
functions() {
    i=0
    while [ "$i" -lt "$3" ]; do
        f=$("$J" "functions.$2.$i.function" <"$1" 2>/dev/null) || break
        field=allocated_bytes
        [ "$2" = by_peak ] && field=peak_bytes
        printf '%s\t%s\t%s\n' "$("$J" "functions.$2.$i.$field" <"$1")" \
            "$("$J" "functions.$2.$i.${field}_se" <"$1" 2>/dev/null || echo 0)" "$f"
        i=$((i + 1))
    done
}

# accuracy LIST: "within worst% in2se resolved" of the full trace's top
# 10 in LIST against the sampled trace's figures for the same functions:
# how many within 10%, the worst error, how many within 2 of their
# standard errors (what the sampling's variance alone allows: the rest
# is a bias, or a function the sample missed), and of those with at
# least 400 intervals of bytes, how many within 10% ("ok/n").  An
# estimate of B bytes of allocations smaller than the interval T has a
# standard error of about sqrt(T B): within 10% at 2 standard errors
# needs B of 400 T or more; under that, a miss of 10% is the sampling's
# resolution, not a fault.
accuracy() {
    functions "$OUT/full.json" "$1" 10 >"$OUT/truth"
    functions "$OUT/sampled.json" "$1" 1000 >"$OUT/est"
    awk -F'\t' -v T="$INTERVAL" 'NR == FNR { est[$3] = $1; se[$3] = $2; next }
        { n++; e = ($3 in est) ? (est[$3] - $1) / $1 : -1; a = e < 0 ? -e : e
          if (a <= 0.10) ok++; if (a > worst) worst = a
          if (($3 in est) && (est[$3] - $1) ^ 2 <= 4 * se[$3] ^ 2) z2++
          if ($1 >= 400 * T) { rn++; if (a <= 0.10) rok++ } }
        END { printf "%d/%d %.0f%% %d/%d %d/%d\n", ok, n, 100 * worst, z2, n, rok, rn }' "$OUT/est" "$OUT/truth"
}

ROWS=$OUT/rows
: >"$ROWS"
# cost_only: bench()'s cost alone (BENCH_COST_ONLY=1): REPS interleaved
# native and sampled runs; the trace's size and duration from the last
# sampled run; "-" for the full trace, heaptrack and accuracy.
cost_only() {
    cn="" cs="" wn="" ws=""
    for r in $(seq "$REPS"); do
        run native "$name" "$t" "$OUT/r"
        cn="$cn $(cpu "$OUT/r/watch")" wn="$wn $(key "$OUT/r/watch" wall_s)"
        run sampled "$name" "$t" "$OUT/s"
        cs="$cs $(cpu "$OUT/s/watch")" ws="$ws $(key "$OUT/s/watch" wall_s)"
    done
    secs=$(key "$OUT/s/watch" wall_s)
    tbytes=0
    for f in "$OUT"/s/memsim.*.jsonl*; do [ -e "$f" ] && tbytes=$((tbytes + $(wc -c <"$f"))); done
    echo "$name $t $(echo "$cn" | median) $(echo "$cs" | median) - -" \
        "$(echo "$wn" | median) $(echo "$ws" | median) $secs $tbytes 0 0 0 - - - - - - - -" >>"$ROWS"
    rm -rf "$OUT/s" "$OUT/r"
    echo " done" >&2
}

bench() {
    name=$1 t=$2
    printf '  %-12s %d thread(s) ...' "$name" "$t" >&2
    if [ "$COST_ONLY" = 1 ]; then
        cost_only
        return
    fi
    # Accuracy: one full and one sampled trace, analyzed.
    run full "$name" "$t" "$OUT/f"
    run sampled "$name" "$t" "$OUT/s"
    "$A" --json --no-replay --sites 1000 "$(trace "$OUT/f")" >"$OUT/full.json" 2>/dev/null || true
    "$A" --json --sites 1000 "$(trace "$OUT/s")" >"$OUT/sampled.json" 2>/dev/null || true
    pf=$("$J" summary.peak_heap_bytes <"$OUT/full.json" 2>/dev/null || echo 0)
    ps=$("$J" summary.peak_heap_bytes <"$OUT/sampled.json" 2>/dev/null || echo 0)
    pse=$("$J" summary.sampled.peak_heap_bytes_se <"$OUT/sampled.json" 2>/dev/null || echo 0)
    acc_a=$(accuracy by_allocated)
    acc_p=$(accuracy by_peak)
    secs=$(key "$OUT/s/watch" wall_s)
    if [ -n "${BENCH_KEEP:-}" ]; then
        mkdir -p "$BENCH_KEEP"
        cp "$OUT/full.json" "$BENCH_KEEP/$name-$t.full.json"
        cp "$OUT/sampled.json" "$BENCH_KEEP/$name-$t.sampled.json"
    fi
    tbytes=0
    for f in "$OUT"/s/memsim.*.jsonl*; do [ -e "$f" ] && tbytes=$((tbytes + $(wc -c <"$f"))); done
    # Cost: interleaved.
    cn="" cs="" cf="" ch="" wn="" ws=""
    for r in $(seq "$REPS"); do
        run native "$name" "$t" "$OUT/r"
        cn="$cn $(cpu "$OUT/r/watch")" wn="$wn $(key "$OUT/r/watch" wall_s)"
        run sampled "$name" "$t" "$OUT/r"
        cs="$cs $(cpu "$OUT/r/watch")" ws="$ws $(key "$OUT/r/watch" wall_s)"
        run full "$name" "$t" "$OUT/r"
        cf="$cf $(cpu "$OUT/r/watch")"
        if [ -n "$HEAPTRACK" ]; then
            run heaptrack "$name" "$t" "$OUT/r"
            ch="$ch $(cpu "$OUT/r/watch")"
        fi
    done
    echo "$name $t $(echo "$cn" | median) $(echo "$cs" | median) $(echo "$cf" | median) $(echo "$ch" | median)" \
        "$(echo "$wn" | median) $(echo "$ws" | median) $secs $tbytes $pf $ps $pse $acc_a $acc_p" >>"$ROWS"
    rm -rf "$OUT/f" "$OUT/s" "$OUT/r"
    echo " done" >&2
}

for w in $WORKLOADS; do
    case $w in
    alloc_heavy | churn) bench "$w" 1 && bench "$w" 4 ;;
    python) [ -n "$PY" ] && bench python 1 ;;
    perl) [ -n "$PERL" ] && bench perl 1 ;;
    lua) [ -n "$LUA" ] && bench lua 1 ;;
    sqlite) [ -n "$SQLITE" ] && bench sqlite 1 ;;
    cc1) [ -n "$GCC" ] && bench cc1 1 ;;
    *) echo "bench-sampling: $w: no such workload" >&2 ;;
    esac
done

echo
awk -v quick="$QUICK" -v costonly="$COST_ONLY" '
function pct(a, b) { return (b > 0 && a != "-") ? sprintf("%+.1f%%", 100 * (a / b - 1)) : "-" }
BEGIN {
    printf "%-12s %3s %7s %7s %7s %7s %8s %8s %8s %7s %9s %9s %9s\n", "workload", "thr", "native", "sampled",
        "full", "heaptr", "CPU", "wall", "trace", "peak", "peak", "top10", "top10"
    printf "%-12s %3s %7s %7s %7s %7s %8s %8s %8s %7s %9s %9s %9s\n", "", "", "CPU s", "CPU s", "CPU s", "CPU s",
        "sampled", "sampled", "KB/min", "error", "+-1 se", "alloc", "peak"
}
{
    name = $1; t = $2; n = $3; s = $4; f = $5; h = $6; wn = $7; ws = $8; secs = $9; tb = $10
    pf = $11; ps = $12; pse = $13
    kbmin = (secs > 0) ? tb / 1000 / (secs / 60) : 0
    perr = (pf > 0) ? sprintf("%+.1f%%", 100 * (ps - pf) / pf) : "-"
    rse = (pf > 0) ? sprintf("%.1f%%", 100 * pse / pf) : "-"
    printf "%-12s %3d %7.2f %7.2f %7s %7s %8s %8s %8.0f %7s %9s %4s %4s %4s %4s\n", name, t, n, s, f, h,
        pct(s, n), pct(ws, wn), kbmin, perr, rse, $14, $15, $18, $19
    rows++
    if (n > 0 && s / n <= 1.05) cheap++
    if (kbmin < 1000) small++
    split($14, a, "/"); split($18, b, "/")
    if (a[1] == a[2] && b[1] == b[2]) top++
    if (pf > 0 && (ps - pf) / pf <= 0.05 && (pf - ps) / pf <= 0.05) peak++
}
END {
    print ""
    print "CPU: seconds of every process of a run (program, memsim-recorder, heaptrack_interpret), medians;"
    print "CPU/wall sampled: the sampled run over native; trace: the sampled trace'"'"'s bytes a minute of the run;"
    print "peak error: the sampled peak heap against the full trace'"'"'s; top10: of the full trace'"'"'s top 10"
    print "functions by allocated bytes and by bytes live at the peak, how many the sampled trace puts within"
    print "10%, and the worst error"
    printf "targets: sampled CPU within 5%% of native: %d of %d rows; trace under 1 MB a minute: %d of %d;\n", cheap, rows, small, rows
    if (costonly != 1)
        printf "         top 10 all within 10%% (both lists): %d of %d; peak heap within 5%%: %d of %d\n", top, rows, peak, rows
    else
        print "BENCH_COST_ONLY=1: no full trace: no measure of the accuracy"
    if (quick == 1) print "BENCH_QUICK=1: small sizes: no measure of the targets"
}' "$ROWS"
echo
echo "verdicts (top 10 alloc / top 10 peak: all 10 within 10%; peak heap within 5%; CPU within 5% of native; trace under 1 MB a minute):"
echo "  (under the resolution: a function of fewer than 400 intervals of bytes ($((400 * INTERVAL / 1048576)) MiB), whose estimate's"
echo "  standard error is over 5%: within 10% at 2 standard errors is out of the sampling's reach; the"
echo "  target stays all 10: such a miss is a FAIL, its cause the interval)"
awk '
function v(ok) { return ok ? "PASS" : "FAIL" }
{
    name = $1; t = $2; n = $3; s = $4; secs = $9; tb = $10; pf = $11; ps = $12; pse = $13
    split($14, a, "/"); split($18, b, "/")
    perr = (pf > 0) ? (ps - pf) / pf : 1
    pz = (pse > 0) ? (ps - pf) / pse : 0
    cpu = (n == "-" || n <= 0) ? "-" : sprintf("%s (%+.1f%%)", v(s / n <= 1.05), 100 * (s / n - 1))
    kbmin = (secs > 0) ? tb / 1000 / (secs / 60) : 0
    split($17, ra, "/"); split($21, rb, "/")
    if ($14 == "-") {
        printf "  %-11s %d thr: CPU %s  trace %s (%.0f KB/min)\n", name, t, cpu, v(kbmin < 1000), kbmin
        next
    }
    printf "  %-11s %d thr: top10 alloc %s (%s, worst %s, %s in 2 se, %d under the resolution, %s of the rest within 10%%)  top10 peak %s (%s, worst %s, %s in 2 se, %d under the resolution, %s of the rest within 10%%)  peak %s (%+.1f%%, %+.1f se, se %.1f%%)  CPU %s  trace %s (%.0f KB/min)\n",
        name, t, v(a[1] == a[2] && a[2] > 0), $14, $15, $16, a[2] - ra[2], $17,
        v(b[1] == b[2] && b[2] > 0), $18, $19, $20, b[2] - rb[2], $21,
        v(perr <= 0.05 && perr >= -0.05), 100 * perr, pz, (pf > 0) ? 100 * pse / pf : 0, cpu, v(kbmin < 1000), kbmin
}' "$ROWS"
echo "load average at the end: $(load)"
