# Helpers for tests that run a program plainly and under libmemsim.so and
# compare the two (test_transparency.sh, test_edges.sh).  Source it after
# lib.sh, with LIB (libmemsim.so), TRACECHECK and LIMIT (seconds for any
# one run) set.

# fresh_out: a new empty trace directory in $OUT (the previous one goes).
n_out=0
fresh_out() {
    [ -n "${OUT:-}" ] && rm -rf "$OUT" "$OUT.moved"
    n_out=$((n_out + 1))
    OUT=$TMP/traces.$n_out
    mkdir "$OUT"
}

# untraced CMD..., traced CMD...: CMD plainly, or under the preload
# tracing into $OUT, with the variables in $TRACE_ENV (say
# MEMSIM_SAMPLE_MS=1) added.  A hang fails the run after $LIMIT s.
TRACE_ENV=
untraced() { timeout -k 2 "$LIMIT" "$@"; }
traced() { timeout -k 2 "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" $TRACE_ENV "$@"; }

# expect_same NAME FILE1 FILE2
expect_same() {
    if cmp -s "$2" "$3"; then pass "$1"; else
        fail "$1" "$(diff "$2" "$3" | head -n 6 | tr '\n' '|' | head -c 400)"
    fi
}

# unshell FILE: keep only the invariant part of a shell's report of a
# command killed by a signal (see test_preload.sh).
unshell() {
    sed 's/^.*: line [0-9]*: *[0-9]* \([A-Z][a-z]*\( [a-z][a-z]*\)*\)\( (core dumped)\)\{0,1\} .*$/\1/' \
        "$1" >"$1.u" && mv "$1.u" "$1"
}

# same_status NAME TRACED PLAIN: the traced run ended as the plain one
# (a timeout is named as such).
same_status() {
    if [ "$2" = 124 ] || [ "$2" = 137 ] || [ "$3" = 124 ] || [ "$3" = 137 ]; then
        fail "$1: same status" "timed out after ${LIMIT}s (plain $3, traced $2)"
    else
        expect_eq "$1: same status" "$2" "$3"
    fi
}

# pair NAME CMD...: run CMD plainly, then under the preload into a fresh
# $OUT; stdout, stderr and exit status must be the same.  The traced
# run's output stays in $TMP/t.out and $TMP/t.err, its status in
# $STATUS; the plain run's in $TMP/p.out, $TMP/p.err and $PLAIN.
pair() {
    name=$1
    shift
    fresh_out
    untraced "$@" >"$TMP/p.out" 2>"$TMP/p.err"
    PLAIN=$?
    traced "$@" >"$TMP/t.out" 2>"$TMP/t.err"
    STATUS=$?
    expect_same "$name: same stdout" "$TMP/p.out" "$TMP/t.out"
    unshell "$TMP/p.err"
    unshell "$TMP/t.err"
    expect_same "$name: same stderr" "$TMP/p.err" "$TMP/t.err"
    same_status "$name" "$STATUS" "$PLAIN"
}

# limited NAME KIB PATTERN CMD...: CMD plainly, then traced, each under
# `ulimit -v KIB` (the traced one into a fresh $OUT): the same stdout,
# status 0, and one line on stderr that matches PATTERN (left in
# $TMP/lim.err).  (Without the limit, a program that allocates until
# malloc fails maps 64 GiB: half a minute on a loaded machine.)
limited() {
    name=$1 kib=$2 pattern=$3
    shift 3
    fresh_out
    (ulimit -v "$kib"; untraced "$@") >"$TMP/lim.p.out" 2>/dev/null
    (ulimit -v "$kib"; traced "$@") >"$TMP/lim.t.out" 2>"$TMP/lim.err"
    st=$?
    expect_same "$name: same stdout" "$TMP/lim.p.out" "$TMP/lim.t.out"
    same_status "$name" "$st" 0
    expect_one_line "$name: one line" "$TMP/lim.err"
    expect_grep "$name: the line names the cause" "$pattern" "$TMP/lim.err"
}

# ntraces: the number of trace files in $OUT.
# (The traces are what users get: compressed, .jsonl.zst.)
ntraces() { find "$OUT" -name 'memsim.*.jsonl.zst' | wc -l | tr -d ' '; }

# check_trace NAME FILE [TRACECHECK OPTIONS]: one trace passes
# tracecheck; its summary line is left in FILE.tc.
check_trace() {
    name=$1 f=$2
    shift 2
    if [ -z "$f" ] || [ ! -f "$f" ]; then
        fail "$name: the trace passes tracecheck" "no such trace: '$f'"
        : >"$TMP/none.tc"
    elif "$TRACECHECK" "$@" "$f" >"$f.tc" 2>"$f.tcerr"; then
        pass "$name: the trace passes tracecheck"
    else
        fail "$name: the trace passes tracecheck" "$(head -n 3 "$f.tcerr" | tr '\n' ' ' | head -c 400)"
    fi
}

# check_traces NAME [TRACECHECK OPTIONS]: every trace in $OUT; one check.
check_traces() {
    name=$1
    shift
    n=0 bad=""
    for f in "$OUT"/memsim.*.jsonl.zst; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        if ! "$TRACECHECK" "$@" "$f" >"$f.tc" 2>"$f.tcerr"; then
            bad="$bad $(basename "$f"): $(head -n 3 "$f.tcerr" | tr '\n' ' ')"
        fi
    done
    if [ "$n" -eq 0 ]; then
        fail "$name: traces pass tracecheck" "no trace file in $OUT"
    elif [ -z "$bad" ]; then
        pass "$name: $n trace(s) pass tracecheck"
    else
        fail "$name: traces pass tracecheck" "$(echo "$bad" | head -c 600)"
    fi
}

# tc FIELD FILE: a field of tracecheck's summary of trace FILE.
tc() { sed -n "s/.*\\<$1=\\([^ ]*\\).*/\\1/p" "$2.tc" 2>/dev/null; }

# only_trace: the path of the single trace in $OUT (empty when not one).
only_trace() {
    [ "$(ntraces)" = 1 ] && find "$OUT" -name 'memsim.*.jsonl.zst'
}

# end_field FIELD FILE: a field of the trace's last record (the end).
end_field() { trace_text "${2:-/dev/null}" 2>/dev/null | tail -n 1 | "$JSONQ" "$1" 2>/dev/null; }

# trace_of_exe EXE: the trace in $OUT of the first process named EXE (a
# pattern), the one that was not forked (its parent_trace is null).  The
# recorder writes a trace's first records within its flush interval: a
# process that ended unseen (a signal) may leave a trace with nothing in
# it yet, waited for (60 s at most: a loaded machine).
trace_of_exe() {
    for f in "$OUT"/memsim.$1.*.jsonl.zst; do
        [ -e "$f" ] || continue
        i=0
        while [ $i -lt 1200 ] && [ -z "$(trace_text "$f" 2>/dev/null | head -n 1)" ]; do
            sleep 0.05
            i=$((i + 1))
        done
        [ "$(trace_text "$f" | head -n 1 | "$JSONQ" parent_trace 2>/dev/null)" = null ] &&
            echo "$f" && return
    done
}

# ms_now: milliseconds of the wall clock.
ms_now() { echo $(($(date +%s%N) / 1000000)); }
