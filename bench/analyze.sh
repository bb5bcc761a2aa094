#!/bin/sh
# bench-analyze: memsim-analyze's speed and memory, against heaptrack_print
# on a recording of the same program, in the same run.
#
#   speed   a trace of about 5 million records (alloc_heavy 1 SPEED_OPS:
#           a free and a malloc per operation), memsim-analyze --no-replay,
#           -s best-fit and the default analysis (every strategy),
#           heaptrack_print on heaptrack's recording of the same command;
#           median of REPS runs each, wall and CPU time; and, from one
#           more default run, each strategy's replay time per heap event
#           by the analyzer's own clock (where the default's time goes),
#           and the floor under it: glibc's malloc through the trace's
#           heap operations six times (build/bench-floor, bench/tools/floor.c),
#           and each real allocator's replay time per operation
#           (memsim-analyze --allocators: wall and CPU)
#   memory  peak RSS of memsim-analyze --no-replay and of the default
#           analysis on that trace and on one of about 10 million records
#           (alloc_heavy 1 RSS_OPS): streaming, it must not grow with the
#           trace's length
#
# Targets: at least 2 million records per second without replay
# on one core, and faster than heaptrack_print; the default
# analysis, with all six strategies, no slower than heaptrack_print (wall
# time: the replay runs on a second core).  Peak RSS comes from
# /usr/bin/time (Debian package "time"); without it, from VmHWM polled in
# /proc while the analyzer runs.  About 30 s; scratch traces of up to
# 150 MB at once under $TMPDIR (compressed traces; zstd for counting their records).
#
#   real    the same on lua5.4's recording of bench/real/tables.lua
#           (BENCH_ANALYZE_LUA_N steps, 500,000: 6.8 million records, a
#           million live blocks), when lua5.4 and heaptrack are installed
#
#   sh bench/analyze.sh [BUILD] [SPEED_OPS] [RSS_OPS] [REPS]
set -eu
BUILD=${1:-build}
SPEED_OPS=${2:-2500000}
RSS_OPS=${3:-5000000}
REPS=${4:-3}
LUA_N=${BENCH_ANALYZE_LUA_N:-500000}
PROG=$BUILD/programs/alloc_heavy
ANALYZE=$BUILD/memsim-analyze
JSONQ=$BUILD/jsonq
FLOOR=$BUILD/bench-floor
LIB=$(cd "$BUILD" && pwd)/libmemsim.so
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-analyze.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
command -v zstd >/dev/null 2>&1 || {
    echo "bench-analyze: zstd is needed to count a compressed trace's records: apt-get install zstd" >&2
    exit 1
}

# measure CMD...: "wall_s cpu_s peak_rss_kib" of one run (output discarded).
# BENCH_NO_TIME=1 tries the fallback.
if [ -x /usr/bin/time ] && [ -z "${BENCH_NO_TIME:-}" ]; then
    HAVE_TIME=yes
    measure() {
        /usr/bin/time -f '%e %U %S %M' -o "$OUT/time" "$@" >/dev/null 2>&1
        awk '{printf "%.3f %.3f %d\n", $1, $2 + $3, $4}' "$OUT/time"
    }
else
    # No /usr/bin/time: wall time from date, CPU time from the shell's
    # `times` (its children's user + system, before and after), peak RSS
    # from the child's VmHWM polled every 10 ms (a lower bound).
    HAVE_TIME=no
    children_cpu() { awk 'NR == 2 {gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4}' "$1"; }
    measure() {
        times >"$OUT/t0"
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 &
        pid=$!
        hwm=0
        while kill -0 "$pid" 2>/dev/null; do
            v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
            [ -n "$v" ] && hwm=$v
            sleep 0.01
        done
        wait "$pid" || true
        e=$(date +%s.%N)
        times >"$OUT/t1"
        echo "$s $e $(children_cpu "$OUT/t0") $(children_cpu "$OUT/t1") $hwm" |
            awk '{printf "%.3f %.3f %d\n", $2 - $1, $4 - $3, $5}'
    }
fi

# best CMD...: the median run of REPS (by wall time), as measure prints it.
best() {
    for r in $(seq "$REPS"); do measure "$@"; done | sort -n |
        awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'
}

record() { # record OPS DIR: a memsim trace of alloc_heavy 1 OPS into DIR
    mkdir -p "$2"
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$2" MEMSIM_STRATEGY=none "$PROG" 1 "$1" >/dev/null
    ls "$2"/*.jsonl.zst
}

# lines TRACE: its records; mbytes TRACE: its size on disk (compressed) in MB
lines() { zstd -dc "$1" | wc -l; }
mbytes() { echo $(($(wc -c <"$1") / 1000000)); }

T=$(record "$SPEED_OPS" "$OUT/speed")
records=$(lines "$T")
mb=$(mbytes "$T")
echo "bench-analyze: $records records ($mb MB compressed, the default) from $PROG 1 $SPEED_OPS; median of $REPS runs"
printf '%-28s %8s %8s %12s %12s %10s\n' "" "wall s" "CPU s" "records/s" "vs heaptr." "peak RSS"
# heaptrack first, so that each memsim line can print its ratio.
h="- - -"
if command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1; then
    heaptrack -o "$OUT/ht" "$PROG" 1 "$SPEED_OPS" >/dev/null 2>&1
    h=$(best heaptrack_print "$OUT/ht.zst")
fi
hw=$(echo "$h" | cut -d' ' -f1)
line() { # line NAME "wall cpu rss"
    echo "$2" | awk -v name="$1" -v n="$records" -v hw="$hw" '{
        ratio = (hw == "-") ? "-" : sprintf("%.2fx", hw / $1)
        printf "%-28s %8.3f %8.3f %11.2fM %12s %6.1f MiB\n", name, $1, $2, n / $1 / 1e6, ratio, $3 / 1024
    }'
}
# per_strategy TRACE: where the default analysis's replay time goes:
# each strategy's time per heap event by the analyzer's own clock (the
# batches it replayed, on whichever thread), from one more default run.
per_strategy() {
    "$ANALYZE" --json "$1" >"$OUT/strategies.json" 2>/dev/null || return 0
    i=0 all=""
    while name=$("$JSONQ" "strategies.$i.name" <"$OUT/strategies.json" 2>/dev/null); do
        eps=$("$JSONQ" "strategies.$i.events_per_s" <"$OUT/strategies.json")
        all="$all$(echo "$name $eps" | awk '{printf " %s %.0f,", $1, ($2 > 0 ? 1e9 / $2 : 0)}')"
        i=$((i + 1))
    done
    echo "  replay, ns per heap event:${all%,}"
}
# per_allocator TRACE: each real allocator's replay (memsim-analyze
# --allocators, issue 36), wall and CPU ns per operation, one run; the
# replays run at once, one process each: on 2 cores wall includes waiting.
per_allocator() {
    "$ANALYZE" --json --no-replay --allocators glibc,jemalloc,mimalloc,tcmalloc "$1" \
        >"$OUT/allocators.json" 2>/dev/null || return 0
    i=0 all=""
    while name=$("$JSONQ" "allocators.rows.$i.name" <"$OUT/allocators.json" 2>/dev/null); do
        st=$("$JSONQ" "allocators.rows.$i.status" <"$OUT/allocators.json")
        if [ "$st" = ok ]; then
            w=$("$JSONQ" "allocators.rows.$i.wall_ns_per_op" <"$OUT/allocators.json")
            c=$("$JSONQ" "allocators.rows.$i.cpu_ns_per_op" <"$OUT/allocators.json")
            all="$all$(echo "$name $w $c" | awk '{printf " %s %.0f (%.0f),", $1, $2, $3}')"
        else
            all="$all $name $st,"
        fi
        i=$((i + 1))
    done
    echo "  real allocators' replay, wall (CPU) ns per operation:${all%,}"
}
line "memsim-analyze --no-replay" "$(best "$ANALYZE" --no-replay "$T")"
line "memsim-analyze -s best-fit" "$(best "$ANALYZE" -s best-fit "$T")"
all5=$(best "$ANALYZE" "$T")
line "memsim-analyze (6 strategies)" "$all5"
per_strategy "$T"
"$FLOOR" "$T" | sed 's/^/  /'
per_allocator "$T"
if [ "$hw" != - ]; then
    echo "$h" | awk -v n="$records" '{
        printf "%-28s %8.3f %8.3f %12s %12s %6.1f MiB\n", "heaptrack_print", $1, $2, "-", "1.00x", $3 / 1024
    }'
    echo "(heaptrack_print reads heaptrack's own recording of the same command; vs heaptr.: its wall time / this one's)"
else
    echo "(heaptrack is not installed: apt-get install heaptrack for the comparison)"
fi
rm -rf "$OUT/speed" "$OUT"/ht*

# The same on a real program's recording (many live blocks, reallocs,
# mixed sizes): lua5.4 tables.lua LUA_N (bench/real/), when lua5.4 is
# installed.  alloc_heavy's 1,024 live blocks keep every strategy's
# structures in a core's cache; a million live blocks do not.
LUA=$(command -v lua5.4 2>/dev/null || true)
if [ -n "$LUA" ] && [ "$hw" != - ]; then
    HERE=$(cd "$(dirname "$0")" && pwd)
    mkdir -p "$OUT/lua"
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT/lua" MEMSIM_STRATEGY=none "$LUA" "$HERE/real/tables.lua" "$LUA_N" >/dev/null
    LT=$(ls "$OUT"/lua/*.jsonl.zst)
    records=$(lines "$LT")
    heaptrack -o "$OUT/htl" "$LUA" "$HERE/real/tables.lua" "$LUA_N" >/dev/null 2>&1
    h=$(best heaptrack_print "$OUT/htl.zst")
    hw=$(echo "$h" | cut -d' ' -f1)
    echo "on lua5.4 tables.lua $LUA_N: $records records ($(mbytes "$LT") MB compressed); median of $REPS runs"
    line "memsim-analyze --no-replay" "$(best "$ANALYZE" --no-replay "$LT")"
    line "memsim-analyze (6 strategies)" "$(best "$ANALYZE" "$LT")"
    per_strategy "$LT"
    "$FLOOR" "$LT" | sed 's/^/  /'
    per_allocator "$LT"
    echo "$h" | awk '{ printf "%-28s %8.3f %8.3f %12s %12s %6.1f MiB\n", "heaptrack_print", $1, $2, "-", "1.00x", $3 / 1024 }'
    rm -rf "$OUT/lua" "$OUT"/htl*
else
    echo "(lua5.4 or heaptrack is not installed: no real program's recording analyzed)"
fi

T=$(record "$RSS_OPS" "$OUT/rss")
records10=$(lines "$T")
mb10=$(mbytes "$T")
echo "$records10 $mb10 $(best "$ANALYZE" --no-replay "$T")" | awk '{
    printf "memsim-analyze --no-replay on %d records (%d MB): peak RSS %.1f MiB, %.3f s, %.2f M records/s\n",
        $1, $2, $5 / 1024, $3, $1 / $3 / 1e6 }'
echo "$records10 $mb10 $(best "$ANALYZE" "$T") $all5" | awk '{
    printf "memsim-analyze (6 strategies) on %d records (%d MB): peak RSS %.1f MiB (%.1f MiB on %s), %.3f s\n",
        $1, $2, $5 / 1024, $8 / 1024, "the smaller trace", $3 }'
[ "$HAVE_TIME" = yes ] || echo "(peak RSS polled from /proc: install Debian's \"time\" package for the exact figure)"
echo "targets: >= 2 M records/s without replay on one core, faster than heaptrack_print;"
echo "         the default analysis (6 strategies) no slower than heaptrack_print;"
echo "         peak RSS independent of the trace's length"

# Peak RSS against heaptrack_print, on recordings of the real programs
# of bench/workloads.sh and bench/sampling.sh (same sizes) and of
# alloc_heavy at 36M events and a tenth of that: one run of each (peak
# RSS barely varies), memsim-analyze's default analysis (every strategy
# replayed) and --no-replay, each as a ratio to heaptrack_print's on
# heaptrack's recording of the same command.  Targets: the default at
# most 4x on every row and at most 256 MiB on python; --no-replay at
# most 2x; alloc_heavy at 36M events within its tenth's (memory bounded
# by the live blocks, not the trace's length).  cc1 runs straight (not
# through gcc: heaptrack does not follow a child).  About 10 minutes on
# 2 cores; BENCH_ANALYZE_RSS_ROWS="python lua" a subset, "" none.
RSS_ROWS=${BENCH_ANALYZE_RSS_ROWS-python perl lua sqlite cc1 alloc_heavy/10 alloc_heavy}
if [ -n "$RSS_ROWS" ] && command -v heaptrack >/dev/null 2>&1 &&
    command -v heaptrack_print >/dev/null 2>&1; then
    HERE=$(cd "$(dirname "$0")" && pwd)
    IN=$OUT/rss-inputs
    sh "$HERE/inputs.sh" "$IN" 3000000 240000 >/dev/null
    sh "$HERE/study/gen_c.sh" "$IN/big.c" 1500
    PY=/usr/bin/python3
    [ -x "$PY" ] || PY=python3
    CC1=$(gcc -print-prog-name=cc1 2>/dev/null || echo cc1)
    echo "peak RSS against heaptrack_print on the same command's recording, one run each"
    printf '%-15s %9s %12s %12s %8s %12s %8s\n' "" records "heaptr. MiB" "default MiB" ratio \
        "no-repl. MiB" ratio
    for w in $RSS_ROWS; do
        wenv=MEMSIM_BENCH=1
        case $w in
        python) wenv="PYTHONMALLOC=malloc PYTHONHASHSEED=0" && set -- "$PY" -s "$HERE/real/churn.py" 480000 ;;
        perl) wenv="PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0" && set -- perl "$HERE/real/words.pl" "$IN/words.txt" ;;
        lua) set -- lua5.4 "$HERE/real/tables.lua" 1000000 ;;
        sqlite) set -- sqlite3 :memory: ".read '$IN/inserts.sql'" ;;
        cc1) set -- "$CC1" -quiet -O2 "$IN/big.c" -o "$OUT/big.s" ;;
        alloc_heavy/10) set -- "$PROG" 1 1800000 ;;
        alloc_heavy) set -- "$PROG" 1 18000000 ;;
        *) echo "bench-analyze: no RSS row $w" >&2 && continue ;;
        esac
        command -v "$1" >/dev/null 2>&1 || { echo "$w: $1 is not installed"; continue; }
        rm -rf "$OUT/rw"
        mkdir -p "$OUT/rw"
        # shellcheck disable=SC2086 # wenv: words without blanks
        env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT/rw" MEMSIM_STRATEGY=none $wenv "$@" </dev/null >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        env $wenv heaptrack -o "$OUT/rw/ht" "$@" </dev/null >/dev/null 2>&1 || true
        t=$(ls -S "$OUT"/rw/memsim.*.jsonl.zst 2>/dev/null | head -n 1)
        ht=$(ls "$OUT"/rw/ht.* 2>/dev/null | head -n 1)
        [ -n "$t" ] && [ -n "$ht" ] || { echo "$w: no recording"; continue; }
        h=$(measure heaptrack_print "$ht" | cut -d' ' -f3)
        d=$(measure "$ANALYZE" "$t" | cut -d' ' -f3)
        n=$(measure "$ANALYZE" --no-replay "$t" | cut -d' ' -f3)
        echo "$w $(lines "$t") $h $d $n" | awk '{
            printf "%-15s %8.1fM %12.1f %12.1f %7.2fx %12.1f %7.2fx\n",
                $1, $2 / 1e6, $3 / 1024, $4 / 1024, $4 / $3, $5 / 1024, $5 / $3 }'
    done
    rm -rf "$OUT/rw"
    echo "targets: default <= 4x heaptrack_print's peak RSS (python <= 256 MiB), --no-replay <= 2x;"
    echo "         alloc_heavy's default no more than alloc_heavy/10's"
fi
