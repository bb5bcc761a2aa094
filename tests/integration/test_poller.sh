# The poller inside the traced process: sample records with RSS, peaks,
# the child tree, at the configured interval.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - poller tests: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi
LIB=$BUILD/libmemsim.so
MIB=1048576

# field FILE KEY: every sample's KEY, one per line
field() {
    grep '"ev":"sample"' "$1" | while IFS= read -r line; do
        printf '%s\n' "$line" | "$JSONQ" "$2"
    done
}
max() { sort -n | tail -n 1; }

# 200 MB touched: RSS rises in the samples, HWM reaches 200 MB.  (Held
# 1.5 s: the recorder, a process of its own, must get the processor for
# one sample in that time however loaded the machine.)
mkdir -p "$TMP/a"
expect_status "touch_mb 200 under memsim" 0 timeout 60 env LD_PRELOAD="$LIB" \
    MEMSIM_OUTPUT="$TMP/a" MEMSIM_SAMPLE_MS=20 "$BUILD/programs/touch_mb" 200 1500
t=$(ls "$TMP"/a/memsim.touch_mb.*.jsonl)
first=$(field "$t" rss | head -n 1)
top=$(field "$t" rss | max)
hwm=$(field "$t" hwm | max)
# (The samples' RSS reaches it; how much of the rise they see depends on
# when the first one came, late on a loaded machine: not checked.)
expect_eq "the samples' RSS reaches 190 MB (first $first, top $top)" \
    "$([ "$top" -ge $((190 * MIB)) ] && echo yes)" yes
expect_eq "HWM reaches 200 MB" "$([ "$hwm" -ge $((200 * MIB)) ] && echo yes)" yes
expect_eq "smaps_rollup comes with a new peak" \
    "$(grep '"ev":"sample"' "$t" | grep -c '"rollup":{"rss"' | awk '{print ($1 > 0) ? "yes" : "no"}')" yes
heap=$(field "$t" heap_live | max)
expect_eq "heap_live sees the 200 MiB" "$([ "$heap" -ge $((200 * MIB)) ] && echo yes)" yes
expect_eq "the trace is complete" "$("$BUILD/tracecheck" "$t" | sed -n 's/.* end=\([^ ]*\).*/\1/p')" exit

# The interval: samples fall on a 20 ms grid from the first, a missed
# tick skipped, and one more at the end: over their span S ms, at most
# S / 20 + 2 (+ 1: the times written are a little after the ticks).  (How many a 1 s hold gets, about 50, is a matter of the
# recorder's scheduling: bench/timing.sh measures it.)
mkdir -p "$TMP/b"
timeout 60 env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/b" MEMSIM_SAMPLE_MS=20 \
    "$BUILD/programs/touch_mb" 1 1000 >/dev/null
grep '"ev":"sample"' "$TMP"/b/memsim.touch_mb.*.jsonl | sed 's/.*"t":\([0-9]*\),.*/\1/' >"$TMP/b.t"
n=$(wc -l <"$TMP/b.t" | tr -d ' ')
span_ms=$(( ($(tail -n 1 "$TMP/b.t") - $(head -n 1 "$TMP/b.t")) / 1000 ))
expect_eq "samples every 20 ms: $n over $span_ms ms, at most one a tick" \
    "$([ "$n" -ge 2 ] && [ "$n" -le $((span_ms / 20 + 3)) ] && echo yes)" yes

# Stopped for a second (SIGSTOP, SIGCONT): the ticks missed are skipped,
# not fired back to back when it resumes.
mkdir -p "$TMP/s"
env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/s" MEMSIM_SAMPLE_MS=20 \
    "$BUILD/programs/touch_mb" 1 2000 >/dev/null &
pid=$!
sleep 0.4
kill -STOP $pid
sleep 1
kill -CONT $pid
wait $pid
# Ticks fired back to back would be some 50 samples in a row, each
# within 5 ms of the one before.  On the grid, two can be that close (a
# tick taken late, the next on time), never three: a sample is never
# taken before the next tick.
burst=$(grep '"ev":"sample"' "$TMP"/s/memsim.touch_mb.*.jsonl | sed 's/.*"t":\([0-9]*\),.*/\1/' |
    awk 'NR > 1 && $1 - prev < 5000 {run++} NR > 1 && $1 - prev >= 5000 {run = 0}
        run > most {most = run} {prev = $1} END {print most + 1}')
expect_eq "after a stop, no burst of catch-up samples (at most $burst in a row within 5 ms)" \
    "$([ "$burst" -le 3 ] && echo yes)" yes

# The trace's own pages hardly count in RSS, however long it gets: the
# peak (VmHWM) of a 4-million-record run is within 8 MiB of a
# 1-million-record run's, and under 40 MiB for a program that itself
# needs about 4.
hwm_of() {
    mkdir -p "$TMP/h$1"
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/h$1" "$BUILD/programs/alloc_heavy" 1 "$1" >/dev/null
    field "$(ls "$TMP"/h"$1"/memsim.alloc_heavy.*.jsonl)" hwm | max
}
short=$(hwm_of 500000)
long=$(hwm_of 2000000)
expect_eq "RSS peak does not grow with the trace ($((short / MIB)) MiB, then $((long / MIB)) MiB)" \
    "$([ "$long" -le $((short + 8 * MIB)) ] && [ "$long" -le $((40 * MIB)) ] && echo yes)" yes

# Three children touching 50 MB each, holding them together for 1.5 s:
# the parent's samples see the tree.
mkdir -p "$TMP/c"
expect_status "tree_touch 3 50 under memsim" 0 timeout 60 env LD_PRELOAD="$LIB" \
    MEMSIM_OUTPUT="$TMP/c" MEMSIM_SAMPLE_MS=20 MEMSIM_TRACE_CHILDREN=0 \
    "$BUILD/programs/tree_touch" 3 50 1500
p=$(ls "$TMP"/c/memsim.tree_touch.*.jsonl | head -n 1)
tree=$(field "$p" tree_rss | max)
kids=$(field "$p" children.# | max)
expect_eq "tree RSS reaches 150 MB" "$([ "$tree" -ge $((150 * MIB)) ] && echo yes)" yes
expect_eq "the three children are listed" "$([ "$kids" -ge 3 ] && echo yes)" yes
expect_eq "only the first process traced (MEMSIM_TRACE_CHILDREN=0)" \
    "$(ls "$TMP"/c/*.jsonl | wc -l | tr -d ' ')" 1

summary
