#!/bin/sh
# bench-procs: what tracing costs a process's creation, as the median of
# N short processes (bash forks and execs /bin/true, waits for it), each
# timed by bash's $EPOCHREALTIME, natively and under libmemsim.so (every
# process of the tree traced), interleaved in ROUNDS rounds; the ratio is
# memsim's median over the native one, both measured in this run.
# heaptrack's for reference, on N/10 processes (it starts an interpreter
# per traced process).  The aim: at most 2.0.
#
# The traces go to a directory under TMPDIR (/tmp), kept until the end: on
# an ext4 without a journal the kernel skips every inode deleted in the
# last minute when it allocates one (ext4's recently_deleted), so deleting
# a round's thousands of traces before the next made each trace's creation
# cost the recorder about 0.25 ms more.  The filesystem is named in the
# output; TMPDIR=/dev/shm or a journaled ext4 measures without it.
#
#   sh bench/procs.sh [BUILD] [N] [ROUNDS]
set -eu
BUILD=${1:-build}
N=${2:-1000}
ROUNDS=${3:-3}
LIB=$(cd "$BUILD" && pwd)/libmemsim.so
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-procs.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# The loop: a time stamp (microseconds) after every /bin/true.
LOOP='i=0; echo $EPOCHREALTIME; while [ $i -lt $1 ]; do /bin/true; echo $EPOCHREALTIME; i=$((i + 1)); done'

# spans FILE: each process's time in ms (stamp to stamp), one a line.
spans() { awk 'NR > 1 { printf "%.4f\n", ($1 - last) * 1000 } { last = $1 }' "$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

: >"$OUT/native" && : >"$OUT/memsim" && : >"$OUT/heaptrack"
have_heaptrack=yes
command -v heaptrack >/dev/null 2>&1 || have_heaptrack=no
for r in $(seq "$ROUNDS"); do
    bash -c "$LOOP" bash "$N" >"$OUT/t" && spans "$OUT/t" >>"$OUT/native"
    mkdir "$OUT/traces.$r"
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT/traces.$r" bash -c "$LOOP" bash "$N" >"$OUT/t" &&
        spans "$OUT/t" >>"$OUT/memsim"
    traces=$(find "$OUT/traces.$r" -name 'memsim.*' | wc -l)
    if [ "$have_heaptrack" = yes ]; then
        mkdir "$OUT/ht"
        heaptrack -o "$OUT/ht/ht" bash -c "$LOOP" bash "$((N / 10))" >"$OUT/t" 2>/dev/null &&
            grep -E '^[0-9]+\.[0-9]+$' "$OUT/t" >"$OUT/t2" && spans "$OUT/t2" >>"$OUT/heaptrack"
        rm -rf "$OUT/ht"
    fi
done
nat=$(median <"$OUT/native")
mem=$(median <"$OUT/memsim")
fs=$(df -T "$OUT" | awk 'NR == 2 {print $2 " (" $1 ")"}')
dev=$(df "$OUT" | awk 'NR == 2 {sub("/dev/", "", $1); print $1}')
[ "$(cat "/sys/fs/ext4/$dev/journal_task" 2>/dev/null)" = "<none>" ] && fs="$fs, no journal"
echo "bench-procs: bash runs /bin/true $N times, $ROUNDS rounds interleaved; median ms a process; traces on $fs"
printf '%-10s %10s %10s %8s\n' tool median p90 ratio
for tool in native memsim heaptrack; do
    [ -s "$OUT/$tool" ] || continue
    m=$(median <"$OUT/$tool")
    p90=$(sort -n "$OUT/$tool" | awk '{a[NR]=$1} END {k = int(NR * 0.9); if (k < 1) k = 1; print a[k]}')
    printf '%-10s %10.3f %10.3f %8.2f\n' "$tool" "$m" "$p90" "$(echo "$m $nat" | awk '{print $1 / $2}')"
done
echo "memsim/native $(echo "$mem $nat" | awk '{printf "%.2f", $1 / $2}') (aim: at most 2.0); $traces traces in the last round (2 a process: the fork's child, then /bin/true)"
[ "$have_heaptrack" = yes ] || echo "(heaptrack is not installed: apt-get install heaptrack for the comparison)"
