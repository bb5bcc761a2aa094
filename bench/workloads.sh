#!/bin/sh
# bench-workloads: what tracing costs realistic programs at scale (issue
# 11), memsim against heaptrack, measured in the same run.
#
#   sh bench/workloads.sh [BUILD]
#
# Workloads (bench/README.md says what each does):
#   alloc_heavy, churn   bench/programs/, at 1 and 4 threads
#   python, perl, lua, sqlite
#                        Debian's python3 (PYTHONMALLOC=malloc), perl,
#                        lua5.4 and sqlite3, on scripts in bench/real/ and
#                        inputs bench/inputs.sh generates; single-threaded
#
# For each: a native run that counts the heap events (libbench-count.so),
# one watched run of each tool (bench-watch -i: every process's peak RSS
# and CPU; the trace's bytes and heap records), then REPS interleaved
# timed runs (native, memsim, heaptrack); medians.
# Prints per workload the wall times, the ratios to native, the overhead
# share ((memsim/native - 1) / (heaptrack/native - 1)), trace bytes per
# heap event of each tool, and the peak RSS of each tool's processes;
# checks that each tool's start-up (the tool on /bin/true) is under 10%
# of its run and that there are at least 5 million heap events.
#
# Environment:
#   REPS=N               timed runs of each (3; 1 with BENCH_QUICK=1)
#   BENCH_QUICK=1        small sizes, no 5M-event check: a smoke run
#   BENCH_WORKLOADS="…"  a subset, by name (default: all six)
#   BENCH_TIMEOUT_X=N    a traced run is stopped after N times the native
#                        run (20), or BENCH_TIMEOUT_MIN seconds (30) if more
#   TMPDIR               scratch: traces of up to 600 MB at once
set -eu
BUILD=${1:-build}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then REPS=${REPS:-1}; else REPS=${REPS:-3}; fi
WORKLOADS=${BENCH_WORKLOADS:-alloc_heavy churn python perl lua sqlite}
TIMEOUT_X=${BENCH_TIMEOUT_X:-20}
TIMEOUT_MIN=${BENCH_TIMEOUT_MIN:-30}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$BUILD" && pwd)
LIB=$BIN/libmemsim.so
WATCH=$BIN/bench-watch
COUNT=$BIN/libbench-count.so
POLL_MS=20

# Sizes.  alloc_heavy and churn: heap events in total over the threads
# (alloc_heavy makes two per operation, churn one), so 1 and 4 threads do
# the same work; the others: steps, words, rows.  The full
# sizes make at least 5 million heap events each (counts in bench/README.md).
if [ "$QUICK" = 1 ]; then
    AH_EVENTS=400000 CH_EVENTS=200000 PY_N=5000 PERL_WORDS=60000 LUA_N=15000 SQL_ROWS=3000
    MIN_EVENTS=0
else
    AH_EVENTS=36000000 CH_EVENTS=7000000 PY_N=480000 PERL_WORDS=3000000 LUA_N=1000000 SQL_ROWS=240000
    MIN_EVENTS=5000000
fi

for f in "$LIB" "$BIN/memsim-recorder" "$WATCH" "$COUNT" "$BIN/programs/alloc_heavy" "$BIN/programs/churn"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "bench-workloads: $f is missing (make bench builds it)" >&2; exit 1; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-workloads.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
IN=$OUT/inputs
NOTES=$OUT/notes
: >"$NOTES"
note() { echo "$*" >>"$NOTES"; }

# need CMD PKG: the path of CMD; as root, installs Debian's PKG when CMD
# is missing (as scripts/deps.sh does).  Empty when it cannot be had.
need() {
    p=$(command -v "$1" 2>/dev/null || true)
    if [ -z "$p" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench-workloads: installing Debian's $2 for the $1 workload" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "$2" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; } || true
        p=$(command -v "$1" 2>/dev/null || true)
    fi
    echo "$p"
}

# The system's python3, not a version manager's shim (pyenv's is a bash
# script that would be traced too).
PY=
if [ -x /usr/bin/python3 ]; then
    PY=/usr/bin/python3
else
    PY=$(need python3 python3)
    case $PY in
    */shims/*) PY=$("$PY" -c 'import sys; print(sys.executable)' 2>/dev/null || true) ;;
    esac
fi
PERL=$(need perl perl)
[ -n "$(need zstd zstd)" ] || {
    echo "bench-workloads: zstd is needed to count a compressed trace's records: apt-get install zstd" >&2
    exit 1
}
LUA=$(need lua5.4 lua5.4)
SQLITE=$(need sqlite3 sqlite3)
HEAPTRACK=$(command -v heaptrack 2>/dev/null || true)
[ -n "$HEAPTRACK" ] || note "heaptrack is not installed: apt-get install heaptrack for the comparison"

# ---------------------------------------------------------------- runs

# run MODE NAME THREADS REPORT [bench-watch options]: one run of a
# workload, natively, natively counting its heap events (into
# $OUT/count), under memsim or under heaptrack; its traces in $OUT, its
# output in $OUT/stdout, bench-watch's report in REPORT.
run() {
    r_mode=$1 r_name=$2 r_t=$3 r_rep=$4
    shift 4
    wopts="$*"
    wenv=
    case $r_name in
    alloc_heavy) set -- "$BIN/programs/alloc_heavy" "$r_t" $((AH_EVENTS / 2 / r_t)) ;;
    churn) set -- "$BIN/programs/churn" "$r_t" $((CH_EVENTS / r_t)) ;;
    # Hash seeds fixed: with random ones the count varies between runs
    # (perl's by a few dozen calls) and could not be checked.
    python) wenv="PYTHONMALLOC=malloc PYTHONHASHSEED=0" && set -- "$PY" -s "$HERE/real/churn.py" "$PY_N" ;;
    perl) wenv="PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0" && set -- "$PERL" "$HERE/real/words.pl" "$IN/words.txt" ;;
    lua) set -- "$LUA" "$HERE/real/tables.lua" "$LUA_N" ;;
    sqlite) set -- "$SQLITE" :memory: ".read '$IN/inserts.sql'" ;;
    true) set -- /bin/true ;;
    sleep) set -- sleep "$r_t" ;;
    esac
    # shellcheck disable=SC2086 # wopts and wenv are words without blanks
    case $r_mode in
    native) "$WATCH" $wopts -o "$r_rep" env $wenv "$@" ;;
    count) "$WATCH" $wopts -o "$r_rep" env LD_PRELOAD="$COUNT" BENCH_COUNT_OUTPUT="$OUT/count" $wenv "$@" ;;
    memsim) "$WATCH" $wopts -o "$r_rep" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" $wenv "$@" ;;
    heaptrack) "$WATCH" $wopts -o "$r_rep" env $wenv "$HEAPTRACK" -o "$OUT/ht" "$@" ;;
    esac </dev/null >"$OUT/stdout" 2>"$OUT/stderr" || true
}

clean() { rm -f "$OUT"/memsim.*.jsonl* "$OUT"/ht.*; }

# key REPORT KEY: a value of bench-watch's report.
key() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }

# procs REPORT FIELD NAMES: the sum of a column (4: peak RSS in KiB, 5:
# CPU s) over the processes of these names; "=cmd" is the command itself.
procs() {
    awk -v f="$2" -v names=" $3 " '
        $1 == "command_pid" { cmd = $2 }
        $1 == "proc" && (index(names, " " $3 " ") || (index(names, " =cmd ") && $2 == cmd)) { s += $f }
        END { print s + 0 }' "$1"
}

# The heap records of the memsim traces in $OUT: alloc, free and
# realloc, as JSON objects or the array records ["a" ["f" ["r" of the
# compact format; compressed traces are read through zstd or gzip.
events() {
    n=0
    for f in "$OUT"/memsim.*.jsonl*; do
        [ -e "$f" ] || continue
        case $f in
        *.zst) c=$(zstd -dc "$f" 2>/dev/null | LC_ALL=C grep -c -E '^(\{"ev":"(alloc|free|realloc)",|\["[afr]")' || true) ;;
        *.gz) c=$(gzip -dc "$f" 2>/dev/null | LC_ALL=C grep -c -E '^(\{"ev":"(alloc|free|realloc)",|\["[afr]")' || true) ;;
        *) c=$(LC_ALL=C grep -c -E '^(\{"ev":"(alloc|free|realloc)",|\["[afr]")' "$f" || true) ;;
        esac
        n=$((n + ${c:-0}))
    done
    echo "$n"
}

# bytes GLOB...: the size of these files together.
bytes() {
    n=0
    for f in "$@"; do
        [ -e "$f" ] && n=$((n + $(wc -c <"$f")))
    done
    echo "$n"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# ---------------------------------------------------------------- start

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
echo "bench-workloads: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, memsim $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?'), medians of $REPS"
LOAD0=$(load)
echo "load average at start: $LOAD0"
# Whether something else runs now: the load average still shows what ran
# in the last minute (bench-core, just before in make bench), so the
# runnable tasks of /proc/loadavg are sampled instead, 10 times over a
# second (awk itself is one of them).
busy=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    busy=$((busy + $(awk '{split($4, r, "/"); print (r[1] > 1) ? 1 : 0}' /proc/loadavg 2>/dev/null || echo 0)))
    sleep 0.1
done
[ "$busy" -le 5 ] ||
    note "other processes were runnable in $busy of 10 looks at the start (load average $LOAD0 on $(nproc) cores): the times are disturbed"
echo "generating inputs ($PERL_WORDS words for perl, $SQL_ROWS rows for sqlite3) ..."
sh "$HERE/inputs.sh" "$IN" "$PERL_WORDS" "$SQL_ROWS"

# Fixed start-up: each tool on /bin/true, median of 5.
st_n="" st_m="" st_h=""
for r in 1 2 3 4 5; do
    run native true 1 "$OUT/r"
    st_n="$st_n $(key "$OUT/r" wall_s)"
    run memsim true 1 "$OUT/r"
    st_m="$st_m $(key "$OUT/r" wall_s)"
    clean
    if [ -n "$HEAPTRACK" ]; then
        run heaptrack true 1 "$OUT/r"
        st_h="$st_h $(key "$OUT/r" wall_s)"
        clean
    fi
done
START_N=$(echo "$st_n" | median)
START_M=$(echo "$st_m" | median)
START_H=$(echo "$st_h" | median)
echo "start-up (/bin/true): native ${START_N} s, memsim ${START_M} s, heaptrack ${START_H} s"

ROWS=$OUT/rows
: >"$ROWS"

# bench NAME THREADS: measure one workload; appends its row to $ROWS.
bench() {
    name=$1 t=$2
    printf '  %-12s %d thread(s) ...' "$name" "$t" >&2
    # Natively, watched and counted: the heap events, the expected output,
    # the program's name, a time to scale the traced runs' limit by.
    rm -f "$OUT/count"
    run count "$name" "$t" "$OUT/n0" -i "$POLL_MS"
    ev=$(awk '{s += $2} END {print s + 0}' "$OUT/count" 2>/dev/null || echo 0)
    if [ "$(key "$OUT/n0" status)" != 0 ]; then
        note "$name ($t): exits with status $(key "$OUT/n0" status) natively: skipped ($(head -c 200 "$OUT/stderr"))"
        echo " failed" >&2
        return
    fi
    cp "$OUT/stdout" "$OUT/expected"
    comm=$(awk '$1 == "command_pid" {c = $2} $1 == "proc" && $2 == c {print $3}' "$OUT/n0")
    n_rss=$(procs "$OUT/n0" 4 "=cmd")
    n_cpu=$(procs "$OUT/n0" 5 "=cmd")
    cap=$(key "$OUT/n0" wall_s | awk -v x="$TIMEOUT_X" -v m="$TIMEOUT_MIN" '{c = $1 * x; print (c > m) ? c : m}')

    # Under memsim, watched: events, trace bytes, RSS and CPU of the
    # program and of its recorder.
    clean
    run memsim "$name" "$t" "$OUT/m0" -i "$POLL_MS" -t "$cap"
    m_to=$(key "$OUT/m0" timeout)
    m_ev=$(events)
    m_bytes=$(bytes "$OUT"/memsim.*.jsonl*)
    m_rss=$(procs "$OUT/m0" 4 "=cmd memsim-recorder")
    m_prss=$(procs "$OUT/m0" 4 "=cmd")
    m_pcpu=$(procs "$OUT/m0" 5 "=cmd")
    m_rcpu=$(procs "$OUT/m0" 5 "memsim-recorder")
    if [ "$m_to" = 1 ]; then
        note "$name ($t): memsim stopped after $cap s (${TIMEOUT_X}x native); its figures are of the part it ran"
    elif [ "$(key "$OUT/m0" status)" != 0 ]; then
        note "$name ($t): exits with status $(key "$OUT/m0" status) under memsim ($(head -c 200 "$OUT/stderr"))"
    elif ! cmp -s "$OUT/stdout" "$OUT/expected"; then
        note "$name ($t): prints something else under memsim than natively"
    fi
    clean

    h_to=0 h_bytes=- h_rss=- h_prss=- h_irss=- h_icpu=- h_pcpu=-
    if [ -n "$HEAPTRACK" ]; then
        run heaptrack "$name" "$t" "$OUT/h0" -i "$POLL_MS" -t "$cap"
        h_to=$(key "$OUT/h0" timeout)
        h_bytes=$(bytes "$OUT"/ht.*)
        h_rss=$(procs "$OUT/h0" 4 "$comm heaptrack_inter zstd")
        h_prss=$(procs "$OUT/h0" 4 "$comm")
        h_irss=$(procs "$OUT/h0" 4 "heaptrack_inter zstd")
        h_icpu=$(procs "$OUT/h0" 5 "heaptrack_inter zstd")
        h_pcpu=$(procs "$OUT/h0" 5 "$comm")
        [ "$h_to" = 1 ] && note "$name ($t): heaptrack stopped after $cap s (${TIMEOUT_X}x native)"
        clean
    fi

    # Timed, interleaved.  A tool stopped by the limit above is not run again.
    tn="" tm="" th=""
    for r in $(seq "$REPS"); do
        run native "$name" "$t" "$OUT/r"
        tn="$tn $(key "$OUT/r" wall_s)"
        if [ "$m_to" != 1 ]; then
            run memsim "$name" "$t" "$OUT/r" -t "$cap"
            [ "$(key "$OUT/r" timeout)" = 1 ] && m_to=1
            tm="$tm $(key "$OUT/r" wall_s)"
            clean
        fi
        if [ -n "$HEAPTRACK" ] && [ "$h_to" != 1 ]; then
            run heaptrack "$name" "$t" "$OUT/r" -t "$cap"
            [ "$(key "$OUT/r" timeout)" = 1 ] && h_to=1
            th="$th $(key "$OUT/r" wall_s)"
            clean
        fi
    done
    nm=$(echo "$tn" | median)
    if [ "$m_to" = 1 ]; then mm=$cap; else mm=$(echo "$tm" | median); fi
    hm=-
    if [ -n "$HEAPTRACK" ]; then
        if [ "$h_to" = 1 ]; then hm=$cap; else hm=$(echo "$th" | median); fi
    fi
    echo "$name $t $ev $nm $mm $m_to $hm $h_to $m_bytes $h_bytes $n_rss $m_rss $h_rss $m_prss $m_pcpu $m_rcpu $h_prss $h_irss $h_icpu $m_ev $n_cpu $h_pcpu" >>"$ROWS"
    echo " done" >&2
}

for w in $WORKLOADS; do
    case $w in
    alloc_heavy | churn) bench "$w" 1 && bench "$w" 4 ;;
    python) if [ -n "$PY" ]; then bench python 1; else note "python: no python3: skipped"; fi ;;
    perl) if [ -n "$PERL" ]; then bench perl 1; else note "perl: no perl: skipped"; fi ;;
    lua) if [ -n "$LUA" ]; then bench lua 1; else note "lua: no lua5.4 (apt-get install lua5.4): skipped"; fi ;;
    sqlite) if [ -n "$SQLITE" ]; then bench sqlite 1; else note "sqlite: no sqlite3 (apt-get install sqlite3): skipped"; fi ;;
    *) note "$w: no such workload (alloc_heavy churn python perl lua sqlite)" ;;
    esac
done

# ---------------------------------------------------------------- report

echo
awk -v sn="$START_N" -v sm="$START_M" -v sh="$START_H" -v min="$MIN_EVENTS" -v quick="$QUICK" -v notes="$NOTES" '
function gt(to) { return to == 1 ? ">" : "" }
function ratio(a, b) { return (a == "-" || b == "-" || b == 0) ? "-" : sprintf("%.2f", a / b) }
BEGIN {
    printf "%-12s %3s %7s %8s %8s %8s %6s %6s %6s %7s %7s %8s %8s %9s\n", "workload", "thr", "events",
        "native", "memsim", "heaptr", "m/nat", "h/nat", "share", "m B/ev", "h B/ev", "m RSS", "h RSS", "start %"
    printf "%-12s %3s %7s %8s %8s %8s %6s %6s %6s %7s %7s %8s %8s %9s\n", "", "", "", "s", "s", "s", "", "", "", "", "", "MiB", "MiB", "m / h"
}
{
    name = $1; t = $2; ev = $3; n = $4; m = $5; mto = $6; h = $7; hto = $8; mb = $9; hb = $10
    rows++
    mr = ratio(m, n); hr = ratio(h, n)
    share = "-"
    if (hr != "-" && hr > 1 && mr != "-") share = sprintf("%.2f", (mr - 1) / (hr - 1))
    mev = $20
    mbe = mev > 0 ? sprintf("%.1f", mb / mev) : "-"
    hbe = (ev > 0 && hb != "-" && hto != 1) ? sprintf("%.1f", hb / ev) : "-"
    ms = (m > 0) ? 100 * sm / m : 0
    hs = (h != "-" && h > 0 && sh != "") ? 100 * sh / h : 0
    st = sprintf("%.1f/%s", ms, (h == "-") ? "-" : sprintf("%.1f", hs))
    printf "%-12s %3d %6.2fM %8.3f %8s %8s %6s %6s %6s %7s %7s %8.1f %8s %9s\n", name, t, ev / 1e6, n,
        gt(mto) sprintf("%.3f", m), (h == "-") ? "-" : gt(hto) sprintf("%.3f", h), gt(mto) mr,
        (hr == "-") ? "-" : gt(hto) hr, (mto == 1 || hto == 1) ? "?" : share, mbe, hbe, $12 / 1024,
        ($13 == "-") ? "-" : sprintf("%.1f", $13 / 1024), st
    if (share != "-" && mto != 1 && hto != 1) { judged++; if (share < 1.0) under1++; if (share <= 0.5) half++ }
    if (mbe != "-") { bjudged++; if (mbe + 0 <= 10) bok++ }
    if (quick == 1 && (ms > 10 || hs > 10)) short++
    else if (ms > 10) print name " (" t "): memsim start-up is " sprintf("%.1f", ms) "% of its run (over 10%): too short to judge" >>notes
    if (quick != 1 && hs > 10) print name " (" t "): heaptrack start-up is " sprintf("%.1f", hs) "% of its run (over 10%): too short to judge" >>notes
    if (min > 0 && ev < min) print name " (" t "): " ev " heap events, fewer than " min ": make it longer" >>notes
    if (mto != 1 && mev < ev) print name " (" t "): memsim'"'"'s trace has " mev " heap records for the program'"'"'s " ev " calls" >>notes
    # CPU share: the CPU seconds each tool adds to the native run, of the
    # watched runs (the program and the tool'"'"'s processes): steadier than
    # wall time where the second core is shared unevenly.
    ncpu = $21; hcpu = ($22 == "-" || $19 == "-") ? "-" : $22 + $19
    cshare = "-"
    if (hcpu != "-" && hcpu - ncpu > 0 && mto != 1 && hto != 1) cshare = sprintf("%.2f", ($15 + $16 - ncpu) / (hcpu - ncpu))
    if (cshare != "-") { cjudged++; if (cshare < 1.0) cunder1++ }
    d[rows] = sprintf("%-12s %3d %8.1f %9.2fM %8.1f %8.1f %8.2f %8.2f   %8s %8s %8s %8s   %8.2f %6s", name, t, $11 / 1024, mev / 1e6, $14 / 1024,
        ($12 - $14) / 1024, $15, $16, ($17 == "-") ? "-" : sprintf("%.1f", $17 / 1024),
        ($18 == "-") ? "-" : sprintf("%.1f", $18 / 1024), ($22 == "-") ? "-" : sprintf("%.2f", $22),
        ($19 == "-") ? "-" : sprintf("%.2f", $19), ncpu, cshare)
}
END {
    if (short) print "BENCH_QUICK=1: a tool'"'"'s start-up is over 10% of its run on " short " of " rows " rows: these figures are no measure of the targets" >>notes
    close(notes)
    print ""
    printf "%-12s %3s %8s %10s %8s %8s %8s %8s   %8s %8s %8s %8s   %8s %6s\n", "where", "thr", "native", "memsim", "", "", "", "",
        "heaptr", "", "", "", "native", "CPU"
    printf "%-12s %3s %8s %10s %8s %8s %8s %8s   %8s %8s %8s %8s   %8s %6s\n", "it goes", "", "RSS MiB", "records", "prog", "recorder",
        "prog CPU", "rec CPU", "prog", "int+zstd", "prog CPU", "int CPU", "CPU", "share"
    for (i = 1; i <= rows; i++) print d[i]
    print ""
    print "events: the program'"'"'s heap events (calls of the malloc family, counted natively); B/ev: trace bytes"
    print "        per event (memsim: per heap record of its trace; heaptrack: per event counted)"
    print "share: (memsim/native - 1) / (heaptrack/native - 1); RSS: peak of each process of the tool, summed"
    print "       (memsim: program + memsim-recorder; heaptrack: program + heaptrack_interpret + zstd)"
    print "start %: the tool on /bin/true as a share of its median run; >: stopped at the time limit"
    print "RSS and CPU below: peak RSS (MiB) and CPU seconds of each process of one watched run; CPU share:"
    print "       the CPU time memsim adds to the native run over what heaptrack adds (int CPU: heaptrack_interpret + zstd)"
    printf "targets: overhead share under 1.0 on every row (aim 0.5): %d of %d rows under 1.0, %d at most 0.5\n", under1, judged, half
    printf "         trace bytes per heap event at most 10: %d of %d rows\n", bok, bjudged
    printf "         (CPU share under 1.0: %d of %d rows)\n", cunder1, cjudged
}' "$ROWS"

# The recorder's cost when the program does nothing: CPU of an idle
# program (sleep) and of its memsim-recorder, at the default 100 ms
# sampling interval, as a share of one core.
idle=5
[ "$QUICK" = 1 ] && idle=2
run memsim sleep "$idle" "$OUT/idle" -i 50
clean
awk -v s="$idle" '
    $1 == "command_pid" { cmd = $2 }
    $1 == "proc" && $3 == "memsim-recorder" { rc += $5 }
    $1 == "proc" && $2 == cmd { pc += $5 }
    END { printf "idle: memsim-recorder %.2f%% of a core over %d s of sleep (%.3f s CPU; the program %.3f s); target under 1%%\n",
        rc / s * 100, s, rc, pc }' "$OUT/idle"
echo "load average at the end: $(load)"
if [ -s "$NOTES" ]; then
    echo
    sed 's/^/note: /' "$NOTES"
fi
