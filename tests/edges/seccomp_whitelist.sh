# A program locks itself in a seccomp whitelist (read, write, the memory
# calls, futex, the exits; anything else kills it), then makes 2M
# allocations.  Natively it prints its checksum and exits 0; traced it
# must too, with a whole trace that holds the allocations made inside
# the sandbox: memsim makes none of the calls the filter forbids
# (sigaltstack, gettid, getrusage, getpid, nanosleep, kill).
# after_sandbox FILE TAG: the compact records of kind TAG after the
# sandbox record.
after_sandbox() {
    trace_text "$1" | awk -v tag="[\"$2\"" '/"ev":"sandbox"/ { s = 1; next }
        s && index($0, tag) == 1 { n++ } END { print n + 0 }'
}
if need_program seccomp_whitelist; then
    n=2000000
    for how in prctl seccomp tsync; do
        pair "seccomp_whitelist $how" "$EDGES/seccomp_whitelist" $how $n
        expect_eq "seccomp_whitelist $how: natively, exit 0 and the checksum" \
            "$PLAIN:$(tail -n 1 "$TMP/p.out")" "0:total 895727310"
        f=$(trace_of_exe seccomp_whitelist)
        check_trace "seccomp_whitelist $how" "$f"
        expect_eq "seccomp_whitelist $how: the trace ends with the exit" \
            "$(end_field reason "$f"):$(end_field status "$f"):$(end_field dropped "$f")" "exit:0:0"
        expect_eq "seccomp_whitelist $how: the sandbox record" \
            "$(trace_text "$f" | grep '"ev":"sandbox"' | "$JSONQ" mode):$(trace_text "$f" |
                grep '"ev":"sandbox"' | "$JSONQ" traced)" "filter:true"
        expect_eq "seccomp_whitelist $how: every allocation made in the sandbox is recorded" \
            "$(after_sandbox "$f" a) $(after_sandbox "$f" r)" "$((n + 1)) $((n / 10))"
    done
    # Threads created inside the sandbox: their set-up (memsim's area,
    # no alternate stack, the id from glibc's descriptor) makes no call
    # the filter forbids.
    pair "seccomp_whitelist threads" "$EDGES/seccomp_whitelist" prctl 400000 4
    expect_eq "seccomp_whitelist threads: natively, exit 0 and the total" \
        "$PLAIN:$(tail -n 1 "$TMP/p.out")" "0:total 179393353"
    f=$(trace_of_exe seccomp_whitelist)
    check_trace "seccomp_whitelist threads" "$f"
    expect_eq "seccomp_whitelist threads: the trace ends with the exit" \
        "$(end_field reason "$f"):$(end_field dropped "$f")" "exit:0"
    expect_eq "seccomp_whitelist threads: six threads (main, the warm-up, four inside), each with its own id" \
        "$(trace_text "$f" | grep '"ev":"thread"' | sed 's/.*"tid":\([0-9]*\).*/\1/' |
            grep -v '^0$' | sort -u | wc -l | tr -d ' ')" 6
    # 400,000, each thread's ring, the vector of TLS modules of each
    # thread but the first (pthread_create's calloc; the first takes the
    # warm-up thread's stack from glibc's cache, its vector with it), the
    # jobs and the thread handles
    expect_eq "seccomp_whitelist threads: every allocation of the threads is recorded" \
        "$(after_sandbox "$f" a)" "$((400000 + 4 + 3 + 2))"
    # glibc reads /proc/sys/vm/overcommit_memory (an openat) the first
    # time a thread's arena shrinks: the program warms that up before
    # its filter, or a thread that shrinks its arena inside the sandbox
    # is killed natively, on timing (which arenas the sandbox's threads
    # reuse).  Cold, one thread of 20,000 allocations always shrinks.
    untraced "$EDGES/seccomp_whitelist" prctl 20000 1 cold >/dev/null 2>&1
    expect_eq "seccomp_whitelist cold: natively killed by the filter (SIGSYS) when an arena first shrinks inside it" "$?" 159
    pair "seccomp_whitelist warm" "$EDGES/seccomp_whitelist" prctl 20000 1
    expect_eq "seccomp_whitelist warm: natively, exit 0 and the total" \
        "$PLAIN:$(tail -n 1 "$TMP/p.out")" "0:total 8972715"
fi
