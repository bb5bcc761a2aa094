# memsim changes nothing in the traced program: each check
# runs a program plainly and under the preload and compares what the
# program sees and does (stdout, stderr, exit status, its descriptors,
# its signal dispositions, its environment, its stack, no hang), then
# checks that the trace is whole (tracecheck) and holds every tagged
# allocation (size % 4096 == 777) the program made.  Only what
# docs/trace-format.md promises of the trace is checked: record names,
# the end record's reason, status, signal, dropped and live_allocations.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - transparency tests: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

LIB=$(cd "$BUILD" && pwd)/libmemsim.so
TRACECHECK=$BUILD/tracecheck
PROG=$BUILD/programs
for need in "$LIB" "$TRACECHECK" "$JSONQ" "$PROG/alloc_heavy"; do
    if [ ! -x "$need" ]; then
        fail "transparency tests" "$need is missing: run them with make integration"
        summary
        exit
    fi
done
# The programs of this file (Makefile: TRANSPARENCY_PROGRAMS; heap_mix_je
# is optional, as jemalloc is).
for p in fd_reuse fd_list fd_limit out_moved heap_mix main_exit own_segv overflow qexit \
    fork_sig exit_sig small_stack coro spawn_env stack_use clone_child exec_fail sigdisp \
    reallocarray0 many_threads; do
    if [ ! -x "$PROG/$p" ]; then
        fail "transparency tests" "$PROG/$p is missing: run them with make integration"
        summary
        exit
    fi
done
LIMIT=60 # seconds for any one run; then SIGKILL 2 s later (a hung process may block SIGTERM)
TAG=4096:777
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
unset LD_PRELOAD MEMSIM_OUTPUT MEMSIM_STRATEGY MEMSIM_DEVICE_SIZE MEMSIM_STACK_DEPTH \
    MEMSIM_SAMPLE_MS MEMSIM_TRACE_CHILDREN MEMSIM_MMAP MEMSIM_ROOT_PID MEMSIM_COMPRESS
ulimit -c 0 2>/dev/null # the crashing programs dump no core

. tests/integration/traced.sh

# ---- 1. descriptors are the program's ------------------------------------------------

# (a) The lowest free number is the program's: the poller opens /proc
# files every millisecond with MEMSIM_SAMPLE_MS=1.
fresh_out
untraced "$PROG/fd_reuse" "$TMP/fd.plain.log" >"$TMP/p.out" 2>"$TMP/p.err"
plain=$?
expect_eq "fd_reuse: natively, fd 3 every time" "$plain:$(cat "$TMP/p.out")" \
    "0:mismatches=0 dup2_failures=0 writes_failed=0 log=ok"
TRACE_ENV=MEMSIM_SAMPLE_MS=1
traced "$PROG/fd_reuse" "$TMP/fd.log" >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
TRACE_ENV=
expect_same "fd_reuse: same stdout (open gets fd 3, dup2 onto 4 works, every write lands)" \
    "$TMP/p.out" "$TMP/t.out"
expect_same "fd_reuse: same stderr" "$TMP/p.err" "$TMP/t.err"
same_status "fd_reuse" "$st" "$plain"
# fd_reuse leaves the number of lines it wrote in LOG.count.
want=$(cat "$TMP/fd.log.count" 2>/dev/null)
expect_eq "fd_reuse: the log has the lines written, in order" \
    "$(awk -v n="${want:-?}" '$0 != "line " NR { bad++ }
        END { print NR == n && !bad ? "ok" : NR " lines of " n ", " bad + 0 " out of place" }' \
        "$TMP/fd.log")" ok
expect_eq "fd_reuse: no NUL byte in the log" "$(tr -dc '\000' <"$TMP/fd.log" | wc -c | tr -d ' ')" 0

# (b) The same in bash: exec 3>>file, exec 3<>file, echo >&3, exec 3>&-.
cat >"$TMP/fds.sh" <<'EOF'
log=$1 slot=$2 n=$3
: >"$log"
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    exec 3>>"$log"
    echo "line $i" >&3
    exec 3>&-
    exec 3<>"$slot"
    echo "slot $i" >&3
    exec 3>&-
done
echo "done $i"
EOF
fresh_out
untraced bash "$TMP/fds.sh" "$TMP/b.plain.log" "$TMP/b.plain.slot" 20000 \
    >"$TMP/p.out" 2>"$TMP/p.err"
plain=$?
TRACE_ENV=MEMSIM_SAMPLE_MS=1
traced bash "$TMP/fds.sh" "$TMP/b.log" "$TMP/b.slot" 20000 >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
TRACE_ENV=
expect_same "bash exec 3<>: same stdout" "$TMP/p.out" "$TMP/t.out"
sed "s|$TMP/b.plain|$TMP/b|g" "$TMP/p.err" >"$TMP/p.err.s"
expect_same "bash exec 3<>: same stderr" "$TMP/p.err.s" "$TMP/t.err"
same_status "bash exec 3<>" "$st" "$plain"
expect_same "bash exec 3<>: the same log" "$TMP/b.plain.log" "$TMP/b.log"
expect_same "bash exec 3<>: the same slot file" "$TMP/b.plain.slot" "$TMP/b.slot"

# (c) The descriptors a program lists are its own, before and after its
# allocations (libunwind's validation pipe showed up as 3 and 4).
pair "fd_list" "$PROG/fd_list"
expect_eq "fd_list: natively, the same descriptors before and after" \
    "$(sed -n 's/^start://p' "$TMP/p.out")" "$(sed -n 's/^after://p' "$TMP/p.out")"
if PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$PY" ]; then
    pair "python3 os.open" "$PY" -c 'import os; print(os.open("/dev/null", os.O_RDONLY))'
else
    PY=
    echo "# skip - python3 os.open: python3 is not installed"
fi

# (d) Every descriptor the limit allows is the program's.
fresh_out
(ulimit -n 16 && untraced "$PROG/fd_limit") >"$TMP/p.out" 2>"$TMP/p.err"
plain=$?
(ulimit -n 16 && traced "$PROG/fd_limit") >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
expect_same "ulimit -n 16: as many descriptors as natively ($(cat "$TMP/p.out"))" \
    "$TMP/p.out" "$TMP/t.out"
expect_same "ulimit -n 16: same stderr" "$TMP/p.err" "$TMP/t.err"
same_status "ulimit -n 16" "$st" "$plain"

# (e) The trace does not depend on its path: the directory it is in is
# renamed halfway.
fresh_out
mkdir "$TMP/plain.d"
untraced "$PROG/out_moved" "$TMP/plain.d" >"$TMP/p.out" 2>"$TMP/p.err"
plain=$?
rm -rf "$TMP/plain.d" "$TMP/plain.d.moved"
timeout -k 2 "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$PROG/out_moved" "$OUT" \
    >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
expect_same "out_moved: same stdout" "$TMP/p.out" "$TMP/t.out"
expect_same "out_moved: same stderr" "$TMP/p.err" "$TMP/t.err"
same_status "out_moved" "$st" "$plain"
f=$(find "$OUT.moved" -name 'memsim.*.jsonl.zst' 2>/dev/null | head -n 1)
check_trace "out_moved" "$f" --tag "$TAG" --expect-end exit
expect_eq "out_moved: dropped 0" "$(end_field dropped "$f")" 0
expect_eq "out_moved: every tagged allocation, after the move too" "$(tc tagged "$f")" 220000

# ---- 2. another allocator ------------------------------------------------------------

# (a) A program linked with jemalloc: every call must reach jemalloc
# (a block of jemalloc's given to glibc's free kills the program).
if [ -x "$PROG/heap_mix_je" ]; then
    pair "heap_mix_je" "$PROG/heap_mix_je"
    expect_eq "heap_mix_je: runs natively" "$PLAIN" 0
    f=$(only_trace)
    check_trace "heap_mix_je" "$f" --tag "$TAG" --expect-end exit
    expect_eq "heap_mix_je: every tagged allocation" "$(tc tagged "$f")" \
        "$(sed -n 's/^calls=\([0-9]*\) .*/\1/p' "$TMP/p.out")"
else
    echo "# skip - heap_mix_je: jemalloc (Debian package libjemalloc-dev) is not installed"
fi

if [ -e "$JEMALLOC" ]; then
    # (b) jemalloc preloaded ahead of memsim: memsim's malloc is never
    # called, and it must say so, once.
    fresh_out
    untraced "$PROG/heap_mix" >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    timeout -k 2 "$LIMIT" env LD_PRELOAD="$JEMALLOC:$LIB" MEMSIM_OUTPUT="$OUT" "$PROG/heap_mix" \
        >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_same "jemalloc ahead of memsim: same stdout" "$TMP/p.out" "$TMP/t.out"
    same_status "jemalloc ahead of memsim" "$st" "$plain"
    expect_eq "jemalloc ahead of memsim: one line on stderr, memsim's, about malloc" \
        "$(wc -l <"$TMP/t.err" | tr -d ' ') $(grep -c '^memsim: .*malloc' "$TMP/t.err")" "1 1"

    # (c) memsim ahead of jemalloc.
    fresh_out
    timeout -k 2 "$LIMIT" env LD_PRELOAD="$LIB:$JEMALLOC" MEMSIM_OUTPUT="$OUT" "$PROG/heap_mix" \
        >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_same "memsim ahead of jemalloc: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "memsim ahead of jemalloc: same stderr" "$TMP/p.err" "$TMP/t.err"
    same_status "memsim ahead of jemalloc" "$st" "$plain"
    f=$(only_trace)
    check_trace "memsim ahead of jemalloc" "$f" --tag "$TAG"
    expect_eq "memsim ahead of jemalloc: every tagged allocation" "$(tc tagged "$f")" \
        "$(sed -n 's/^calls=\([0-9]*\) .*/\1/p' "$TMP/p.out")"
    # The heap it reaches is jemalloc's: no glibc figures (mallinfo2) in
    # any sample; glibc's own heap has them.  A sample asks for them and
    # the process's next heap event posts them: alloc_heavy's 27 ms of
    # heap events give dozens of samples (heap_mix's 6 ms could end
    # before the first, taken 1 ms after the trace opens, on a busy
    # machine: the check failed once so).
    fresh_out
    TRACE_ENV=MEMSIM_SAMPLE_MS=1
    timeout -k 2 "$LIMIT" env LD_PRELOAD="$LIB:$JEMALLOC" MEMSIM_OUTPUT="$OUT" $TRACE_ENV \
        "$PROG/alloc_heavy" 1 300000 >/dev/null 2>&1
    trace_text "$(only_trace)" | grep '"ev":"sample"' >"$TMP/je.samples"
    expect_eq "memsim ahead of jemalloc: samples, malloc_reserved null in every one" \
        "$(awk 'END { print (NR > 0) }' "$TMP/je.samples") $(grep -vc '"malloc_reserved":null' "$TMP/je.samples")" "1 0"
    fresh_out
    traced "$PROG/alloc_heavy" 1 300000 >/dev/null 2>&1
    TRACE_ENV=
    expect_eq "glibc's heap: malloc_reserved in a sample" \
        "$(trace_text "$(only_trace)" | grep '"ev":"sample"' | grep -c '"malloc_reserved":[0-9]' |
            awk '{print ($1 > 0)}')" 1
else
    echo "# skip - jemalloc preloaded: $JEMALLOC is not installed"
fi

# ---- 3. pthread_exit from main -------------------------------------------------------

# The process ends with its last thread; memsim's threads must not keep
# it alive (and exit's stdio flush must run: the output is unflushed).
pair "main_exit" "$PROG/main_exit"
f=$(only_trace)
check_trace "main_exit" "$f" --tag "$TAG" --expect-end exit
expect_eq "main_exit: end status 0" "$(end_field status "$f")" 0
expect_eq "main_exit: every tagged allocation" "$(tc tagged "$f")" 1000

# ---- 4. fatal paths keep the trace ---------------------------------------------------

# (a) The program's own SIGSEGV handler restores SIG_DFL with signal()
# and re-raises.
pair "own_segv" "$PROG/own_segv"
expect_eq "own_segv: status 139" "$STATUS" 139
f=$(only_trace)
check_trace "own_segv" "$f" --tag "$TAG" --expect-end signal
expect_eq "own_segv: end signal 11" "$(end_field signal "$f")" 11
expect_eq "own_segv: every tagged allocation" "$(tc tagged "$f")" 8

# (b) coreutils timeout re-raises its child's signal on itself.
pair "timeout re-raising SIGSEGV" timeout 10 sh -c 'kill -SEGV $$'
expect_eq "timeout re-raising SIGSEGV: status 139" "$STATUS" 139
f=$(trace_of_exe timeout)
check_trace "timeout re-raising SIGSEGV: timeout's trace" "$f" --expect-end signal
expect_eq "timeout re-raising SIGSEGV: end signal 11" "$(end_field signal "$f")" 11

# (c) python's faulthandler dumps the stack, restores the previous
# handler (SIG_DFL as memsim reported it) and re-raises.
if [ -n "$PY" ]; then
    fresh_out
    crash='import ctypes; ctypes.string_at(0)'
    untraced "$PY" -X faulthandler -c "$crash" >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$PY" -X faulthandler -c "$crash" >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    same_status "python3 faulthandler" "$st" "$plain"
    # (The shell's report of the killed command names the line of the
    # script that ran it, another for each run: unshell keeps the signal.)
    unshell "$TMP/p.err"
    unshell "$TMP/t.err"
    sed 's/0x[0-9a-f]*/0x?/g' "$TMP/p.err" >"$TMP/p.err.s"
    sed 's/0x[0-9a-f]*/0x?/g' "$TMP/t.err" >"$TMP/t.err.s"
    expect_same "python3 faulthandler: same stderr (but the thread's address)" \
        "$TMP/p.err.s" "$TMP/t.err.s"
    f=$(trace_of_exe 'python*')
    check_trace "python3 faulthandler" "$f" --expect-end signal
    expect_eq "python3 faulthandler: end signal 11" "$(end_field signal "$f")" 11
else
    echo "# skip - python3 faulthandler: python3 is not installed"
fi

# (d) A stack overflow: the handler needs a stack of its own.
pair "overflow" "$PROG/overflow"
expect_eq "overflow: status 139" "$STATUS" 139
f=$(only_trace)
check_trace "overflow" "$f" --tag "$TAG" --expect-end signal
expect_eq "overflow: end signal 11" "$(end_field signal "$f")" 11
expect_eq "overflow: every tagged allocation" "$(tc tagged "$f")" 8

# (e) quick_exit runs the at_quick_exit handlers, then _exit.
pair "quick_exit" "$PROG/qexit"
expect_eq "quick_exit: status 5" "$STATUS" 5
f=$(only_trace)
check_trace "quick_exit" "$f" --tag "$TAG" --expect-end quick_exit
expect_eq "quick_exit: end status 5" "$(end_field status "$f")" 5
expect_eq "quick_exit: every tagged allocation" "$(tc tagged "$f")" 8

# ---- 5. signal handlers --------------------------------------------------------------

# (a) fork() from a SIGALRM handler while main allocates (a
# single-threaded program: glibc's fork takes no malloc lock there).
untraced "$PROG/fork_sig" >"$TMP/p.out" 2>&1
expect_eq "fork_sig: natively" "$?:$(cat "$TMP/p.out")" "0:forks=200 failed=0"
runs=5 ok=0 why=""
for i in $(seq "$runs"); do
    fresh_out
    traced "$PROG/fork_sig" >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    if [ "$st" = 0 ] && cmp -s "$TMP/p.out" "$TMP/t.out" && [ ! -s "$TMP/t.err" ]; then
        ok=$((ok + 1))
    else
        hung=$([ "$st" = 124 ] || [ "$st" = 137 ] && echo " (hung ${LIMIT}s)")
        why="run $i: status $st$hung, stdout '$(head -c 100 "$TMP/t.out")'"
        why="$why, stderr '$(head -c 200 "$TMP/t.err")'"
        break # a hang costs $LIMIT seconds: one is enough
    fi
done
if [ "$ok" = "$runs" ]; then
    pass "fork_sig: $runs of $runs runs finish, as natively"
else
    fail "fork_sig: $runs of $runs runs finish, as natively" "$why"
fi

# (b) exit() from a SIGALRM handler in the middle of allocations: it
# ends with status 3, a whole trace and nothing on stderr (an exit that
# waited in vain for its recorder would say "may be incomplete"; how
# soon it ends, natively some 50 ms in, is measured by bench/timing.sh).
untraced "$PROG/exit_sig"
expect_eq "exit_sig: natively, status 3" "$?" 3
runs=30 ok=0 why=""
for i in $(seq "$runs"); do
    fresh_out
    traced "$PROG/exit_sig" >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    f=$(only_trace)
    if [ -z "$f" ]; then
        trace="no trace"
    elif "$TRACECHECK" "$f" >"$f.tc" 2>"$f.tcerr"; then
        trace=""
    else
        trace=$(head -n 2 "$f.tcerr" | tr '\n' ' ' | head -c 200)
    fi
    if [ "$st" = 3 ] && [ ! -s "$TMP/t.out" ] && [ ! -s "$TMP/t.err" ] && [ -z "$trace" ]; then
        ok=$((ok + 1))
    else
        why="run $i: status $st, stderr '$(head -c 200 "$TMP/t.err")'${trace:+; $trace}"
        break
    fi
done
if [ "$ok" = "$runs" ]; then
    pass "exit_sig: $runs of $runs runs end with status 3, a whole trace, nothing on stderr"
else
    fail "exit_sig: $runs runs end with status 3, a whole trace, nothing on stderr" "$why"
fi

# ---- 6. small stacks -----------------------------------------------------------------

# (a) A thread with a PTHREAD_STACK_MIN stack.
pair "small_stack" "$PROG/small_stack"
expect_eq "small_stack: status 0" "$STATUS" 0

# (b) A coroutine on an 8 KiB stack (natively 4 KiB are enough).
untraced "$PROG/coro" 4096 >/dev/null 2>&1
expect_eq "coro: natively, a 4 KiB stack is enough" "$?" 0
pair "coro 8 KiB" "$PROG/coro" 8192
expect_eq "coro 8 KiB: status 0" "$STATUS" 0

# (c) posix_spawn with 40,000 variables from a 256 KiB stack.
pair "spawn_env" "$PROG/spawn_env"
expect_eq "spawn_env: spawned, child exited 0" "$STATUS:$(cat "$TMP/t.out")" "0:spawn=0 child=0"

# (d) The stack memsim adds to one call of each malloc function.
fresh_out
native=$(untraced "$PROG/stack_use")
traced_use=$(traced "$PROG/stack_use")
for when in cold warm; do
    n=$(echo "$native" | sed -n "s/.*$when=\\([0-9]*\\).*/\\1/p")
    t=$(echo "$traced_use" | sed -n "s/.*$when=\\([0-9]*\\).*/\\1/p")
    if [ -n "$n" ] && [ -n "$t" ] && [ $((t - n)) -le 1024 ]; then
        pass "stack_use $when: traced $t bytes, native $n: at most 1 KiB more"
    else
        fail "stack_use $when: at most 1 KiB more than natively" \
            "traced ${t:-?} bytes, native ${n:-?}: $((${t:-0} - ${n:-0})) more"
    fi
done

# ---- 7. clone() without fork ---------------------------------------------------------

TRACE_ENV=MEMSIM_SAMPLE_MS=1
pair "clone_child" "$PROG/clone_child"
TRACE_ENV=
# The parent: the trace whose ppid is no traced process's pid.
parent=""
for f in "$OUT"/memsim.*.jsonl.zst; do
    [ -e "$f" ] || continue
    pp=$(trace_text "$f" | head -n 1 | "$JSONQ" ppid 2>/dev/null)
    for g in "$OUT"/memsim.*.jsonl.zst; do
        trace_text "$g" | head -n 1 | grep -q "^{\"ev\":\"meta\",.*\"pid\":$pp," && continue 2
    done
    parent=$f
done
check_trace "clone_child: the parent's trace" "$parent" --tag "$TAG" --expect-end exit
expect_eq "clone_child: the parent's trace holds the parent's tagged allocations, not the child's" \
    "$(tc tagged "$parent")" 1000
check_traces "clone_child: every trace" --tag "$TAG"

# ---- 8. failed exec in a multithreaded program ---------------------------------------

fresh_out
traced "$PROG/exec_fail" >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
expect_eq "exec_fail: 20 failed execs, status 0" \
    "$st $(sed -n 's/^\(execs_failed=[0-9]* enoent=[0-9]*\) .*/\1/p' "$TMP/t.out")" \
    "0 execs_failed=20 enoent=20"
f=$(only_trace)
check_trace "exec_fail" "$f" --tag "$TAG" --expect-end exit
expect_eq "exec_fail: every tagged allocation of the thread" "$(tc tagged "$f")" \
    "$(sed -n 's/.* tagged=\([0-9]*\)$/\1/p' "$TMP/t.out")"
expect_eq "exec_fail: no unknown frees" "$(tc errors "$f")" 0

# ---- 9. what the program sees --------------------------------------------------------

# (a) Signal dispositions, however they were set, read back as set.
pair "sigdisp" "$PROG/sigdisp"

# (b) A child whose environment the program cleared sees nothing of memsim.
pair "env -i" env -i /usr/bin/env

# ---- 10. miscounted calls ------------------------------------------------------------

# (a) reallocarray(p, 0, n) frees p.
pair "reallocarray0" "$PROG/reallocarray0"
f=$(only_trace)
check_trace "reallocarray0" "$f" --tag "$TAG" --expect-end exit
expect_eq "reallocarray0: live at exit: the 3 leaked blocks (end record, tracecheck)" \
    "$(end_field live_allocations "$f") $(tc live "$f")" "3 3"

# (b) 300 threads, ten at a time.
pair "many_threads" "$PROG/many_threads"
f=$(only_trace)
check_trace "many_threads" "$f" --tag "$TAG" --expect-end exit
expect_eq "many_threads: no unknown frees" "$(tc errors "$f")" 0
expect_eq "many_threads: every tagged allocation" "$(tc tagged "$f")" 1500

# (c) SIGTERM twice in a row to a busy program (a supervisor forwarding
# twice).  The second one comes from the kill program (procps), about a
# millisecond after the shell's builtin sent the first: while memsim's
# handler for the first is at work, not merged with the first while it
# is still pending.  alloc_heavy has two threads (main waits in
# pthread_join), so the second signal is handled on the other thread.
# Natively: status 143, nothing on stderr.  Traced: the same, and a
# complete trace with nothing dropped.
# term_twice OUT: one run, into OUT; sets TERM_STATUS, TERM_ERR (stderr).
term_twice() {
    if [ -n "$1" ]; then
        env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$1" "$PROG/alloc_heavy" 1 3000000 \
            >/dev/null 2>"$TMP/term.err" &
    else
        "$PROG/alloc_heavy" 1 3000000 >/dev/null 2>"$TMP/term.err" &
    fi
    victim=$! # env execs the program: $! is its pid
    if [ -n "$1" ]; then
        wait_handlers "$victim" # memsim's, not a guess of how long start-up takes
    else
        sleep 0.1
    fi
    kill -TERM "$victim"
    env kill -TERM "$victim" 2>/dev/null
    { wait "$victim"; } 2>/dev/null
    TERM_STATUS=$?
    TERM_ERR=$(head -c 200 "$TMP/term.err")
}
term_twice ""
expect_eq "SIGTERM twice: natively, status 143 and nothing on stderr" "$TERM_STATUS:$TERM_ERR" 143:
runs=15 ok=0 why=""
for i in $(seq "$runs"); do
    fresh_out
    term_twice "$OUT"
    f=$(only_trace)
    if [ -z "$f" ]; then
        why="$why run $i: no trace;"
    elif ! "$TRACECHECK" --expect-end signal "$f" >"$f.tc" 2>"$f.tcerr"; then
        why="$why run $i: $(head -n 2 "$f.tcerr" | tr '\n' ' ' | head -c 160);"
    elif [ "$TERM_STATUS" != 143 ] || [ -n "$TERM_ERR" ]; then
        why="$why run $i: status $TERM_STATUS, stderr '$TERM_ERR';"
    else
        ok=$((ok + 1))
    fi
done
if [ "$ok" = "$runs" ]; then
    pass "SIGTERM twice: $runs complete traces, nothing dropped, nothing on stderr"
else
    fail "SIGTERM twice: complete traces, nothing on stderr" \
        "$((runs - ok)) of $runs runs wrong:$(echo "$why" | head -c 500)"
fi

# (d) A realloc that moves its block onto an address another thread frees
# at that moment: the realloc's slot is claimed before its call, the
# free's after, and the free really came first.  With one arena and no
# tcache, blocks go from thread to thread at once (about 10 such races
# in 800,000 calls before the fix: "realloc to an address still live",
# unknown frees).  Three runs; each trace whole.
runs=3 bad=""
for i in $(seq "$runs"); do
    fresh_out
    GLIBC_TUNABLES=glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0 \
        traced "$PROG/realloc_race" 4 200000 >"$TMP/t.out" 2>"$TMP/t.err" || bad="$bad status"
    f=$(only_trace)
    "$TRACECHECK" "$f" >"$TMP/rr.tc" 2>"$TMP/rr.err" || bad="$bad $(head -1 "$TMP/rr.err")"
    u=$(end_field unknown_frees "$f")
    [ "$u" = 0 ] || bad="$bad unknown_frees=$u"
done
expect_eq "realloc_race: $runs traces in order, no unknown frees" "${bad:-none}" none

# ---- 11. the program's limits are its own ------------------------------------------------

# (a) A soft descriptor limit the program lowered to what it uses (4: the
# three standard ones and one): memsim-recorder, a process apart, takes
# the hard one; the program is traced as usual, at once.
# (A recorder waited for in vain would end in "did not start within
# 10 s" on stderr: the checks of stderr see it; bench/timing.sh measures
# how soon these runs end.)
fresh_out
(ulimit -Sn 4; traced "$PROG/heap_mix") >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
"$PROG/heap_mix" >"$TMP/p.out" 2>"$TMP/p.err"
expect_same "ulimit -Sn 4: same stdout" "$TMP/p.out" "$TMP/t.out"
expect_same "ulimit -Sn 4: nothing on stderr" "$TMP/p.err" "$TMP/t.err"
same_status "ulimit -Sn 4" "$st" 0
check_trace "ulimit -Sn 4" "$(only_trace)" --tag "$TAG" --expect-end exit

# (b) A hard limit of 4: the recorder cannot load; one line says why
# (not a wait for it), and the program runs untraced.
fresh_out
(ulimit -n 4; traced "$PROG/heap_mix") >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
expect_same "ulimit -n 4: same stdout" "$TMP/p.out" "$TMP/t.out"
same_status "ulimit -n 4" "$st" 0
expect_one_line "ulimit -n 4: one line" "$TMP/t.err"
expect_grep "ulimit -n 4: names the limit" \
    "^memsim: memsim-recorder cannot load its libraries under the descriptor limit (ulimit -n 4); tracing is off$" \
    "$TMP/t.err"
fresh_out
(ulimit -n 5; traced "$PROG/heap_mix") >"$TMP/t.out" 2>"$TMP/t.err"
expect_grep "ulimit -n 5: the trace's open names the limit" \
    "Too many open files (the descriptor limit, ulimit -n, is 5); tracing is off$" "$TMP/t.err"

# (c) An address-space limit below the arena's full size (65 MiB): the
# arena takes an eighth of the limit, and the program is traced.
fresh_out
(ulimit -v 60000; traced "$PROG/heap_mix") >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
expect_same "ulimit -v 60000: same stdout" "$TMP/p.out" "$TMP/t.out"
expect_same "ulimit -v 60000: nothing on stderr" "$TMP/p.err" "$TMP/t.err"
same_status "ulimit -v 60000" "$st" 0
check_trace "ulimit -v 60000" "$(only_trace)" --tag "$TAG" --expect-end exit

# (d) An address-space limit that leaves the recorder no room to double
# its map of live blocks (2,200,001 live at once, the pointer array
# too; its 64 MiB table takes 1,966,080 at 15/16 full, and the next,
# 128 MiB, does not fit beside it): the program runs as it would, every
# free is in the trace as a free (before, each untracked block's free
# was an unknown free, and the analysis called the block a leak), and
# one line at exit says how many blocks the samples leave out.
limited "ulimit -v 180000, 2.2M live blocks" 180000 \
    "^memsim: .*\\.jsonl\\.zst: the recorder ran out of memory for its live-block map: 233921 blocks were untracked, so its samples undercount the live heap (the heap records are whole)$" \
    "$PROG/many_live" 2200000
f=$(only_trace)
check_trace "ulimit -v 180000, 2.2M live blocks" "$f" --expect-end exit
"$BUILD/memsim-analyze" --no-replay --json "$f" >"$TMP/ml.json" 2>"$TMP/ml.err"
expect_eq "ulimit -v 180000, 2.2M live blocks: the analysis finds no false leak (the stdout buffer only, suppressed)" \
    "$("$JSONQ" summary.leaked_allocations <"$TMP/ml.json") $("$JSONQ" summary.suppressed_leaked_allocations <"$TMP/ml.json") $("$JSONQ" summary.unknown_frees <"$TMP/ml.json")" "0 1 0"
expect_eq "ulimit -v 180000, 2.2M live blocks: the analysis says how many went untracked" \
    "$("$JSONQ" summary.untracked_blocks <"$TMP/ml.json")" 233921
# The analysis itself under a limit too low to follow 2.2M live blocks:
# one line where its memory ran out, and a report that says which
# figures are incomplete (before, wrong leaks and no word).  Without
# sites (--sites 0) no symbols are loaded, on a thread of their own whose
# timing would decide whether they or the live blocks run out first: the
# live blocks are then the one thing that can.
(ulimit -v 100000; "$BUILD/memsim-analyze" --no-replay --sites 0 --json "$f") >"$TMP/ml.lim.json" 2>"$TMP/ml.lim.err"
expect_one_line "memsim-analyze under ulimit -v 100000: one line" "$TMP/ml.lim.err"
expect_grep "memsim-analyze under ulimit -v 100000: the line names the cause and where" \
    "^memsim-analyze: .*\\.jsonl\\.zst:[0-9][0-9]*: out of memory: live blocks from here on are not all tracked; the live heap, its peak, the leaks and the sites are incomplete$" \
    "$TMP/ml.lim.err"
lost=$("$JSONQ" summary.lost_blocks <"$TMP/ml.lim.json")
expect_eq "memsim-analyze under ulimit -v 100000: the blocks it lost are counted ($lost)" \
    "$([ "${lost:-0}" -gt 0 ] && echo yes)" yes
(ulimit -v 100000; "$BUILD/memsim-analyze" --no-replay --sites 0 "$f") >"$TMP/ml.lim.txt" 2>/dev/null
expect_grep "memsim-analyze under ulimit -v 100000: the report says what is incomplete" \
    "^  leaked: .*(incomplete: see above)$" "$TMP/ml.lim.txt"
# With the replay (it needs hundreds of MiB here): when the live blocks
# run out first, the replay stops with them; either way it says where.
(ulimit -v 100000; "$BUILD/memsim-analyze" --sites 0 "$f") >/dev/null 2>"$TMP/ml.lim.err"
expect_grep "memsim-analyze under ulimit -v 100000: the replay says where it stopped" \
    "^memsim-analyze: .*:[0-9][0-9]*: replay: out of memory: the strategies stop here, and every request from here on counts as failed in each$" \
    "$TMP/ml.lim.err"
# Everything at once (symbols, live blocks, the replay, zstd's buffers):
# which runs out first varies with the threads' timing; what holds is a
# report (exit 0), and one line for each thing that ran out, never two.
(ulimit -v 100000; "$BUILD/memsim-analyze" "$f") >"$TMP/ml.all.txt" 2>"$TMP/ml.all.err"
st=$?
expect_eq "memsim-analyze under ulimit -v 100000, symbols too: exit 0 and a report" \
    "$st $(grep -c '^  leaked: ' "$TMP/ml.all.txt")" "0 1"
expect_eq "memsim-analyze under ulimit -v 100000, symbols too: one line per thing that ran out" \
    "$(sed 's/^memsim-analyze: [^ ]*: //' "$TMP/ml.all.err" | sed 's/^\(out of memory[^:]*\|replay[^:]*\):.*/\1/' | sort | uniq -d)" ""
expect_eq "memsim-analyze under ulimit -v 100000, symbols too: only lines of memory run out" \
    "$(grep -v '^memsim-analyze: .*\(out of memory\|not enough memory\)' "$TMP/ml.all.err")" ""

# (e) A program that takes nearly all the address space its limit
# allows, then allocates from 16,384 distinct stacks: memsim's stack
# table in the process has no room to grow.  The program runs as it
# would; the events past the table's room are recorded without their
# stack, and one line at exit says how many (before, they went without
# a word): as many as the trace's allocations with no stack.
limited "ulimit -v 300000, 16,384 stacks" 300000 \
    "^memsim: .*\\.jsonl\\.zst: memsim ran out of memory for its stack table in the process: [0-9]* events were recorded without their stack$" \
    "$PROG/stack_flood"
f=$(only_trace)
check_trace "ulimit -v 300000, 16,384 stacks" "$f" --expect-end exit
said=$(sed -n 's/.*: \([0-9]*\) events were recorded without their stack$/\1/p' "$TMP/lim.err")
nostack=$("$TRACECHECK" --cat "$f" | awk -F, '$1 == "[\"a\"" && $6 + 0 == 0' | wc -l | tr -d ' ')
expect_eq "ulimit -v 300000, 16,384 stacks: the count is the trace's allocations with no stack, some" \
    "$said $([ "${nostack:-0}" -gt 0 ] && echo some)" "$nostack some"
"$BUILD/memsim-analyze" --no-replay --json "$f" >"$TMP/sf.json" 2>/dev/null
expect_eq "ulimit -v 300000, 16,384 stacks: the analysis says how many" \
    "$("$JSONQ" summary.stackless_events <"$TMP/sf.json")" "$nostack"

# beside_recorder NAME RECORDER WHAT PATTERN: libmemsim.so, with the file
# RECORDER beside it as its memsim-recorder, traces heap_mix: the
# program's output and status are its own, and what it prints is one
# line, PATTERN (checked as "NAME: WHAT").
beside_recorder() {
    d="$TMP/beside.$(printf '%s' "$1" | tr -c 'a-z0-9' '-')"
    mkdir -p "$d"
    cp "$LIB" "$d/libmemsim.so"
    cp "$2" "$d/memsim-recorder"
    chmod +x "$d/memsim-recorder"
    fresh_out
    timeout -k 2 "$LIMIT" env LD_PRELOAD="$d/libmemsim.so" MEMSIM_OUTPUT="$OUT" "$PROG/heap_mix" \
        >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_same "$1: same stdout" "$TMP/p.out" "$TMP/t.out"
    same_status "$1" "$st" 0
    expect_one_line "$1: one line" "$TMP/t.err"
    expect_grep "$1: $3" "$4" "$TMP/t.err"
}

# (f) A recorder that cannot start says why in the program's one line
# (what its loader printed), at once.
printf '#!/bin/sh\necho "error while loading shared libraries: libzstd.so.1: cannot open shared object file" >&2\nexit 127\n' \
    >"$TMP/unloadable-recorder"
beside_recorder "a recorder that cannot load" "$TMP/unloadable-recorder" "what its loader said" \
    "^memsim: memsim-recorder could not start: error while loading shared libraries: libzstd.so.1: cannot open shared object file; tracing is off$"

# (g) A recorder of another build (the arena's layout differs) says so in
# the program's one line; the program runs as it would.
if [ -x "$BUILD/tests/memsim-recorder-v2" ]; then
    beside_recorder "a recorder of another build" "$BUILD/tests/memsim-recorder-v2" "says which" \
        "^memsim: memsim-recorder could not start: memsim-recorder: this libmemsim.so is of another memsim version (arena layout 6, this recorder's 2): install both from one build; tracing is off$"
else
    echo "# skip - a recorder of another build: $BUILD/tests/memsim-recorder-v2 is not built"
fi

# ---- 12. the program's time is its own -------------------------------------------------

# glibc's figures (mallinfo2) walk every free chunk of every arena: on a
# heap of 300,000 free chunks a call takes milliseconds, and asked for
# every 10 ms they took 80-99% of the program's time (perl hashing 1.7M
# words: 63 s against 2.3 s).  Now paced to 1% of it: the share is a
# time, measured by bench/timing.sh (frag_heap under libmallinfo-meter.so);
# here the program runs as natively, its trace whole.
fresh_out
untraced "$PROG/frag_heap" 2000000 >"$TMP/p.out" 2>"$TMP/p.err"
traced "$PROG/frag_heap" 2000000 >"$TMP/t.out" 2>"$TMP/t.err"
st=$?
expect_same "frag_heap: same stdout" "$TMP/p.out" "$TMP/t.out"
expect_same "frag_heap: same stderr" "$TMP/p.err" "$TMP/t.err"
same_status "frag_heap" "$st" 0
check_trace "frag_heap" "$(only_trace)" --expect-end exit

summary
