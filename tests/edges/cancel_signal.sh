# A signal handler that allocates while the thread switches between
# asynchronous and deferred cancellation (tests/edges/cancel_signal.c).
# A handler's hook that came just after the real pthread_setcanceltype
# turned asynchronous cancellation off, before memsim noted it, turned it
# back on: about 1,500 of 3 million switches to deferred read
# asynchronous after, traced (none natively).
if need_program cancel_signal; then
    fresh_out
    untraced "$EDGES/cancel_signal" 3000000 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$EDGES/cancel_signal" 3000000 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "cancel_signal: natively" "$plain:$(cat "$TMP/p.out")" \
        "0:switches 3000000, asynchronous after a switch to deferred: 0"
    same_status "cancel_signal" "$st" "$plain"
    expect_same "cancel_signal: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "cancel_signal: same stderr" "$TMP/p.err" "$TMP/t.err"
    check_traces "cancel_signal"
fi
