# Threads with asynchronous cancellation on, cancelled while they
# allocate.  A cancel that landed inside memsim's post left a claim the
# recorder waited for, and every other thread behind it: the program
# hung until SIGKILL.  Natively it runs in well under a second.  Each
# thread must make its first allocation before it turns asynchronous
# cancellation on (glibc sets its heap up there, under locks): gcc had
# dropped that allocation as dead, and once in ~100 loaded runs a cancel
# landed inside the set-up and the program hung, natively as traced
# (libfirstalloc.so counts the threads that did not).
if need_program async_cancel; then
    fresh_out
    untraced env LD_PRELOAD="$EDGES/libfirstalloc.so" "$EDGES/async_cancel" 2 8 >/dev/null 2>"$TMP/f.err"
    expect_eq "async_cancel: each thread allocates before it turns asynchronous cancellation on" \
        "$(cat "$TMP/f.err")" \
        "firstalloc: 0 of 16 threads turned asynchronous cancellation on before their first allocation"
    untraced "$EDGES/async_cancel" 20 8 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$EDGES/async_cancel" 20 8 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "async_cancel: natively, exit 0" "$plain:$(cat "$TMP/p.out")" "0:rounds 20 threads 8"
    same_status "async_cancel" "$st" "$plain"
    expect_same "async_cancel: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "async_cancel: same stderr" "$TMP/p.err" "$TMP/t.err"
    check_traces "async_cancel"
    f=$(trace_of_exe async_cancel)
    expect_eq "async_cancel: the trace ends at exit, nothing dropped" \
        "$(end_field reason "$f"):$(end_field dropped "$f")" "exit:0"
fi
