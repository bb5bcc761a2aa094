#!/bin/sh
# bench-compare: memsim against the heap profilers people use today
# measured in the same run, written into docs/performance.md
# (between its compare markers).
#
#   sh bench/compare.sh [BUILD]          (make compare)
#
# Workloads: bench/study.sh's real programs (bench/study/workloads.sh)
# and bench/programs' alloc_heavy and churn at 1 and 4 threads, at the
# study's sizes.  Tools: native, memsim (the default: stacks, compressed
# trace), heaptrack, and on the workloads whose native run is shorter than
# COMPARE_VALGRIND_MAX_S, valgrind's massif and DHAT.
#
# Per workload:
#   1. natively under libbench-count.so, watched: heap events per process,
#      the output to compare with, the tree's peak RSS;
#   2. one watched run under each tool: peak RSS (every process of the
#      run, summed), trace bytes; the tool's figures: allocation calls,
#      peak heap, leaked bytes, temporary allocations (memsim-analyze
#      --json --no-replay; heaptrack_print without suppressions; DHAT's
#      totals), of the first process (heaptrack and valgrind trace no
#      children: for gcc and make the driver and make itself);
#   3. the analyses, median of AREPS: memsim-analyze (default: every
#      strategy replayed) and --no-replay on memsim's trace directory,
#      heaptrack_print on heaptrack's recording;
#   4. REPS timed runs, interleaved (native, memsim, heaptrack[, massif,
#      DHAT]); medians.
#
# Environment:
#   REPS=N                    timed runs of each tool (5; 1 with COMPARE_QUICK=1)
#   AREPS=N                   runs of each analysis (3; 1 quick)
#   COMPARE_QUICK=1           the study's short sizes, once: a smoke run, no measure
#   COMPARE_WORKLOADS="…"     a subset (default: all)
#   COMPARE_VALGRIND_MAX_S=S  massif and DHAT on workloads shorter natively (2)
#   COMPARE_DOC=FILE          the document (docs/performance.md)
#   TMPDIR                    scratch: traces and recordings of one workload at a time
set -eu
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=$(cd "$BUILD" && pwd)
LIB=$BIN/libmemsim.so
ANALYZE=$BIN/memsim-analyze
JSONQ=$BIN/jsonq
WATCH=$BIN/bench-watch
COUNT=$BIN/libbench-count.so
QUICK=${COMPARE_QUICK:-0}
if [ "$QUICK" = 1 ]; then REPS=${REPS:-1} AREPS=${AREPS:-1}; else REPS=${REPS:-5} AREPS=${AREPS:-3}; fi
VG_MAX_S=${COMPARE_VALGRIND_MAX_S:-2}
DOC=${COMPARE_DOC:-$TOP/docs/performance.md}
WORKLOADS=${COMPARE_WORKLOADS:-alloc_heavy churn python python-malloc perl sqlite gcc xz lua git make}
POLL_MS=20

for f in "$LIB" "$BIN/memsim-recorder" "$ANALYZE" "$JSONQ" "$WATCH" "$COUNT"; do
    [ -f "$f" ] || { echo "bench-compare: $f is missing (make compare builds it)" >&2; exit 1; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-compare.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
IN=$OUT/inputs
NOTES=$OUT/notes
ROWS=$OUT/rows
: >"$NOTES"
: >"$ROWS"
note() { echo "$*" >>"$NOTES"; echo "bench-compare: $*" >&2; }

. "$HERE/study/workloads.sh"
. "$HERE/splice.sh"
workloads_sizes "$QUICK"
workloads_programs
HEAPTRACK=$(need heaptrack heaptrack)
VALGRIND=$(need valgrind valgrind)
[ -n "$HEAPTRACK" ] || note "heaptrack is missing: its columns are -"
[ -n "$VALGRIND" ] || note "valgrind is missing: massif's and DHAT's columns are -"
workloads_inputs

load() { cut -d' ' -f1-3 /proc/loadavg; }
# Other work on the machine: runnable tasks of /proc/loadavg, 10 looks
# over a second (awk itself is one).
busy=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    busy=$((busy + $(awk '{split($4, r, "/"); print (r[1] > 1) ? 1 : 0}' /proc/loadavg)))
    sleep 0.1
done
LOAD0=$(load)
[ "$busy" -le 5 ] ||
    note "other processes were runnable in $busy of 10 looks at the start (load average $LOAD0 on $(nproc) cores): the times are disturbed"
echo "bench-compare: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $LOAD0, medians of $REPS" >&2

# ---------------------------------------------------------------- runs

# run TOOL NAME THREADS REPORT [bench-watch options]: one run; its output
# in $OUT/stdout, bench-watch's report in REPORT.  The workload's
# environment is exported in a subshell, so that the command bench-watch
# starts is the program itself, or env that execs it (its pid is the
# program's).
run() {
    r_tool=$1 r_name=$2 r_t=$3 r_rep=$4
    shift 4
    workload_cmd "$r_name" "$r_t" || return 1
    (
        # shellcheck disable=SC2086 # ENVV: words without blanks
        [ -z "$ENVV" ] || export $ENVV
        case $r_tool in
        native) eval "\"$WATCH\" $* -o \"$r_rep\" $CMD" ;;
        # through env, so that bench-watch itself is neither counted nor
        # traced (env execs the program: the same pid; memsim traces env too)
        count) eval "\"$WATCH\" $* -o \"$r_rep\" env LD_PRELOAD=\"$COUNT\" BENCH_COUNT_OUTPUT=\"$OUT/count\" $CMD" ;;
        memsim) mkdir -p "$OUT/m"
            eval "\"$WATCH\" $* -o \"$r_rep\" env LD_PRELOAD=\"$LIB\" MEMSIM_OUTPUT=\"$OUT/m\" $CMD" ;;
        heaptrack) mkdir -p "$OUT/ht"
            eval "\"$WATCH\" $* -o \"$r_rep\" \"$HEAPTRACK\" -o \"$OUT/ht/ht\" $CMD" ;;
        massif) mkdir -p "$OUT/vg"
            eval "\"$WATCH\" $* -o \"$r_rep\" \"$VALGRIND\" --tool=massif --massif-out-file=\"$OUT/vg/massif.%p\" $CMD" ;;
        dhat) mkdir -p "$OUT/vg"
            eval "\"$WATCH\" $* -o \"$r_rep\" \"$VALGRIND\" --tool=dhat --dhat-out-file=\"$OUT/vg/dhat.%p\" $CMD" ;;
        esac
    ) </dev/null >"$OUT/stdout" 2>"$OUT/stderr" || true
}

clean() { rm -rf "$OUT/m" "$OUT/ht" "$OUT/vg"; }
key() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }
# rss REPORT: the peak RSS of every process of the run, summed (KiB)
rss() { awk '$1 == "proc" {s += $4} END {print s + 0}' "$1"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
bytes() { n=0; for f in "$@"; do [ -e "$f" ] && n=$((n + $(wc -c <"$f"))); done; echo "$n"; }
# si VALUE: heaptrack_print's "2.11M" in bytes (it prints three digits, SI units)
si() { echo "$1" | awk '{v = $1 + 0; u = substr($1, length($1));
    if (u == "K") v *= 1e3; if (u == "M") v *= 1e6; if (u == "G") v *= 1e9; printf "%d", v}'; }
# timed CMD...: the wall seconds of one run of CMD (bench-watch)
timed() { "$WATCH" -o "$OUT/t" "$@" >/dev/null 2>&1 </dev/null || true; key "$OUT/t" wall_s; }

# compare NAME THREADS: one workload; appends its row to $ROWS.
compare() {
    name=$1 t=$2
    workload_cmd "$name" "$t" || { note "$name: skipped (its program is missing)"; return; }
    printf '  %-14s %d thread(s) ...' "$name" "$t" >&2
    clean
    rm -f "$OUT/count"
    run count "$name" "$t" "$OUT/n0" -i "$POLL_MS"
    if [ "$(key "$OUT/n0" status)" != 0 ]; then
        note "$name ($t): exits with status $(key "$OUT/n0" status) natively: skipped ($(head -c 200 "$OUT/stderr"))"
        echo " failed" >&2
        return
    fi
    cp "$OUT/stdout" "$OUT/expected"
    pid=$(key "$OUT/n0" command_pid)
    ev_all=$(awk '{s += $2} END {print s + 0}' "$OUT/count")
    ev_root=$(awk -v p="$pid" '$1 == p {s += $2} END {print s + 0}' "$OUT/count")
    nprocs=$(wc -l <"$OUT/count")
    n_wall=$(key "$OUT/n0" wall_s)
    n_rss=$(rss "$OUT/n0")
    vg=0
    [ -n "$VALGRIND" ] && awk -v a="$n_wall" -v b="$VG_MAX_S" 'BEGIN { exit !(a < b) }' && vg=1

    # memsim, watched; its figures (the first process), the analyses' times
    run memsim "$name" "$t" "$OUT/m0" -i "$POLL_MS"
    m_rss=$(rss "$OUT/m0")
    cmp -s "$OUT/stdout" "$OUT/expected" || note "$name ($t): prints something else under memsim than natively"
    mpid=$(key "$OUT/m0" command_pid)
    m_bytes=$(bytes "$OUT"/m/memsim.*.jsonl*)
    # the program's trace: its pid's, but env's (which exec'd it)
    mt=/dev/null
    for f in "$OUT"/m/memsim.*."$mpid".*.jsonl*; do
        case ${f##*/} in memsim.env.*) ;; *) [ -e "$f" ] && mt=$f ;; esac
    done
    "$ANALYZE" --json --no-replay --sites 0 "$mt" >"$OUT/m.json" 2>/dev/null || true
    m_calls=$("$JSONQ" summary.allocations <"$OUT/m.json" 2>/dev/null || echo -)
    m_peak=$("$JSONQ" summary.peak_heap_bytes <"$OUT/m.json" 2>/dev/null || echo -)
    m_leak=$("$JSONQ" summary.leaked_bytes <"$OUT/m.json" 2>/dev/null || echo -)
    m_temp=$("$JSONQ" summary.temporary_allocations <"$OUT/m.json" 2>/dev/null || echo -)
    m_frees=$("$JSONQ" summary.frees <"$OUT/m.json" 2>/dev/null || echo -)
    m_ev=-
    [ "$m_calls" = - ] || [ "$m_frees" = - ] || m_ev=$((m_calls + m_frees))
    a_def="" a_nr=""
    for r in $(seq "$AREPS"); do
        a_def="$a_def $(timed "$ANALYZE" "$OUT/m")"
        a_nr="$a_nr $(timed "$ANALYZE" --no-replay "$OUT/m")"
    done
    a_def=$(echo "$a_def" | median)
    a_nr=$(echo "$a_nr" | median)

    h_rss=- h_bytes=- h_calls=- h_peak=- h_leak=- h_temp=- a_ht=-
    if [ -n "$HEAPTRACK" ]; then
        run heaptrack "$name" "$t" "$OUT/h0" -i "$POLL_MS"
        h_rss=$(rss "$OUT/h0")
        h_bytes=$(bytes "$OUT"/ht/ht.*)
        ht=$(ls "$OUT"/ht/ht.* 2>/dev/null | head -n 1)
        if [ -n "$ht" ]; then
            heaptrack_print --disable-builtin-suppressions --disable-embedded-suppressions "$ht" >"$OUT/ht.txt" 2>/dev/null || true
            h_calls=$(sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p' "$OUT/ht.txt")
            h_temp=$(sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p' "$OUT/ht.txt")
            h_peak=$(si "$(sed -n 's/^peak heap memory consumption: \(.*\)$/\1/p' "$OUT/ht.txt")")
            h_leak=$(si "$(sed -n 's/^total memory leaked: \(.*\)$/\1/p' "$OUT/ht.txt")")
            a_ht=""
            for r in $(seq "$AREPS"); do a_ht="$a_ht $(timed heaptrack_print "$ht")"; done
            a_ht=$(echo "$a_ht" | median)
        fi
    fi

    s_rss=- d_rss=- d_calls=- d_peak=- d_leak=-
    if [ "$vg" = 1 ]; then
        run massif "$name" "$t" "$OUT/s0" -i "$POLL_MS"
        s_rss=$(rss "$OUT/s0")
        s_peak=$(cat "$OUT"/vg/massif.* 2>/dev/null | awk -F= '$1 == "mem_heap_B" && $2 > m {m = $2} END {print m + 0}')
        run dhat "$name" "$t" "$OUT/d0" -i "$POLL_MS"
        d_rss=$(rss "$OUT/d0")
        # ==PID== Total:     1,234 bytes in 56 blocks; At t-gmax: …; At t-end: …
        d_calls=$(sed -n 's/^==[0-9]*== Total: *[0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$OUT/stderr" | head -n 1 | tr -d ,)
        d_peak=$(sed -n 's/^==[0-9]*== At t-gmax: *\([0-9,]*\) bytes.*/\1/p' "$OUT/stderr" | head -n 1 | tr -d ,)
        d_leak=$(sed -n 's/^==[0-9]*== At t-end: *\([0-9,]*\) bytes.*/\1/p' "$OUT/stderr" | head -n 1 | tr -d ,)
    else
        s_peak=-
    fi
    clean

    # Timed, interleaved.
    tn="" tm="" th="" ts="" td=""
    for r in $(seq "$REPS"); do
        run native "$name" "$t" "$OUT/r"
        tn="$tn $(key "$OUT/r" wall_s)"
        run memsim "$name" "$t" "$OUT/r"
        tm="$tm $(key "$OUT/r" wall_s)"
        clean
        if [ -n "$HEAPTRACK" ]; then
            run heaptrack "$name" "$t" "$OUT/r"
            th="$th $(key "$OUT/r" wall_s)"
            clean
        fi
        if [ "$vg" = 1 ]; then
            run massif "$name" "$t" "$OUT/r"
            ts="$ts $(key "$OUT/r" wall_s)"
            run dhat "$name" "$t" "$OUT/r"
            td="$td $(key "$OUT/r" wall_s)"
            clean
        fi
    done
    # start-up: each tool on /bin/true is measured once, below
    echo "$name $t $nprocs $ev_all $ev_root $(echo "$tn" | median) $(echo "$tm" | median) $(echo "$th" | median) $(echo "$ts" | median) $(echo "$td" | median) $n_rss $m_rss $h_rss $s_rss $d_rss $m_bytes $h_bytes $a_def $a_nr $a_ht $m_calls $h_calls $d_calls $m_peak $h_peak $s_peak $d_peak $m_leak $h_leak $d_leak $m_temp $h_temp $m_ev" >>"$ROWS"
    echo " done" >&2
}

# Start-up: each tool on /bin/true, median of 5 (a run's start-up share).
st() {
    v=""
    for r in 1 2 3 4 5; do v="$v $(timed "$@")"; done
    echo "$v" | median
}
mkdir -p "$OUT/m" "$OUT/ht" "$OUT/vg"
START_N=$(st /bin/true)
START_M=$(st env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT/m" /bin/true)
START_H=-
[ -z "$HEAPTRACK" ] || START_H=$(st "$HEAPTRACK" -o "$OUT/ht/ht" /bin/true)
START_V=-
[ -z "$VALGRIND" ] || START_V=$(st "$VALGRIND" --tool=dhat --dhat-out-file="$OUT/vg/d.%p" /bin/true)
clean
echo "bench-compare: start-up (/bin/true): native $START_N s, memsim $START_M s, heaptrack $START_H s, valgrind (DHAT) $START_V s" >&2

for w in $WORKLOADS; do
    case $w in
    alloc_heavy | churn) compare "$w" 1 && compare "$w" 4 ;;
    *) compare "$w" 1 ;;
    esac
done
[ -s "$ROWS" ] || { echo "bench-compare: no workload ran" >&2; exit 1; }

# ---------------------------------------------------------------- the doc

TABLES=$OUT/tables.md
awk -v sn="$START_N" -v sm="$START_M" -v sh="$START_H" -v sv="$START_V" -v quick="$QUICK" -v reps="$REPS" \
    -v areps="$AREPS" -v when="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cores="$(nproc)" -v load0="$LOAD0" \
    -v load1="$(load)" -v rev="$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    -v vgmax="$VG_MAX_S" -v notes="$NOTES" '
function r(a, b) { return (a == "-" || b == "-" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
function mib(k) { return (k == "-") ? "-" : sprintf("%.1f", k / 1024) }
function s3(x) { return (x == "" || x == "-") ? "-" : sprintf("%.3f", x) }
function n(x) { return (x == "" || x == "-") ? "-" : x }
function b(x) { return (x == "" || x == "-") ? "-" : (x >= 1e6 ? sprintf("%.2fM", x / 1e6) : (x >= 1e3 ? sprintf("%.1fK", x / 1e3) : x)) }
# d A M: A - M, signed ("-" when either is missing)
function d(a, m) { return (a == "" || a == "-" || m == "" || m == "-") ? "-" : sprintf("%+d", a - m) }
{ rows++; for (i = 1; i <= NF; i++) R[rows, i] = $i }
END {
    printf "<!-- written by bench/compare.sh (make compare): do not edit between these markers -->\n\n"
    printf "Measured %s at %s on %d cores, medians of %d interleaved runs (analyses: of %d); load average %s at the start, %s at the end%s.\n\n",
        when, rev, cores, reps, areps, load0, load1, quick == 1 ? " (COMPARE_QUICK=1: short sizes, start-up dominates: no measure of anything)" : ""
    printf "Start-up (each tool on `/bin/true`): native %s s, memsim %s s, heaptrack %s s, valgrind (DHAT) %s s.\n\n", s3(sn), s3(sm), s3(sh), s3(sv)
    print "**Wall time**, as a multiple of the native run (massif and DHAT on the workloads shorter than " vgmax " s natively):"
    print ""
    print "| workload | thr | procs | heap events | native s | memsim | heaptrack | massif | DHAT | start-up % memsim / heaptrack |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= rows; i++) {
        m = R[i,7]; h = R[i,8]
        printf "| %s | %d | %d | %s | %.3f | %s | %s | %s | %s | %s / %s |\n", R[i,1], R[i,2], R[i,3], b(R[i,4]), R[i,6],
            r(m, R[i,6]), r(h, R[i,6]), r(R[i,9], R[i,6]), r(R[i,10], R[i,6]),
            (m > 0) ? sprintf("%.1f", 100 * sm / m) : "-", (h != "-" && h > 0 && sh != "-") ? sprintf("%.1f", 100 * sh / h) : "-"
        if ((m > 0 && 100 * sm / m > 10) || (h != "-" && h > 0 && sh != "-" && 100 * sh / h > 10))
            short = short (short == "" ? "" : ", ") R[i,1] " (" R[i,2] ")"
    }
    if (short != "")
        printf "\nStart-up is over 10%% of memsim'"'"'s or heaptrack'"'"'s run on: %s; those ratios say more about start-up than about the tool.\n", short
    print ""
    print "**Peak RSS** (MiB, every process of the run summed: memsim with its recorder, heaptrack with its interpreter and zstd) and **bytes per heap event** of the trace (memsim: every process'"'"'s traces over every heap event; heaptrack: its recording over the first process'"'"'s events):"
    print ""
    print "| workload | thr | native | memsim | heaptrack | massif | DHAT | memsim B/ev | heaptrack B/ev |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= rows; i++)
        printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", R[i,1], R[i,2], mib(R[i,11]), mib(R[i,12]), mib(R[i,13]),
            mib(R[i,14]), mib(R[i,15]), r(R[i,16], R[i,4]), r(R[i,17], R[i,5])
    print ""
    print "**Analysis time** (s): `memsim-analyze DIR` (every strategy replayed), `memsim-analyze --no-replay DIR`, `heaptrack_print` on heaptrack'"'"'s recording of the same command:"
    print ""
    print "| workload | thr | memsim-analyze | --no-replay | heaptrack_print | heaptrack_print / --no-replay |"
    print "|---|---:|---:|---:|---:|---:|"
    for (i = 1; i <= rows; i++)
        printf "| %s | %d | %s | %s | %s | %s |\n", R[i,1], R[i,2], s3(R[i,18]), s3(R[i,19]), s3(R[i,20]), r(R[i,20], R[i,19])
    print ""
    print "**Agreement** on the first process (heaptrack and valgrind trace no children): memsim'"'"'s figure, then each other tool'"'"'s difference from it (heaptrack − memsim, massif − memsim, DHAT − memsim). Heap events: memsim'"'"'s allocations and frees, against the native count of the same calls (libbench-count.so, its run'"'"'s environment as large as memsim'"'"'s). Calls: malloc-family calls that return a block, reallocs included; temporaries as heaptrack defines them; heaptrack prints peak and leaks to three digits (±0.5%):"
    print ""
    print "| workload | thr | heap events | m − native | calls | h − m | D − m | peak heap | h − m | massif − m | D − m | leaked | h − m | D − m | temporaries | h − m |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= rows; i++)
        printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", R[i,1], R[i,2],
            n(R[i,33]), d(R[i,33], R[i,5]), n(R[i,21]), d(R[i,22], R[i,21]), d(R[i,23], R[i,21]),
            n(R[i,24]), d(R[i,25], R[i,24]), d(R[i,26], R[i,24]), d(R[i,27], R[i,24]),
            n(R[i,28]), d(R[i,29], R[i,28]), d(R[i,30], R[i,28]),
            n(R[i,31]), d(R[i,32], R[i,31])
    while ((getline line < notes) > 0) { if (!nn++) print ""; print "Note: " line "  " }
}' "$ROWS" >"$TABLES"

splice "$DOC" '<!-- compare:begin -->' '<!-- compare:end -->' "$TABLES"
cat "$TABLES"
echo "bench-compare: wrote $DOC" >&2
