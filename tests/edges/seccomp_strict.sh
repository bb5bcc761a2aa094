# A program enters seccomp's strict mode (read, write, exit, sigreturn;
# anything else is SIGKILL), makes 100,000 malloc/free pairs, writes its
# checksum and leaves with syscall(SYS_exit).  memsim makes no system
# call of its own from there (none of the ring's wakes and waits, no
# alternate stack, no getpid at the end): the same output and status,
# and a trace that holds the pairs and ends with the exit.  The other
# ends: a SIGSEGV (memsim's handler, which could not end the process as
# the signal would, is withdrawn: the recorder sees it go), exit() (the
# sandbox kills it at exit_group, as natively), a SIGTERM from outside.
# after_sandbox is seccomp_whitelist.sh's, repeated for EDGE=seccomp_strict.
after_sandbox() {
    trace_text "$1" | awk -v tag="[\"$2\"" '/"ev":"sandbox"/ { s = 1; next }
        s && index($0, tag) == 1 { n++ } END { print n + 0 }'
}
# vanished_end FILE: the trace of a process that ended without memsim
# seeing it is finished by its recorder a moment later: wait for its end
# record (60 s at most: a loaded machine).
vanished_end() {
    i=0
    while [ $i -lt 1200 ] && ! trace_text "${1:-/dev/null}" 2>/dev/null | tail -n 1 |
        grep -q '^{"ev":"end"'; do
        sleep 0.05
        i=$((i + 1))
    done
}
if need_program seccomp_strict; then
    n=100000
    for how in prctl seccomp; do
        pair "seccomp_strict $how" "$EDGES/seccomp_strict" $how $n exit
        expect_eq "seccomp_strict $how: natively, exit 0 and the checksum" \
            "$PLAIN:$(cat "$TMP/p.out")" "0:sum 52739800"
        f=$(trace_of_exe seccomp_strict)
        check_trace "seccomp_strict $how" "$f"
        expect_eq "seccomp_strict $how: the trace ends with the exit by system call" \
            "$(end_field reason "$f"):$(end_field status "$f"):$(end_field dropped "$f")" "_exit:0:0"
        expect_eq "seccomp_strict $how: the sandbox record says strict, traced on" \
            "$(trace_text "$f" | grep '"ev":"sandbox"' | "$JSONQ" mode):$(trace_text "$f" |
                grep '"ev":"sandbox"' | "$JSONQ" traced)" "strict:true"
        expect_eq "seccomp_strict $how: every pair made in the sandbox is recorded" \
            "$(after_sandbox "$f" a) $(after_sandbox "$f" f)" "$n $n"
    done
    pair "seccomp_strict segv" "$EDGES/seccomp_strict" prctl 1000 segv
    expect_eq "seccomp_strict segv: natively, killed by SIGSEGV" "$PLAIN" 139
    f=$(trace_of_exe seccomp_strict)
    vanished_end "$f"
    check_trace "seccomp_strict segv" "$f"
    expect_eq "seccomp_strict segv: the recorder ends the trace" \
        "$(end_field reason "$f"):$(after_sandbox "$f" a)" "vanished:1000"
    # Killed by SIGKILL both ways: same_status would take 137 for a
    # timeout, so the time is checked apart: a hang runs into the 60 s
    # limit, a loaded machine's slow start does not.
    fresh_out
    untraced "$EDGES/seccomp_strict" prctl 1000 libc >"$TMP/p.out" 2>/dev/null
    plain=$?
    t0=$(ms_now)
    traced "$EDGES/seccomp_strict" prctl 1000 libc >"$TMP/t.out" 2>/dev/null
    st=$?
    ms=$(($(ms_now) - t0))
    expect_eq "seccomp_strict libc: natively, killed at exit_group" "$plain" 137
    expect_eq "seccomp_strict libc: the same status, in time" \
        "$st:$([ $ms -lt 50000 ] && echo in-time)" "137:in-time"
    expect_same "seccomp_strict libc: same stdout" "$TMP/p.out" "$TMP/t.out"
    f=$(trace_of_exe seccomp_strict)
    vanished_end "$f"
    check_trace "seccomp_strict libc" "$f"
    expect_eq "seccomp_strict libc: no exit recorded that did not happen" \
        "$(end_field reason "$f")" "vanished"
    # killed_when_ready [traced] CMD...: CMD's status once a SIGTERM from
    # outside ended it (sent when it wrote "ready"), plainly or traced.
    # timeout passes the signal on; a shell function in the background
    # would be a subshell of its own, and take it instead.
    killed_when_ready() {
        if [ "$1" = traced ]; then
            shift
            set -- env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$@"
        fi
        # The last run's file goes first: the loop below may look before
        # the background shell has truncated it, and would find its "ready".
        rm -f "$TMP/ready.out"
        timeout -k 2 "$LIMIT" "$@" >"$TMP/ready.out" 2>/dev/null &
        kpid=$!
        i=0
        while ! grep -q ready "$TMP/ready.out" 2>/dev/null && [ $i -lt 1200 ]; do
            sleep 0.05
            i=$((i + 1))
        done
        kill -TERM $kpid
        wait $kpid 2>/dev/null
    }
    fresh_out
    killed_when_ready "$EDGES/seccomp_strict" prctl 1000 term
    plain=$?
    killed_when_ready traced "$EDGES/seccomp_strict" prctl 1000 term
    st=$?
    expect_eq "seccomp_strict term: natively, killed by SIGTERM" "$plain" 143
    same_status "seccomp_strict term" "$st" "$plain"
    f=$(trace_of_exe seccomp_strict)
    vanished_end "$f"
    check_trace "seccomp_strict term" "$f"
    expect_eq "seccomp_strict term: the pairs before the signal are recorded" \
        "$(after_sandbox "$f" a)" 1000
fi
