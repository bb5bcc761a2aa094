# Threads with asynchronous cancellation on, cancelled while they mark
# phases.  A cancel that landed inside memsim's post of a phase left a
# claim never published; a phase passes no hole, so every message after
# it waited there, the ring filled, and each event of every thread then
# waited a second before it was dropped: 10 rounds of 4 threads ran for
# minutes (natively, and now, in about a second).
if need_program async_phase; then
    fresh_out
    untraced "$EDGES/async_phase" 10 4 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$EDGES/async_phase" 10 4 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "async_phase: natively, exit 0" "$plain:$(cat "$TMP/p.out")" "0:rounds 10 threads 4"
    same_status "async_phase" "$st" "$plain"
    expect_same "async_phase: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "async_phase: same stderr" "$TMP/p.err" "$TMP/t.err"
    check_traces "async_phase"
    f=$(trace_of_exe async_phase)
    expect_eq "async_phase: the trace ends at exit, nothing dropped" \
        "$(end_field reason "$f"):$(end_field dropped "$f")" "exit:0"
fi
